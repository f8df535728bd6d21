"""The day as a caregiver reads it: one plain line per turn ("10:02 — said 'send it to
grandma' -> asked for a yes -> yes -> Sent."), and other happenings as lines of their own."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from appliance.audit.timeline import timeline
from appliance.journal.application import Journal

_SHOWN = {"DeviceFault", "SwitchPressed", "SettingChanged", "SpeechIgnored", "WebAccess"}


@dataclass
class Line:
    """One turn or one other happening; `turn` is the turn's id (empty for others)."""

    time: str
    text: str
    outcome: str = ""
    turn: str = ""
    steps: list[str] = field(default_factory=list)
    date: str = ""  # YYYY-MM-DD
    trigger: str = ""  # voice, switch, text, web; empty for what is not a turn


PROBLEMS = frozenset({"rejected", "failed", "interrupted", "timed_out"})


@dataclass(frozen=True)
class Filter:
    """What the caregiver asked to see: a day, an outcome, a trigger, or only problems."""

    day: str = ""
    outcome: str = ""
    trigger: str = ""
    problems: bool = False

    def wants(self, line: Line) -> bool:
        if self.day and line.date != self.day:
            return False
        if (self.outcome or self.trigger or self.problems) and not line.turn:
            return False  # a filter on turns leaves other happenings out
        if self.outcome and line.outcome != self.outcome:
            return False
        if self.trigger and line.trigger != self.trigger:
            return False
        return not (self.problems and line.outcome not in PROBLEMS)

    @property
    def active(self) -> bool:
        return bool(self.day or self.outcome or self.trigger or self.problems)


WINDOW = 3000
"""Events read for one page: a few hundred turns. A page reads the journal's tail, never all
of it, so it takes as long with a million events as with a thousand."""


@dataclass
class Page:
    lines: list[Line]
    older: int | None  # the `before` of the next page back, if there is one


def day_lines(journal: Journal, limit: int = 200, before: int | None = None,
              shown: Filter = Filter()) -> Page:
    """Up to `limit` lines from the events before notification `before` (None: the newest),
    newest first, those `shown` wants."""
    last = journal.recorder.max_notification_id() or 0
    end = min(last, before - 1) if before else last
    start = max(1, end - WINDOW + 1)
    found = lines_of(timeline(journal, start=start, end=end))
    wanted = [line for line in reversed(found) if shown.wants(line)]
    return Page(lines=wanted[:limit], older=start if start > 1 else None)


def one_day(journal: Journal, day: datetime) -> list[Line]:
    """Every line of one day, oldest first: the printable day report."""
    start = first_at(journal, day)
    end_of_day = day + timedelta(days=1)
    rows = [r for r in timeline(journal, start=start, since=day)
            if r["time"] < end_of_day.isoformat(timespec="milliseconds")]
    return lines_of(rows)


def first_at(journal: Journal, since: datetime, step: int = WINDOW) -> int:
    """A notification id at or before the first event at `since`, found by stepping back
    from the end (what a caregiver looks at is a small tail of a long journal)."""
    start = journal.recorder.max_notification_id() or 0
    while start > 1:
        start = max(1, start - step)
        first = next(iter(journal.domain_events(start)), None)
        if first is None or first[1].timestamp < since:
            break
    return max(1, start)


def lines_of(rows: list[dict[str, Any]]) -> list[Line]:
    """Timeline rows as lines, oldest first: a turn's events make one line."""
    turns: dict[str, Line] = {}
    lines: list[Line] = []
    for row in rows:
        event, data = row["event"], row["data"]
        clock, date = row["time"][11:16], row["time"][:10]
        if row["aggregate"] != "Turn":
            if event in _SHOWN:
                lines.append(Line(time=clock, date=date,
                                  text=f"{_label(event)}: {row['detail']}"))
            continue
        line = turns.get(row["turn"])
        if line is None:
            if event != "TurnStarted":
                continue  # begun before these events: it belongs to the page before
            line = turns[row["turn"]] = Line(time=clock, text="", turn=row["turn"], date=date,
                                             trigger=str(data.get("trigger", "")))
            lines.append(line)
        _add(line, event, data)
    for line in turns.values():
        line.text = " -> ".join(line.steps) or "(nothing heard)"
    return lines


def _label(event: str) -> str:
    return {"DeviceFault": "Device fault", "SwitchPressed": "Switch",
            "SettingChanged": "Setting changed", "SpeechIgnored": "Speech ignored",
            "WebAccess": "Web page"}.get(event, event)


def _add(line: Line, event: str, data: dict[str, Any]) -> None:
    match event:
        case "Heard" | "Answered":
            line.steps.append(f"said \u201c{data.get('transcript', '')}\u201d")
        case "ConfirmationAsked":
            line.steps.append("asked for a yes" if not data.get("options") else "asked which")
        case "Confirmed":
            line.steps.append(f"yes (by {data.get('by', '')})")
        case "Declined":
            line.steps.append(f"no (by {data.get('by', '')})")
        case "Spoke":
            line.steps.append(f"said back \u201c{data.get('text', '')}\u201d")
        case "TurnEnded":
            line.outcome = str(data.get("outcome", ""))
