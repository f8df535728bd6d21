"""The central server's kiosks, read only (`appliance serve --central-db`)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from appliance.web.day import lines_of
from appliance.web.shared import Caregiver, State, page
from appliance.web.turn_view import more

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
    lines = list(reversed(lines_of(recent_rows(web.fleet, kiosk))))[:200]
    return page(request, "fleet_kiosk.html", who=who, title=kiosk, kiosk=kiosk, lines=lines)


@router.get("/fleet/{kiosk}/turn/{turn_id}", response_class=HTMLResponse)
async def fleet_turn(request: Request, kiosk: str, turn_id: str, web: State,
                     who: Caregiver) -> Response:
    """One turn of one kiosk, every step, as the kiosk's own page shows it."""
    from appliance.fleet.central_timeline import recent_rows

    wanted = turn_id.replace("-", "").lower()[:32]
    rows = recent_rows(web.fleet, kiosk, turn=wanted) if web.fleet and wanted else []
    if not rows or any(r["aggregate"] != "Turn" for r in rows):
        return page(request, "message.html", 404, who=who, title="No such turn",
                    message="The central server has no turn with that id for this kiosk.")
    for row in rows:
        row["more"] = more(row["event"], row["data"])
    return page(request, "turn.html", who=who, rows=rows, turn_id=wanted[:8], undo="",
                back=f"/fleet/{quote(kiosk)}", back_text=f"Back to kiosk {kiosk}")
