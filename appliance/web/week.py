"""The week at a glance, drawn on the server as SVG: commands a day by how they ended, and how
long an action took after the words were in, per day (p50 and p95)."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

from appliance.audit.days import WEEKDAYS, day_span, said_day, short_day, today_in
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


LABEL_PX = 28  # the chart's text in its own units: 700 wide drawn at ~360 px on a phone is 14 px
MONTHS_SHORT = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                "Dec")


def axis_label(day: date, today: date) -> tuple[str, str, str]:
    """Three short lines under a bar, read as "Mon 30 Nov" (or "Today 1 Dec"): on one line
    they would not fit a seventh of a phone at a readable size."""
    first = "Today" if day == today else WEEKDAYS[day.weekday()][:3]
    return first, str(day.day), MONTHS_SHORT[day.month - 1]


def bars(days: list[Day], width: int = 700, height: int = 300) -> dict[str, Any]:
    """Geometry for the SVG template: one stacked bar a day (done, refused, other), its total
    above it, each part's count inside it where there is room, the day under it."""
    top = max([d.done + d.refused + d.other for d in days] + [1])
    slot = width / len(days)
    room = height - LABEL_PX - 12  # the total is written above the tallest bar
    today = days[-1].date  # week() ends with today
    out = []
    for i, d in enumerate(days):
        x, y = i * slot + slot * 0.15, float(height)
        parts = []
        for kind, count in (("done", d.done), ("refused", d.refused), ("other", d.other)):
            h = room * count / top
            y -= h
            parts.append({"kind": kind, "count": count, "y": round(y, 1), "h": round(h, 1),
                          "shows": h >= LABEL_PX + 4, "mid": round(y + h / 2 + LABEL_PX / 3, 1)})
        first, second, third = axis_label(d.date, today)
        out.append({"x": round(x, 1), "w": round(slot * 0.7, 1), "cx": round(x + slot * 0.35, 1),
                    "parts": parts, "first": first, "second": second, "third": third,
                    "total": d.done + d.refused + d.other, "total_y": round(y - 8, 1)})
    return {"width": width, "height": height, "bars": out, "top": top, "label_px": LABEL_PX,
            "axis": height + LABEL_PX + 6, "axis2": height + 2 * LABEL_PX + 8,
            "axis3": height + 3 * LABEL_PX + 10, "full": height + 3 * LABEL_PX + 20}
