"""The central server's kiosks, read only (`appliance serve --central-db`)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from appliance.audit.story import told
from appliance.web.shared import Caregiver, State, page

router = APIRouter()


@router.get("/fleet", response_class=HTMLResponse)
async def fleet(request: Request, web: State, who: Caregiver) -> Response:
    """Every kiosk of the central server."""
    if web.fleet is None:
        return page(request, "message.html", 404, who=who, title="No fleet",
                    message="This page is not connected to a central server.")
    return page(request, "fleet.html", who=who, title="Fleet", kiosks=web.fleet.overview())


@router.get("/fleet/{kiosk}", response_class=HTMLResponse)
async def fleet_kiosk(request: Request, kiosk: str, web: State, who: Caregiver) -> Response:
    """One kiosk's latest commands as the central copy has them (its words stay there
    unless its caregiver let them leave)."""
    from appliance.fleet.central_timeline import recent_rows

    known = {k["kiosk"] for k in web.fleet.overview()} if web.fleet else set()
    if web.fleet is None or kiosk not in known:
        return page(request, "message.html", 404, who=who, title="No such kiosk",
                    message="The central server has no kiosk of that name.")
    found = told(recent_rows(web.fleet, kiosk), web.zone)
    return page(request, "fleet_kiosk.html", who=who, title=kiosk, kiosk=kiosk,
                stories=found.stories[::-1][:200], happenings=found.happenings[::-1][:200])


@router.get("/fleet/{kiosk}/turn/{turn_id}", response_class=HTMLResponse)
async def fleet_turn(request: Request, kiosk: str, turn_id: str, web: State,
                     who: Caregiver) -> Response:
    """One turn of one kiosk, every step, as the kiosk's own page shows it."""
    from appliance.fleet.central_timeline import recent_rows

    wanted = turn_id.replace("-", "").lower()[:32]
    rows = recent_rows(web.fleet, kiosk, turn=wanted) if web.fleet and wanted else []
    found = told(rows, web.zone).stories
    if not found or any(r["aggregate"] != "Turn" for r in rows):
        return page(request, "message.html", 404, who=who, title="No such turn",
                    message="The central server has no turn with that id for this kiosk.")
    return page(request, "turn.html", who=who, story=found[0], title=found[0].title, undo="",
                back=f"/fleet/{quote(kiosk)}", back_text=f"Back to kiosk {kiosk}")
