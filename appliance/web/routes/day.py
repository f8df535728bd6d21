"""The day and its turns: today's page and its live feed, one turn, the week, a day's report,
the replay."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response, StreamingResponse

from appliance.audit.replay import replay_journal
from appliance.audit.timeline import AuditQueryError, NoSuchTurn, parse_since, timeline
from appliance.journal.application import Journal
from appliance.web.day import Filter, day_lines, one_day
from appliance.web.shared import (
    Caregiver,
    State,
    can_change,
    page,
    paired,
    session_of,
    templates,
)
from appliance.web.turn_view import more
from appliance.web.week import bars, week

LIVE_POLL_S = 0.1

router = APIRouter()


def undoable(journal: Journal) -> str:
    """The short id of the turn an undo would take back now, or ""."""
    stack = journal.undo_stack()
    return stack[0].id.hex[:8] if stack else ""


@router.get("/", response_class=HTMLResponse, dependencies=[Depends(paired)])
async def today(request: Request, web: State, who: Caregiver) -> Response:
    query = request.query_params
    before = query.get("before", "")
    wanted = Filter(day=query.get("day", "")[:10], outcome=query.get("outcome", "")[:20],
                    trigger=query.get("trigger", "")[:20], problems="problems" in query)
    shown = day_lines(web.journal, before=int(before) if before.isdigit() else None,
                      shown=wanted)
    return page(request, "today.html", who=who, lines=shown.lines, older=shown.older,
                live=not before and not wanted.active, wanted=wanted,
                kept=urlencode({k: v for k, v in query.items() if k != "before"}),
                undo=undoable(web.journal) if can_change(who) else "")


@router.get("/turn/{turn_id}", response_class=HTMLResponse)
async def turn(request: Request, turn_id: str, web: State, who: Caregiver) -> Response:
    try:
        rows = timeline(web.journal, turn=turn_id)
    except NoSuchTurn:
        return page(request, "message.html", 404, who=who, title="No such turn",
                    message="There is no turn with that id.")
    for row in rows:
        row["more"] = more(row["event"], row["data"])
    undo = undoable(web.journal) if can_change(who) else ""
    return page(request, "turn.html", who=who, rows=rows, turn_id=turn_id[:8],
                undo=undo if undo and undo == rows[0]["turn"] else "")


@router.get("/week", response_class=HTMLResponse)
async def week_page(request: Request, web: State, who: Caregiver) -> Response:
    days = week(web.journal)
    return page(request, "week.html", who=who, days=days, chart=bars(days))


@router.get("/report", response_class=HTMLResponse)
async def report(request: Request, web: State, who: Caregiver) -> Response:
    """A plain page of one day, to print or keep."""
    try:
        day = parse_since(request.query_params.get("day", "") or "today")
    except AuditQueryError as e:
        return page(request, "message.html", 400, who=who, title="Day report", message=str(e))
    day = (day or datetime.now(UTC)).replace(hour=0, minute=0, second=0, microsecond=0)
    return page(request, "report.html", who=who, day=day.date().isoformat(),
                lines=one_day(web.journal, day))


@router.get("/replay", response_class=HTMLResponse)
async def replay(request: Request, web: State, who: Caregiver) -> Response:
    since = request.query_params.get("since", "")
    if not since:
        return page(request, "replay.html", who=who, since="today")
    try:
        report = replay_journal(web.journal, since=parse_since(since))
    except AuditQueryError as e:
        return page(request, "replay.html", 400, who=who, since=since, error=str(e))
    return page(request, "replay.html", who=who, since=since, report=report)


@router.get("/events")
async def events(request: Request, web: State) -> Response:
    """Server-sent events: 'day' whenever the journal grows (any process may write it). A
    stream, not a page: without a session it says so (401) rather than redirect."""
    if session_of(request) is None:
        return Response("Please log in.", 401)
    pages = templates(request)

    async def stream() -> AsyncIterator[str]:
        seen = web.journal.recorder.max_notification_id() or 0
        yield ": connected\n\n"
        while not await request.is_disconnected():
            await asyncio.sleep(LIVE_POLL_S)
            who = session_of(request)
            if who is None:  # logged out or revoked meanwhile
                return
            newest = web.journal.recorder.max_notification_id() or 0
            if newest != seen:
                seen = newest
                html = pages.get_template("_day.html").render(
                    lines=day_lines(web.journal).lines,
                    undo=undoable(web.journal) if can_change(who) else "")
                data = "".join(f"data: {line}\n" for line in html.splitlines())
                yield f"event: day\n{data}\n"

    return StreamingResponse(stream(), media_type="text/event-stream")
