"""A period of the journal to take away: JSON lines (every event, as `audit --json`) or CSV for
a spreadsheet, whose cells can never run as formulas."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from typing import Any

from appliance.audit.timeline import timeline
from appliance.journal.application import Journal

COLUMNS = ("seq", "time", "aggregate", "turn", "event", "detail")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def rows(journal: Journal, since: datetime | None, until: datetime | None) -> list[dict[str, Any]]:
    return [r for r in timeline(journal, since=since)
            if until is None or r["time"] < until.isoformat(timespec="milliseconds")]


def as_jsonl(found: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, default=str, ensure_ascii=False) + "\n" for r in found)


def as_csv(found: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for r in found:
        writer.writerow([_cell(str(r[c])) for c in COLUMNS])
    return out.getvalue()


def _cell(text: str) -> str:
    # What someone said may begin like a formula ("=HYPERLINK(...)"): a spreadsheet must show
    # it, never run it (OWASP's CSV injection advice: lead with a quote).
    return "'" + text if text.startswith(_FORMULA_START) else text
