"""Caregivers and their sessions: the owner invites caregivers and viewers, sees the invitations
not yet used (and cancels them), and removes caregivers; each caregiver sees where they are
logged in (device and browser) and ends one session or all of them."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from appliance.audit.days import zone_name
from appliance.web.accounts import grouped
from appliance.web.browsers import described
from appliance.web.shared import Caregiver, Form, Owner, State, WebState, address, page

router = APIRouter()


def _when(at: float, zone: tzinfo) -> str:
    """"Tue 1 Dec 14:02"."""
    moment = datetime.fromtimestamp(at, zone)
    return f"{moment:%a} {moment.day} {moment:%b %H:%M}"


def _people(request: Request, web: WebState, who: Caregiver, **context: Any) -> Response:
    zone = web.zone
    pending = [(i.id, i.role, i.by, _when(i.expires, zone)) for i in web.accounts.invitations()]
    return page(request, "people.html", who=who, people=web.accounts.people(), pending=pending,
                zone=zone_name(zone), **context)


@router.get("/people", response_class=HTMLResponse)
async def people(request: Request, web: State, who: Caregiver) -> Response:
    if who.role != "owner":
        return Response("Only the owner manages caregivers.", 403)
    withdrawn = request.query_params.get("withdrawn") == "1"
    return _people(request, web, who, withdrawn=withdrawn)


@router.post("/people/invite", response_class=HTMLResponse)
async def invite(request: Request, web: State, who: Owner, data: Form) -> Response:
    role = data.get("role", "")
    if role not in ("caregiver", "viewer"):
        return Response("A caregiver or a viewer.", 400)
    code = web.accounts.invite(role, who.name)  # type: ignore[arg-type]
    web.journal.web_access(f"invited_{role}", who.name, address(request))
    return _people(request, web, who, invite=grouped(code), invite_role=role)


@router.post("/people/withdraw")
async def withdraw(request: Request, web: State, who: Owner, data: Form) -> Response:
    """Cancel an invitation not yet used: its code stops working at once."""
    chosen = data.get("invitation", "")
    if chosen.isdigit() and web.accounts.withdraw(int(chosen)):
        web.journal.web_access("withdrew_an_invitation", who.name, address(request))
        return RedirectResponse("/people?withdrawn=1", 303)
    return RedirectResponse("/people", 303)


@router.post("/people/remove", response_class=HTMLResponse)
async def remove(request: Request, web: State, who: Owner, data: Form) -> Response:
    name = data.get("name", "")
    if web.accounts.remove(name):
        web.journal.web_access("revoked", who.name, address(request))
    return RedirectResponse("/people", 303)


@router.get("/sessions", response_class=HTMLResponse)
async def sessions(request: Request, web: State, who: Caregiver) -> Response:
    zone = web.zone
    began = [(s.id, described(s.agent), _when(s.began, zone), s.current)
             for s in web.accounts.sessions_of(who.name, request.cookies.get(web.cookie))]
    return page(request, "sessions.html", who=who, began=began, zone=zone_name(zone),
                ended=request.query_params.get("ended") == "1")


@router.post("/sessions/end-one")
async def end_session(request: Request, web: State, who: Caregiver, data: Form) -> Response:
    """Log out one of this caregiver's sessions (a phone left somewhere, say)."""
    chosen = data.get("session", "")
    if chosen.isdigit() and web.accounts.end_session(who.name, int(chosen)):
        web.journal.web_access("ended_one_of_their_sessions", who.name, address(request))
        return RedirectResponse("/sessions?ended=1", 303)  # this one too, then /login
    return RedirectResponse("/sessions", 303)


@router.post("/sessions/end", response_class=HTMLResponse)
async def end_sessions(request: Request, web: State, who: Caregiver) -> Response:
    """Log out everywhere: every session of this caregiver, this one too."""
    web.accounts.revoke_all(who.name)
    web.journal.web_access("logged_out_everywhere", who.name, address(request))
    response = RedirectResponse("/login", 303)
    response.delete_cookie(web.cookie, path="/")
    return response
