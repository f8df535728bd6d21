"""What the next turn sees of earlier ones, folded from the journal's recent turns: the history
planners are given and the count of actions done without a yes (the rate limit). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from appliance.desktop.marks import Marks
from appliance.turn import Turn

HISTORY_TURNS = 3


def history(recent: Sequence[Turn], turns: int = HISTORY_TURNS) -> list[str]:
    """The last few turns (`recent` is newest first) as planners see them, oldest first: what
    was said, what came of it."""
    lines = []
    for turn in reversed(recent[:turns]):
        said = turn.transcripts[0] if turn.transcripts else ""
        reply = turn.spoken[-1] if turn.spoken else turn.outcome
        lines.append(f'"{said}" -> {reply}')
    return lines


def unconfirmed_actions(recent: Sequence[Turn], since: datetime) -> int:
    """Actions carried out without a yes on turns that changed since `since`."""
    return sum(
        sum(1 for step in turn.steps if step.done)
        for turn in recent
        if not turn.confirmed_by and turn.modified_on >= since
    )


def shown_marks(recent: Sequence[Turn]) -> Marks | None:
    """The numbers or grid on screen now: what the newest turn that changed them showed."""
    for turn in recent:
        if turn.marks_changed:
            return Marks.model_validate(turn.marks) if turn.marks is not None else None
    return None
