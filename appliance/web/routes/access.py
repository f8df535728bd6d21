"""The way in and out: pairing the owner with the kiosk's code, joining on an invitation,
logging in and out. Pairing, joining and login come before any session, so their forms carry
the pre-session token (`PreSessionForm`) instead of a session's CSRF token."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from appliance.web.accounts import AccountError
from appliance.web.shared import (
    Caregiver,
    PreSessionForm,
    State,
    address,
    page,
    paired,
    plural,
)

router = APIRouter()

NOTICE = "appliance_notice"
NOTICES = {
    "paired": "Paired. Now log in with the name and password you just chose.",
    "joined": "You have joined. Now log in with the name and password you just chose.",
}


def noticed(response: Response, notice: str, secure: bool) -> Response:
    """`response` carrying a one-time word for the login page (a cookie, so the address
    stays /login and a reload does not say it again)."""
    response.set_cookie(NOTICE, notice, max_age=120, httponly=True, samesite="strict",
                        secure=secure, path="/login")
    return response


@router.get("/pair", response_class=HTMLResponse)
async def pair_form(request: Request, web: State) -> Response:
    if web.accounts.has_owner():
        return RedirectResponse("/login", 303)
    if not web.pairing.open:
        web.pairing.new()
    return page(request, "pair.html")


@router.post("/pair", response_class=HTMLResponse)
async def pair(request: Request, web: State, data: PreSessionForm) -> Response:
    if web.accounts.has_owner():
        return Response("Already paired.", 403)
    name = data.get("name", "").strip()
    if not web.pairing.take(data.get("code", "")):
        web.journal.web_access("pairing_failed", name[:40] or "-", address(request))
        if not web.pairing.open:
            web.pairing.new()
        return page(request, "pair.html", 400, error="That code is wrong or too old. "
                    "A new code is on the kiosk now.", name=name)
    try:
        web.accounts.create(name, data.get("password", ""), "owner")
    except AccountError as e:
        web.pairing.new()  # the code was used: the next try needs the kiosk's new one
        return page(request, "pair.html", 400, name=name, error=(
            f"{e} That code is now used up, so the kiosk is saying and showing a new one: "
            "enter the new code with your next try."))
    web.journal.web_access("paired", name, address(request))
    return noticed(RedirectResponse("/login", 303), "paired", web.secure)


@router.get("/join", response_class=HTMLResponse)
async def join_form(request: Request) -> Response:
    return page(request, "join.html")


@router.post("/join", response_class=HTMLResponse)
async def join(request: Request, web: State, data: PreSessionForm) -> Response:
    name = data.get("name", "").strip()
    try:
        role = web.accounts.join(data.get("code", "")[:80], name, data.get("password", ""),
                                 address(request))
    except AccountError as e:
        return page(request, "join.html", 400, error=str(e), name=name)
    web.journal.web_access(f"joined_as_{role}", name, address(request))
    return noticed(RedirectResponse("/login", 303), "joined", web.secure)


@router.get("/login", response_class=HTMLResponse, dependencies=[Depends(paired)])
async def login_form(request: Request, web: State) -> Response:
    notice = NOTICES.get(request.cookies.get(NOTICE, ""), "")
    shown = page(request, "login.html", notice=notice)
    if notice:  # said once, not on every visit
        shown.delete_cookie(NOTICE, path="/login", secure=web.secure, httponly=True,
                            samesite="strict")
    return shown


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request, web: State, data: PreSessionForm) -> Response:
    name, where = data.get("name", "").strip(), address(request)
    wait = web.accounts.wait_s(name, where)
    if wait > 0:
        seconds = int(wait) + 1
        refused = page(request, "login.html", 429, name=name,
                       error=f"Too many tries. Please wait {plural(seconds, 'second')}.")
        refused.headers["Retry-After"] = str(seconds)
        return refused
    token = web.accounts.login(name, data.get("password", ""), where,
                               request.headers.get("user-agent", ""))
    if token is None:
        web.journal.web_access("login_failed", name[:40] or "-", where)
        return page(request, "login.html", 400, name=name,
                    error="That name and password do not match.")
    web.journal.web_access("logged_in", name, where)
    response = RedirectResponse("/", 303)
    response.set_cookie(web.cookie, token, httponly=True, samesite="strict",
                        secure=web.secure, path="/")
    return response


@router.post("/logout")
async def logout(request: Request, web: State, who: Caregiver) -> Response:
    web.accounts.logout(request.cookies.get(web.cookie, ""))
    web.journal.web_access("logged_out", who.name, address(request))
    response = RedirectResponse("/login", 303)
    response.delete_cookie(web.cookie, path="/")
    return response
