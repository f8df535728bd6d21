"""The week at a glance, drawn on the server as SVG: commands a day by how they ended, and how
long an action took after the words were in, per day (p50 and p95)."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from appliance.journal.application import Journal
from appliance.web.day import first_at

DONE = ("executed", "answered", "undone")
REFUSED = ("rejected",)
STEP_BACK = 5000


@dataclass
class Day:
    date: str
    outcomes: Counter[str] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def done(self) -> int:
        return sum(self.outcomes[o] for o in DONE)

    @property
    def refused(self) -> int:
        return sum(self.outcomes[o] for o in REFUSED)

    @property
    def other(self) -> int:
        return sum(self.outcomes.values()) - self.done - self.refused

    @property
    def p50(self) -> float | None:
        return round(statistics.median(self.latencies_ms), 1) if self.latencies_ms else None

    @property
    def p95(self) -> float | None:
        if not self.latencies_ms:
            return None
        ordered = sorted(self.latencies_ms)
        return round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 1)


def week(journal: Journal, today: datetime | None = None) -> list[Day]:
    """The seven days up to `today`, oldest first."""
    today = (today or datetime.now(UTC)).replace(hour=0, minute=0, second=0, microsecond=0)
    since = today - timedelta(days=6)
    days = {(since + timedelta(days=i)).date().isoformat(): Day((since + timedelta(days=i))
                                                                .date().isoformat())
            for i in range(7)}
    started: dict[str, datetime] = {}
    acted: dict[str, bool] = defaultdict(bool)
    for _nid, e in journal.domain_events(first_at(journal, since, STEP_BACK)):
        if e.timestamp < since:
            continue
        name, turn = type(e).__name__, e.originator_id.hex
        day = days.get(e.timestamp.date().isoformat())
        if day is None:
            continue
        if name in ("Heard", "Answered"):
            started[turn] = e.timestamp
        elif name == "ActionSucceeded" and turn in started and not acted[turn]:
            acted[turn] = True
            day.latencies_ms.append((e.timestamp - started[turn]).total_seconds() * 1000)
        elif name == "TurnEnded":
            day.outcomes[str(e.outcome)] += 1
    return list(days.values())


def bars(days: list[Day], width: int = 700, height: int = 260) -> dict[str, Any]:
    """Geometry for the SVG template: one stacked bar a day (done, refused, other)."""
    top = max([d.done + d.refused + d.other for d in days] + [1])
    slot = width / len(days)
    out = []
    for i, d in enumerate(days):
        x, y = i * slot + slot * 0.2, float(height)
        parts = []
        for kind, count in (("done", d.done), ("refused", d.refused), ("other", d.other)):
            h = (height - 30) * count / top
            y -= h
            parts.append({"kind": kind, "count": count, "y": round(y, 1), "h": round(h, 1)})
        out.append({"x": round(x, 1), "w": round(slot * 0.6, 1), "parts": parts,
                    "label": d.date[5:], "total": d.done + d.refused + d.other})
    return {"width": width, "height": height, "bars": out, "top": top}
