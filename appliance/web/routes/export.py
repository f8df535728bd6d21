"""The journal as a file to keep: JSON lines or CSV, between two moments."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from appliance.audit.timeline import AuditQueryError, parse_since
from appliance.web.export import as_csv, as_jsonl, rows
from appliance.web.shared import Caregiver, State, page

router = APIRouter()


@router.get("/export")
async def export(request: Request, web: State, who: Caregiver) -> Response:
    query = request.query_params
    try:
        since = parse_since(query.get("since") or None)
        until = parse_since(query.get("until") or None)
    except AuditQueryError as e:
        return page(request, "message.html", 400, who=who, title="Export", message=str(e))
    found = rows(web.journal, since, until)
    if query.get("format") == "csv":
        body, kind, ext = as_csv(found), "text/csv; charset=utf-8", "csv"
    else:
        body, kind, ext = as_jsonl(found), "application/x-ndjson", "jsonl"
    return Response(body, media_type=kind, headers={
        "Content-Disposition": f'attachment; filename="appliance-journal.{ext}"'})
