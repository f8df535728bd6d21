"""The day as a caregiver reads it: one plain line per turn ("10:02 — said 'send it to
grandma' -> asked for a yes -> yes -> Sent."), and other happenings as lines of their own."""

from __future__ import annotations

from dataclasses import dataclass, field
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


WINDOW = 3000
"""Events read for one page: a few hundred turns. A page reads the journal's tail, never all
of it, so it takes as long with a million events as with a thousand."""


@dataclass
class Page:
    lines: list[Line]
    older: int | None  # the `before` of the next page back, if there is one


def day_lines(journal: Journal, limit: int = 200, before: int | None = None) -> Page:
    """Up to `limit` lines from the events before notification `before` (None: the newest),
    newest first."""
    last = journal.recorder.max_notification_id() or 0
    end = min(last, before - 1) if before else last
    start = max(1, end - WINDOW + 1)
    turns: dict[str, Line] = {}
    lines: list[Line] = []
    for row in timeline(journal, start=start, end=end):
        event, data = row["event"], row["data"]
        clock = row["time"][11:16]
        if row["aggregate"] != "Turn":
            if event in _SHOWN:
                lines.append(Line(time=clock, text=f"{_label(event)}: {row['detail']}"))
            continue
        line = turns.get(row["turn"])
        if line is None:
            if event != "TurnStarted":
                continue  # begun before this page's events: it is on the page before
            line = turns[row["turn"]] = Line(time=clock, text="", turn=row["turn"])
            lines.append(line)
        _add(line, event, data)
    for line in turns.values():
        line.text = " -> ".join(line.steps) or "(nothing heard)"
    return Page(lines=list(reversed(lines))[:limit], older=start if start > 1 else None)


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
