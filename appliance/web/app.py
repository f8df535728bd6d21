"""The caregiver web app: FastAPI routers (appliance/web/routes/), server-rendered Jinja2 pages,
htmx + SSE, no inline script. Every page needs a session (the login dependency in `shared`)
except pairing (until an owner exists), joining and login."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from appliance.audit.story import GROUP_LOOKS
from appliance.web.routes import (
    access,
    day,
    export,
    fleet,
    health,
    people,
    settings,
    taught,
    undo,
    voice,
)
from appliance.web.shared import Refusal, WebState
from appliance.web.turn_view import facts

HERE = Path(__file__).parent
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; media-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'self'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    # The page never needs a device's sensors; a script that got in could not ask for them.
    "Permissions-Policy": (
        "camera=(), microphone=(), geolocation=(), usb=(), payment=(), display-capture=()"
    ),
}
FAVICON = HERE / "static" / "favicon.svg"
ROUTERS = (day, settings, people, access, undo, health, fleet, export, voice, taught)


def create_app(state: WebState) -> FastAPI:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    pages = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes .html
    pages.env.globals["fleet_page"] = state.fleet is not None
    pages.env.globals["GROUP_LOOKS"] = GROUP_LOOKS
    pages.env.filters["facts"] = facts
    app.state.web = state  # what the routes get through `shared.State`
    app.state.pages = pages
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.middleware("http")
    async def headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        for key, value in HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        # Asked for by browsers on pages without a <link rel=icon> (a plain "Refused.").
        return FileResponse(FAVICON, media_type="image/svg+xml")

    @app.exception_handler(Refusal)
    async def refused(_request: Request, refusal: Refusal) -> Response:
        return refusal.response  # off to login or pairing, or "Refused."

    for routes in ROUTERS:
        app.include_router(routes.router)
    return app
