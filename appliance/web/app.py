"""The caregiver web app: Starlette routes, server-rendered Jinja2 pages, htmx + SSE, no
inline script. Every page needs a session except pairing (until an owner exists) and login."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from appliance.audit.replay import replay_journal
from appliance.audit.timeline import AuditQueryError, NoSuchTurn, parse_since, timeline
from appliance.journal.application import Journal
from appliance.session import Session as SessionRunner
from appliance.session import TurnReport
from appliance.turn import Turn
from appliance.web.accounts import AccountError, Accounts, Session
from appliance.web.day import Filter, day_lines, lines_of, one_day
from appliance.web.export import as_csv, as_jsonl, rows
from appliance.web.handoff import post_note
from appliance.web.health import Check, checks, verify

if TYPE_CHECKING:
    from appliance.fleet.central_store import CentralStore
from appliance.web.pairing import PairingOffer
from appliance.web.settings_form import changes, fields
from appliance.web.turn_view import more
from appliance.web.week import bars, week

HERE = Path(__file__).parent
PRE_CSRF = "appliance_form"
LIVE_POLL_S = 0.1
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


@dataclass
class WebState:
    journal: Journal
    accounts: Accounts
    pairing: PairingOffer
    secure: bool  # served over TLS: cookies are Secure and carry the __Host- prefix
    desktop: str = "atspi"  # the screen an undo acts on, as `appliance say --desktop` names it
    notes: Path | None = None  # where the kiosk picks up what to announce
    folder: Path = Path(".")  # where the journal and web.sqlite live (for disk space)
    verified: Check | None = None  # the last journal check run from the page
    fleet: CentralStore | None = None  # the central server's database (--central-db)

    @property
    def cookie(self) -> str:
        # __Host- requires Secure, which plain loopback HTTP cannot give.
        return "__Host-appliance" if self.secure else "appliance_session"


class _LogInFirst(Exception):
    """A page asked for without a session."""


NOT_UNDOABLE = (
    "Only the most recent change can be undone from here, and that is not it (or it was "
    "undone already)."
)


def _undoable(journal: Journal) -> str:
    stack = journal.undo_stack()
    return stack[0].id.hex[:8] if stack else ""


def _newest_undoable(journal: Journal, turn_id: str) -> Turn | None:
    """The turn, if it is the one an undo would take back now (the newest undoable)."""
    stack = journal.undo_stack()
    wanted = turn_id.replace("-", "").lower()
    if not stack or len(wanted) < 8 or not stack[0].id.hex.startswith(wanted):
        return None
    return stack[0]


def undo_as(state: WebState, caregiver: str) -> TurnReport:
    """'Undo that', through the same Session path as when the person says it, on the screen
    the turn changed, journaled as the caregiver's."""
    from appliance.intents.grammar import GrammarPlanner
    from appliance.wiring import opened_desktop

    with opened_desktop(state.desktop) as desktop:
        session = SessionRunner(state.journal, desktop, GrammarPlanner(),
                                device=f"web:{caregiver}")
        return session.say("undo that", trigger="web", engine="web")


def create_app(state: WebState) -> FastAPI:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    pages = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes .html
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    pages.env.globals["fleet_page"] = state.fleet is not None

    @app.middleware("http")
    async def headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        for key, value in HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    def address(request: Request) -> str:
        return request.client.host if request.client else "unknown"

    def session(request: Request) -> Session | None:
        return state.accounts.session(request.cookies.get(state.cookie))

    def signed_in(request: Request) -> Session:
        """The caregiver looking at a page; without a session, off to the login page."""
        who = session(request)
        if who is None:
            raise _LogInFirst
        return who

    async def log_in_first(_request: Request, _exc: Exception) -> Response:
        return RedirectResponse("/login", 303)

    app.add_exception_handler(_LogInFirst, log_in_first)

    async def form(request: Request) -> dict[str, str]:
        body = (await request.body()).decode("utf-8", "replace")
        return {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}

    def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        token = request.cookies.get(PRE_CSRF) or secrets.token_urlsafe(24)
        response = pages.TemplateResponse(request, template, {"form_token": token, **context},
                                          status_code=status)
        response.set_cookie(PRE_CSRF, token, httponly=True, samesite="strict",
                            secure=state.secure, path="/")
        return response

    def stale(request: Request, data: dict[str, str]) -> Response | None:
        """Forms before a session (pairing, joining, login): the form's token must match its
        cookie, else the refusal to send."""
        cookie = request.cookies.get(PRE_CSRF, "")
        if cookie and secrets.compare_digest(cookie, data.get("form_token", "")):
            return None
        return Response("The form was out of date; please load the page again.", 403)

    @app.get("/", response_class=HTMLResponse)
    async def today(request: Request) -> Response:
        if not state.accounts.has_owner():
            return RedirectResponse("/pair", 303)
        who = signed_in(request)
        query = request.query_params
        before = query.get("before", "")
        wanted = Filter(day=query.get("day", "")[:10], outcome=query.get("outcome", "")[:20],
                        trigger=query.get("trigger", "")[:20], problems="problems" in query)
        shown = day_lines(state.journal, before=int(before) if before.isdigit() else None,
                          shown=wanted)
        return page(request, "today.html", who=who, lines=shown.lines, older=shown.older,
                    live=not before and not wanted.active, wanted=wanted,
                    kept=urlencode({k: v for k, v in query.items() if k != "before"}),
                    undo=_undoable(state.journal) if can_change(who) else "")

    @app.get("/turn/{turn_id}", response_class=HTMLResponse)
    async def turn(request: Request, turn_id: str) -> Response:
        who = signed_in(request)
        try:
            rows = timeline(state.journal, turn=turn_id)
        except NoSuchTurn:
            return page(request, "message.html", 404, who=who, title="No such turn",
                        message="There is no turn with that id.")
        for row in rows:
            row["more"] = more(row["event"], row["data"])
        undo = _undoable(state.journal) if can_change(who) else ""
        return page(request, "turn.html", who=who, rows=rows, turn_id=turn_id[:8],
                    undo=undo if undo and undo == rows[0]["turn"] else "")

    def can_change(who: Session) -> bool:
        return who.role in ("owner", "caregiver")

    async def checked(request: Request) -> tuple[Session | None, dict[str, str]]:
        """The session of a state-changing request whose form carries its CSRF token."""
        who, data = session(request), await form(request)
        if who is None or not secrets.compare_digest(who.csrf, data.get("csrf", "")):
            return None, data
        return who, data

    @app.get("/settings", response_class=HTMLResponse)
    async def settings_page(request: Request) -> Response:
        who = signed_in(request)
        return page(request, "settings.html", who=who, can_change=can_change(who),
                    fields=fields(state.journal.settings()))

    @app.post("/settings", response_class=HTMLResponse)
    async def settings_save(request: Request) -> Response:
        who, data = await checked(request)
        if who is None:
            return Response("Refused.", 403)
        if not can_change(who):
            return Response("A viewer cannot change settings.", 403)
        current = state.journal.settings()
        changed, errors = changes(current, data)
        if errors:  # nothing is saved until every field is right
            return page(request, "settings.html", 400, who=who, can_change=True,
                        errors=errors, fields=fields(current, errors, data))
        for key, value in changed.items():
            state.journal.change_setting(key, value, by=who.name)
        if "transcript_days" in changed:
            state.journal.apply_retention(by=who.name)
        return page(request, "settings.html", who=who, can_change=True, saved=list(changed),
                    fields=fields(state.journal.settings()))

    @app.get("/people", response_class=HTMLResponse)
    async def people(request: Request) -> Response:
        who = signed_in(request)
        if who.role != "owner":
            return Response("Only the owner manages caregivers.", 403)
        return page(request, "people.html", who=who, people=state.accounts.people())

    @app.post("/people/invite", response_class=HTMLResponse)
    async def invite(request: Request) -> Response:
        who, data = await checked(request)
        if who is None or who.role != "owner":
            return Response("Refused.", 403)
        role = data.get("role", "")
        if role not in ("caregiver", "viewer"):
            return Response("A caregiver or a viewer.", 400)
        code = state.accounts.invite(role, who.name)  # type: ignore[arg-type]
        state.journal.web_access(f"invited_{role}", who.name, address(request))
        return page(request, "people.html", who=who, people=state.accounts.people(),
                    invite=code, invite_role=role)

    @app.post("/people/remove", response_class=HTMLResponse)
    async def remove(request: Request) -> Response:
        who, data = await checked(request)
        if who is None or who.role != "owner":
            return Response("Refused.", 403)
        name = data.get("name", "")
        if state.accounts.remove(name):
            state.journal.web_access("revoked", who.name, address(request))
        return RedirectResponse("/people", 303)

    @app.get("/sessions", response_class=HTMLResponse)
    async def sessions(request: Request) -> Response:
        who = signed_in(request)
        began = [(short, datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M"))
                 for short, at in state.accounts.sessions_of(who.name)]
        return page(request, "sessions.html", who=who, began=began)

    @app.post("/sessions/end", response_class=HTMLResponse)
    async def end_sessions(request: Request) -> Response:
        """Log out everywhere: every session of this caregiver, this one too."""
        who, _data = await checked(request)
        if who is None:
            return Response("Refused.", 403)
        state.accounts.revoke_all(who.name)
        state.journal.web_access("logged_out_everywhere", who.name, address(request))
        response = RedirectResponse("/login", 303)
        response.delete_cookie(state.cookie, path="/")
        return response

    @app.get("/join", response_class=HTMLResponse)
    async def join_form(request: Request) -> Response:
        return page(request, "join.html")

    @app.post("/join", response_class=HTMLResponse)
    async def join(request: Request) -> Response:
        data = await form(request)
        if (refused := stale(request, data)) is not None:
            return refused
        name = data.get("name", "").strip()
        try:
            role = state.accounts.join(data.get("code", ""), name, data.get("password", ""))
        except AccountError as e:
            return page(request, "join.html", 400, error=str(e), name=name)
        state.journal.web_access(f"joined_as_{role}", name, address(request))
        return RedirectResponse("/login", 303)

    @app.get("/undo/{turn_id}", response_class=HTMLResponse)
    async def undo_form(request: Request, turn_id: str) -> Response:
        who = signed_in(request)
        target = _newest_undoable(state.journal, turn_id)
        if target is None or not can_change(who):
            return page(request, "message.html", 409, who=who, title="Nothing to undo here",
                        message=NOT_UNDOABLE)
        return page(request, "undo.html", who=who, turn_id=turn_id[:8],
                    what=target.spoken[-1] if target.spoken else "the last change")

    @app.post("/undo/{turn_id}", response_class=HTMLResponse)
    async def undo(request: Request, turn_id: str) -> Response:
        who, _data = await checked(request)
        if who is None or not can_change(who):
            return Response("Refused.", 403)
        target = _newest_undoable(state.journal, turn_id)
        if target is None:
            return page(request, "message.html", 409, who=who, title="Nothing to undo here",
                        message=NOT_UNDOABLE)
        what = target.spoken[-1] if target.spoken else "the last change"
        report = undo_as(state, who.name)
        if report.decision == "undone" and state.notes is not None:
            post_note(state.notes, f"{who.name} undid: {what}")
        return page(request, "message.html", who=who, title="Undo",
                    message=report.spoken or "Nothing was done.")

    @app.get("/week", response_class=HTMLResponse)
    async def week_page(request: Request) -> Response:
        who = signed_in(request)
        days = week(state.journal)
        return page(request, "week.html", who=who, days=days, chart=bars(days))

    @app.get("/report", response_class=HTMLResponse)
    async def report(request: Request) -> Response:
        """A plain page of one day, to print or keep."""
        who = signed_in(request)
        try:
            day = parse_since(request.query_params.get("day", "") or "today")
        except AuditQueryError as e:
            return page(request, "message.html", 400, who=who, title="Day report",
                        message=str(e))
        day = (day or datetime.now(UTC)).replace(hour=0, minute=0, second=0, microsecond=0)
        return page(request, "report.html", who=who, day=day.date().isoformat(),
                    lines=one_day(state.journal, day))

    @app.get("/replay", response_class=HTMLResponse)
    async def replay(request: Request) -> Response:
        who = signed_in(request)
        since = request.query_params.get("since", "")
        if not since:
            return page(request, "replay.html", who=who, since="today")
        try:
            report = replay_journal(state.journal, since=parse_since(since))
        except AuditQueryError as e:
            return page(request, "replay.html", 400, who=who, since=since, error=str(e))
        return page(request, "replay.html", who=who, since=since, report=report)

    @app.get("/health", response_class=HTMLResponse)
    async def health(request: Request) -> Response:
        who = signed_in(request)
        return page(request, "health.html", who=who,
                    checks=checks(state.journal, state.folder, state.verified))

    @app.get("/fleet", response_class=HTMLResponse)
    async def fleet(request: Request) -> Response:
        """Every kiosk of the central server, read only (`appliance serve --central-db`)."""
        who = signed_in(request)
        if state.fleet is None:
            return page(request, "message.html", 404, who=who, title="No fleet",
                        message="This page is not connected to a central server.")
        return page(request, "fleet.html", who=who, title="Fleet", kiosks=state.fleet.overview())

    @app.get("/fleet/{kiosk}", response_class=HTMLResponse)
    async def fleet_kiosk(request: Request, kiosk: str) -> Response:
        """One kiosk's latest commands as the central copy has them (its words stay there
        unless its caregiver let them leave)."""
        from appliance.fleet.central_timeline import recent_rows

        who = signed_in(request)
        known = {k["kiosk"] for k in state.fleet.overview()} if state.fleet else set()
        if state.fleet is None or kiosk not in known:
            return page(request, "message.html", 404, who=who, title="No such kiosk",
                        message="The central server has no kiosk of that name.")
        lines = list(reversed(lines_of(recent_rows(state.fleet, kiosk))))[:200]
        return page(request, "fleet_kiosk.html", who=who, title=kiosk, kiosk=kiosk,
                    lines=lines)

    @app.get("/fleet/{kiosk}/turn/{turn_id}", response_class=HTMLResponse)
    async def fleet_turn(request: Request, kiosk: str, turn_id: str) -> Response:
        """One turn of one kiosk, every step, as the kiosk's own page shows it."""
        from appliance.fleet.central_timeline import recent_rows

        who = signed_in(request)
        wanted = turn_id.replace("-", "").lower()[:32]
        rows = recent_rows(state.fleet, kiosk, turn=wanted) if state.fleet and wanted else []
        if not rows or any(r["aggregate"] != "Turn" for r in rows):
            return page(request, "message.html", 404, who=who, title="No such turn",
                        message="The central server has no turn with that id for this kiosk.")
        for row in rows:
            row["more"] = more(row["event"], row["data"])
        return page(request, "turn.html", who=who, rows=rows, turn_id=wanted[:8], undo="",
                    back=f"/fleet/{quote(kiosk)}", back_text=f"Back to kiosk {kiosk}")

    @app.post("/health/verify")
    async def health_verify(request: Request) -> Response:
        who, _data = await checked(request)
        if who is None:
            return Response("Refused.", 403)
        state.verified = verify(state.journal)
        return RedirectResponse("/health", 303)

    @app.get("/export")
    async def export(request: Request) -> Response:
        who = signed_in(request)
        query = request.query_params
        try:
            since = parse_since(query.get("since") or None)
            until = parse_since(query.get("until") or None)
        except AuditQueryError as e:
            return page(request, "message.html", 400, who=who, title="Export",
                        message=str(e))
        found = rows(state.journal, since, until)
        if query.get("format") == "csv":
            body, kind, ext = as_csv(found), "text/csv; charset=utf-8", "csv"
        else:
            body, kind, ext = as_jsonl(found), "application/x-ndjson", "jsonl"
        return Response(body, media_type=kind, headers={
            "Content-Disposition": f'attachment; filename="appliance-journal.{ext}"'})

    @app.get("/pair", response_class=HTMLResponse)
    async def pair_form(request: Request) -> Response:
        if state.accounts.has_owner():
            return RedirectResponse("/login", 303)
        if not state.pairing.open:
            state.pairing.new()
        return page(request, "pair.html")

    @app.post("/pair", response_class=HTMLResponse)
    async def pair(request: Request) -> Response:
        data = await form(request)
        if state.accounts.has_owner():
            return Response("Already paired.", 403)
        if (refused := stale(request, data)) is not None:
            return refused
        name = data.get("name", "").strip()
        if not state.pairing.take(data.get("code", "")):
            state.journal.web_access("pairing_failed", name[:40] or "-", address(request))
            if not state.pairing.open:
                state.pairing.new()
            return page(request, "pair.html", 400, error="That code is wrong or too old. "
                        "A new code is on the kiosk now.", name=name)
        try:
            state.accounts.create(name, data.get("password", ""), "owner")
        except AccountError as e:
            state.pairing.new()  # the code was used: the next try needs the kiosk's new one
            return page(request, "pair.html", 400, error=str(e), name=name)
        state.journal.web_access("paired", name, address(request))
        return RedirectResponse("/login", 303)

    @app.get("/login", response_class=HTMLResponse)
    async def login_form(request: Request) -> Response:
        if not state.accounts.has_owner():
            return RedirectResponse("/pair", 303)
        return page(request, "login.html")

    @app.post("/login", response_class=HTMLResponse)
    async def login(request: Request) -> Response:
        data = await form(request)
        if (refused := stale(request, data)) is not None:
            return refused
        name, where = data.get("name", "").strip(), address(request)
        wait = state.accounts.wait_s(name, where)
        if wait > 0:
            return page(request, "login.html", 429, name=name,
                        error=f"Too many tries. Please wait {int(wait) + 1} seconds.")
        token = state.accounts.login(name, data.get("password", ""), where)
        if token is None:
            state.journal.web_access("login_failed", name[:40] or "-", where)
            return page(request, "login.html", 400, name=name,
                        error="That name and password do not match.")
        state.journal.web_access("logged_in", name, where)
        response = RedirectResponse("/", 303)
        response.set_cookie(state.cookie, token, httponly=True, samesite="strict",
                            secure=state.secure, path="/")
        return response

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        who, _data = await checked(request)
        if who is None:
            return Response("Refused.", 403)
        state.accounts.logout(request.cookies.get(state.cookie, ""))
        state.journal.web_access("logged_out", who.name, address(request))
        response = RedirectResponse("/login", 303)
        response.delete_cookie(state.cookie, path="/")
        return response

    @app.get("/events")
    async def events(request: Request) -> Response:
        """Server-sent events: 'day' whenever the journal grows (any process may write it)."""
        if session(request) is None:
            return Response("Please log in.", 401)

        async def stream() -> AsyncIterator[str]:
            seen = state.journal.recorder.max_notification_id() or 0
            yield ": connected\n\n"
            while not await request.is_disconnected():
                await asyncio.sleep(LIVE_POLL_S)
                who = session(request)
                if who is None:  # logged out or revoked meanwhile
                    return
                newest = state.journal.recorder.max_notification_id() or 0
                if newest != seen:
                    seen = newest
                    html = pages.get_template("_day.html").render(
                        lines=day_lines(state.journal).lines,
                        undo=_undoable(state.journal) if can_change(who) else "")
                    data = "".join(f"data: {line}\n" for line in html.splitlines())
                    yield f"event: day\n{data}\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    return app
