"""The week at a glance, drawn on the server as SVG: commands a day by how they ended, and how
long an action took after the words were in, per day (p50 and p95)."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

from appliance.audit.days import day_span, said_day, short_day, today_in
from appliance.audit.story import Group, group_of
from appliance.audit.timeline import first_at
from appliance.journal.application import Journal

STEP_BACK = 5000


@dataclass
class Day:
    date: date
    said: str  # "Today", "Monday 30 November"
    label: str  # for the chart's axis: "Today", "Mon 30"
    outcomes: Counter[Group] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def done(self) -> int:
        return self.outcomes[Group.done]

    @property
    def refused(self) -> int:
        return self.outcomes[Group.refused]

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


def week(journal: Journal, zone: tzinfo, now: datetime | None = None) -> list[Day]:
    """The seven days up to today in `zone`, oldest first; a command counts on the day it
    began, as in the day's summary."""
    today = today_in(zone, now)
    dates = [today - timedelta(days=6 - i) for i in range(7)]
    days = {d: Day(d, said_day(d, today), short_day(d, today)) for d in dates}
    since = day_span(dates[0], zone)[0]
    began: dict[str, Day] = {}
    started: dict[str, datetime] = {}
    acted: dict[str, bool] = defaultdict(bool)
    for _nid, e in journal.domain_events(first_at(journal, since, STEP_BACK)):
        if e.timestamp < since:
            continue
        name, turn = type(e).__name__, e.originator_id.hex
        day = days.get(e.timestamp.astimezone(zone).date())
        if day is None:
            continue
        if name == "TurnStarted":
            began[turn] = day
        elif name in ("Heard", "Answered"):
            started[turn] = e.timestamp
        elif name == "ActionSucceeded" and turn in started and not acted[turn]:
            acted[turn] = True
            day.latencies_ms.append((e.timestamp - started[turn]).total_seconds() * 1000)
        elif name == "TurnEnded" and turn in began:
            began[turn].outcomes[group_of(str(e.outcome))] += 1
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
                    "label": d.label, "total": d.done + d.refused + d.other})
    return {"width": width, "height": height, "bars": out, "top": top}
