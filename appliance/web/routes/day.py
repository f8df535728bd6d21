"""The day and its turns: today's page and its live feed, one turn, the week, a day's report,
the replay."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response, StreamingResponse

from appliance.audit.days import (
    day_span,
    long_day,
    on_day,
    said_day,
    today_in,
    zone_name,
)
from appliance.audit.replay import replay_journal
from appliance.audit.story import story_of, told_between
from appliance.audit.tally import DayCounts
from appliance.audit.timeline import NoSuchTurn
from appliance.journal.application import Journal
from appliance.web.day import TRIGGERS, Filter, day_view
from appliance.web.shared import (
    Caregiver,
    State,
    WebState,
    can_change,
    page,
    paired,
    session_of,
    templates,
)
from appliance.web.week import bars, week
from appliance.web.when import Unreadable, read_day, read_since

LIVE_POLL_S = 0.1

router = APIRouter()


def undoable(journal: Journal) -> str:
    """The short id of the turn an undo would take back now, or ""."""
    stack = journal.undo_stack()
    return stack[0].id.hex[:8] if stack else ""


def _undo_for(web: WebState, can: bool) -> str:
    return undoable(web.journal) if can else ""


@router.get("/", response_class=HTMLResponse, dependencies=[Depends(paired)])
async def today(request: Request, web: State, who: Caregiver) -> Response:
    query = request.query_params
    before = query.get("before", "")
    zone = web.zone
    wanted, problem = Filter.asked(query, today_in(zone))
    view = day_view(web.journal, web.tally, zone, wanted,
                    before=int(before) if before.isdigit() else None,
                    undo=_undo_for(web, can_change(who)))
    written = long_day(wanted.day) if wanted.day else query.get("day", "")[:80]
    return page(request, "today.html", who=who, view=view, problem=problem, day_written=written,
                live=not before and not wanted.active, triggers=TRIGGERS, zone=zone_name(zone),
                kept=urlencode({k: v for k, v in query.items() if k != "before"}))


@router.get("/turn/{turn_id}", response_class=HTMLResponse)
async def turn(request: Request, turn_id: str, web: State, who: Caregiver) -> Response:
    try:
        story = story_of(web.journal, turn_id, web.zone)
    except NoSuchTurn:
        return page(request, "message.html", 404, who=who, title="No such turn",
                    message="There is no turn with that id.")
    undo = _undo_for(web, can_change(who))
    return page(request, "turn.html", who=who, story=story, title=story.title,
                undo=undo if undo and undo == story.short else "")


@router.get("/week", response_class=HTMLResponse)
async def week_page(request: Request, web: State, who: Caregiver) -> Response:
    days = week(web.journal, web.zone)
    return page(request, "week.html", who=who, days=days, chart=bars(days))


@router.get("/report", response_class=HTMLResponse)
async def report(request: Request, web: State, who: Caregiver) -> Response:
    """A plain page of one day, to print or keep."""
    zone = web.zone
    today = today_in(zone)
    try:
        day = read_day(request.query_params.get("day", "")[:80], today)
    except Unreadable as e:
        return page(request, "message.html", 400, who=who, title="Day report", message=str(e))
    found = told_between(web.journal, *day_span(day, zone), zone)
    said = said_day(day, today)
    return page(request, "report.html", who=who, day=day, said=said, found=found,
                long_day=long_day(day),
                title=f"Day report: {said}", zone=zone_name(zone),
                counts=DayCounts.of(day, found), counted=on_day(day, today))


@router.get("/replay", response_class=HTMLResponse)
async def replay(request: Request, web: State, who: Caregiver) -> Response:
    since = request.query_params.get("since", "")
    if not since:
        return page(request, "replay.html", who=who, since="today")
    try:
        report = replay_journal(web.journal, since=read_since(since[:80], web.zone))
    except Unreadable as e:
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
                html = pages.get_template("_day.html").render(view=day_view(
                    web.journal, web.tally, web.zone, undo=_undo_for(web, can_change(who))))
                data = "".join(f"data: {line}\n" for line in html.splitlines())
                yield f"event: day\n{data}\n"

    return StreamingResponse(stream(), media_type="text/event-stream")
