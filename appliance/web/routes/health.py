"""The health page and the journal check run from it."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from appliance.web.health import checks, verify
from appliance.web.shared import Caregiver, State, page, signed_in_caregiver

router = APIRouter()


@router.get("/health", response_class=HTMLResponse)
async def health(request: Request, web: State, who: Caregiver) -> Response:
    return page(request, "health.html", who=who,
                checks=checks(web.journal, web.folder, web.verified))


@router.post("/health/verify", dependencies=[Depends(signed_in_caregiver)])
async def health_verify(web: State) -> Response:
    web.verified = verify(web.journal)
    return RedirectResponse("/health", 303)
