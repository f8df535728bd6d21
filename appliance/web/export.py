"""A period of the journal to take away: CSV for a spreadsheet, one row per command in the
words of the day page (its cells can never run as formulas), or JSON lines (every event, as
`audit --json`)."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from typing import Any

from appliance.audit.story import Story
from appliance.audit.timeline import timeline
from appliance.journal.application import Journal

COLUMNS = ("time", "what was said", "what happened", "outcome", "who confirmed",
           "seconds it took", "started by", "it said", "turn")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def rows(journal: Journal, since: datetime | None, until: datetime | None) -> list[dict[str, Any]]:
    return [r for r in timeline(journal, since=since)
            if until is None or r["time"] < until.isoformat(timespec="milliseconds")]


def as_jsonl(found: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, default=str, ensure_ascii=False) + "\n" for r in found)


def as_csv(stories: list[Story], zone: str) -> str:
    """One row per command, oldest first; times in `zone`, named in the header."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([f"time ({zone})", *COLUMNS[1:]])
    for s in stories:
        took = "" if s.took_s is None else f"{s.took_s:.1f}"
        writer.writerow([_cell(str(c)) for c in (
            s.started.strftime("%Y-%m-%d %H:%M:%S"), s.said, s.happened, s.look.label,
            s.who_confirmed, took, s.caregiver or s.trigger, s.reply, s.short)])
    return out.getvalue()


def _cell(text: str) -> str:
    # What someone said may begin like a formula ("=HYPERLINK(...)"): a spreadsheet must show
    # it, never run it (OWASP's CSV injection advice: lead with a quote).
    return "'" + text if text.startswith(_FORMULA_START) else text
