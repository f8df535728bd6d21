"""The journal as a file to keep: one row per command (CSV) or every event (JSON lines),
between two moments in the caregiver's time zone."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Request
from fastapi.responses import Response

from appliance.audit.days import zone_name
from appliance.audit.story import told_between
from appliance.web.export import as_csv, as_jsonl, rows
from appliance.web.shared import Caregiver, State, page
from appliance.web.when import Unreadable, read_since

router = APIRouter()


@router.get("/export")
async def export(request: Request, web: State, who: Caregiver) -> Response:
    query = request.query_params
    zone = web.zone
    try:
        since = read_since(query.get("since", "")[:80], zone)
        until = read_since(query.get("until", "")[:80], zone)
    except Unreadable as e:
        return page(request, "message.html", 400, who=who, title="Take a copy", message=str(e))
    if query.get("format", "csv") == "csv":
        found = told_between(web.journal, since or datetime.fromtimestamp(0, UTC), until, zone)
        body, kind, ext = as_csv(found.stories, zone_name(zone)), "text/csv; charset=utf-8", "csv"
    else:
        body, kind, ext = as_jsonl(rows(web.journal, since, until)), "application/x-ndjson", "jsonl"
    return Response(body, media_type=kind, headers={
        "Content-Disposition": f'attachment; filename="appliance-journal.{ext}"'})
