"""Undo from the page: the newest undoable turn only, through the same `Session` path as when
the person says "undo that", journaled as the caregiver's."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from appliance.audit.story import CAREGIVER_DEVICE, CAREGIVER_UNDO
from appliance.journal.application import Journal
from appliance.session import TurnReport
from appliance.turn import Turn
from appliance.web.handoff import post_note
from appliance.web.shared import CanChange, Caregiver, State, WebState, can_change, page
from appliance.wiring import grammar_planner, new_session, opened_desktop

NOT_UNDOABLE = (
    "Only the most recent change can be undone from here, and that is not it (or it was "
    "undone already)."
)

router = APIRouter()


def newest_undoable(journal: Journal, turn_id: str) -> Turn | None:
    """The turn, if it is the one an undo would take back now (the newest undoable)."""
    stack = journal.undo_stack()
    wanted = turn_id.replace("-", "").lower()
    if not stack or len(wanted) < 8 or not stack[0].id.hex.startswith(wanted):
        return None
    return stack[0]


def undo_as(state: WebState, caregiver: str) -> TurnReport:
    """'Undo that', through the same Session path as when the person says it, on the screen
    the turn changed, journaled as the caregiver's."""
    with opened_desktop(state.desktop) as desktop:
        session = new_session(state.journal, desktop, grammar_planner(),
                              device=f"{CAREGIVER_DEVICE}{caregiver}")
        return session.say(CAREGIVER_UNDO, trigger="web", engine="web")


@router.get("/undo/{turn_id}", response_class=HTMLResponse)
async def undo_form(request: Request, turn_id: str, web: State, who: Caregiver) -> Response:
    target = newest_undoable(web.journal, turn_id)
    if target is None or not can_change(who):
        return page(request, "message.html", 409, who=who, title="Nothing to undo here",
                    message=NOT_UNDOABLE)
    return page(request, "undo.html", who=who, turn_id=turn_id[:8],
                what=target.spoken[-1] if target.spoken else "the last change")


@router.post("/undo/{turn_id}", response_class=HTMLResponse)
async def undo(request: Request, turn_id: str, web: State, who: CanChange) -> Response:
    target = newest_undoable(web.journal, turn_id)
    if target is None:
        return page(request, "message.html", 409, who=who, title="Nothing to undo here",
                    message=NOT_UNDOABLE)
    what = target.spoken[-1] if target.spoken else "the last change"
    report = undo_as(web, who.name)
    if report.decision == "undone" and web.notes is not None:
        post_note(web.notes, f"{who.name} undid: {what}")
    # POST/redirect/GET: a reload shows the undo's own turn again, never undoes a second time.
    return RedirectResponse(f"/turn/{report.turn_id.replace('-', '')[:8]}", 303)
