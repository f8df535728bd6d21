"""The health page, the journal check run from it, and the kiosk's state as the page polls it
(the banner on every page, the top of Health)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from appliance.web.health import parts, verify, version
from appliance.web.shared import Caregiver, State, page, session_of, signed_in_caregiver, templates

router = APIRouter()


@router.get("/health", response_class=HTMLResponse)
async def health(request: Request, web: State, who: Caregiver) -> Response:
    verified = (web.verified, web.verified_at) if web.verified is not None else None
    return page(request, "health.html", who=who, title="Health", version=version(),
                parts=parts(web.journal, web.folder, verified, web.clock(), web.zone),
                kiosk_full=True)


@router.post("/health/verify", dependencies=[Depends(signed_in_caregiver)])
async def health_verify(web: State) -> Response:
    web.verified = verify(web.journal)
    web.verified_at = web.clock()
    return RedirectResponse("/health", 303)


@router.get("/kiosk/status", response_class=HTMLResponse)
async def kiosk_status(request: Request, web: State) -> Response:
    """The kiosk's state, for htmx to swap in every few seconds: 204 (nothing to swap) while
    it is what the page shows (`shown`), so a screen reader hears only a change. A fragment,
    not a page: without a session it says so (401) rather than redirect."""
    if session_of(request) is None:
        return Response("Please log in.", 401)
    kiosk = web.kiosk()
    if kiosk is None or kiosk.tag == request.query_params.get("shown"):
        return Response(status_code=204)
    full = request.query_params.get("full") == "1"
    html = templates(request).get_template("_kiosk.html").render(kiosk=kiosk, full=full)
    return HTMLResponse(html)
