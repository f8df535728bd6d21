"""What every router of the caregiver page shares: the state `appliance serve` built (kept on
`app.state`), the page renderer, the form reader and the one login dependency."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qs

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from appliance.audit.days import zone_of
from appliance.audit.tally import DayTally
from appliance.health.heartbeat import Liveness
from appliance.journal.application import Journal
from appliance.web.accounts import Accounts, LoginSession, Role
from appliance.web.health import Check, kiosk_now
from appliance.web.pairing import PairingOffer

if TYPE_CHECKING:
    from appliance.fleet.central_store import CentralStore

PRE_CSRF = "appliance_form"


@dataclass
class WebState:
    journal: Journal
    accounts: Accounts
    pairing: PairingOffer
    secure: bool  # served over TLS: cookies are Secure and carry the __Host- prefix
    desktop: str = "atspi"  # the screen an undo acts on, as `appliance say --desktop` names it
    notes: Path | None = None  # where the kiosk picks up what to announce
    enrol: Path | None = None  # where the kiosk picks up a caregiver's "learn her voice now"
    folder: Path = Path(".")  # where the journal and web.sqlite live (for disk space)
    verified: Check | None = None  # the last journal check run from the page
    verified_at: float = 0.0  # when it ran (Unix seconds)
    fleet: CentralStore | None = None  # the central server's database (--central-db)
    tally: DayTally = field(default_factory=DayTally)  # the day's counts, kept up to date
    clock: Callable[[], float] = time.time  # "now" for the kiosk's heartbeat (a test's own)
    voice: Path | None = None  # the person's voice profile beside the journal (None: none here)

    def kiosk(self) -> Liveness | None:
        """Whether the kiosk is listening now; None at a central server, which has no kiosk."""
        if self.fleet is not None:
            return None
        return kiosk_now(self.folder, self.clock(), self.zone)[1]

    @property
    def zone(self) -> tzinfo:
        """The time zone the caregiver chose (Settings' `time_zone`), else the system's."""
        return zone_of(self.journal.settings().time_zone)

    @property
    def cookie(self) -> str:
        # __Host- requires Secure, which plain loopback HTTP cannot give.
        return "__Host-appliance" if self.secure else "appliance_session"


class Refusal(Exception):
    """The answer a dependency gives instead of the route's own (create_app sends it as is)."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def web_state(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


def templates(request: Request) -> Jinja2Templates:
    pages: Jinja2Templates = request.app.state.pages
    return pages


State = Annotated[WebState, Depends(web_state)]


async def form(request: Request) -> dict[str, str]:
    body = (await request.body()).decode("utf-8", "replace")
    return {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}


Form = Annotated[dict[str, str], Depends(form)]


def address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def plural(count: int, word: str) -> str:
    """'1 second', '2 seconds'."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    token = request.cookies.get(PRE_CSRF) or secrets.token_urlsafe(24)
    if context.get("who") is not None and "kiosk" not in context:
        context["kiosk"] = web_state(request).kiosk()  # the banner every signed-in page has
    response = templates(request).TemplateResponse(
        request, template, {"form_token": token, **context}, status_code=status)
    response.set_cookie(PRE_CSRF, token, httponly=True, samesite="strict",
                        secure=web_state(request).secure, path="/")
    return response


async def pre_session_form(request: Request, data: Form) -> dict[str, str]:
    """A form sent before any session (pairing, joining, login): refused unless its token
    matches its cookie."""
    cookie = request.cookies.get(PRE_CSRF, "")
    if cookie and secrets.compare_digest(cookie, data.get("form_token", "")):
        return data
    raise Refusal(Response("The form was out of date; please load the page again.", 403))


PreSessionForm = Annotated[dict[str, str], Depends(pre_session_form)]


def paired(request: Request) -> None:
    """Until an owner is paired, the pages that need one send the visitor to pairing."""
    if not web_state(request).accounts.has_owner():
        raise Refusal(RedirectResponse("/pair", 303))


def session_of(request: Request) -> LoginSession | None:
    """The session the request's cookie names, if it is open."""
    state = web_state(request)
    return state.accounts.session(request.cookies.get(state.cookie))


def can_change(who: LoginSession) -> bool:
    return who.role in ("owner", "caregiver")


class SignedInCaregiver:
    """The login dependency: the caregiver behind a request, of one of `roles` (any when none).

    A page asked for (GET) without a session goes to the login page. A form sent (POST) is
    refused with 403 "Refused." unless it comes with a session, that session's CSRF token in
    its `csrf` field, and one of the roles."""

    def __init__(self, *roles: Role) -> None:
        self.roles = roles

    async def __call__(self, request: Request) -> LoginSession:
        who = session_of(request)
        if request.method == "GET":
            if who is None:
                raise Refusal(RedirectResponse("/login", 303))
        else:
            data = await form(request)
            if who is None or not secrets.compare_digest(who.csrf, data.get("csrf", "")):
                raise Refusal(Response("Refused.", 403))
        if self.roles and who.role not in self.roles:
            raise Refusal(Response("Refused.", 403))
        return who


signed_in_caregiver = SignedInCaregiver()  # owner, caregiver or viewer
Caregiver = Annotated[LoginSession, Depends(signed_in_caregiver)]
CanChange = Annotated[LoginSession, Depends(SignedInCaregiver("owner", "caregiver"))]
Owner = Annotated[LoginSession, Depends(SignedInCaregiver("owner"))]
