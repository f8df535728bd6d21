"""Caregivers and their sessions: the owner invites and removes caregivers and viewers; each
caregiver sees their own sessions and can end them all."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from appliance.audit.days import zone_name
from appliance.web.shared import Caregiver, Form, Owner, State, address, page

router = APIRouter()


@router.get("/people", response_class=HTMLResponse)
async def people(request: Request, web: State, who: Caregiver) -> Response:
    if who.role != "owner":
        return Response("Only the owner manages caregivers.", 403)
    return page(request, "people.html", who=who, people=web.accounts.people())


@router.post("/people/invite", response_class=HTMLResponse)
async def invite(request: Request, web: State, who: Owner, data: Form) -> Response:
    role = data.get("role", "")
    if role not in ("caregiver", "viewer"):
        return Response("A caregiver or a viewer.", 400)
    code = web.accounts.invite(role, who.name)  # type: ignore[arg-type]
    web.journal.web_access(f"invited_{role}", who.name, address(request))
    return page(request, "people.html", who=who, people=web.accounts.people(),
                invite=code, invite_role=role)


@router.post("/people/remove", response_class=HTMLResponse)
async def remove(request: Request, web: State, who: Owner, data: Form) -> Response:
    name = data.get("name", "")
    if web.accounts.remove(name):
        web.journal.web_access("revoked", who.name, address(request))
    return RedirectResponse("/people", 303)


@router.get("/sessions", response_class=HTMLResponse)
async def sessions(request: Request, web: State, who: Caregiver) -> Response:
    zone = web.zone
    began = [(short, datetime.fromtimestamp(at, zone).strftime("%Y-%m-%d %H:%M"))
             for short, at in web.accounts.sessions_of(who.name)]
    return page(request, "sessions.html", who=who, began=began, zone=zone_name(zone))


@router.post("/sessions/end", response_class=HTMLResponse)
async def end_sessions(request: Request, web: State, who: Caregiver) -> Response:
    """Log out everywhere: every session of this caregiver, this one too."""
    web.accounts.revoke_all(who.name)
    web.journal.web_access("logged_out_everywhere", who.name, address(request))
    response = RedirectResponse("/login", 303)
    response.delete_cookie(web.cookie, path="/")
    return response
