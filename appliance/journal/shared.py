"""Changes to a turn that other processes may be changing too: an open question (answered,
replaced or timed out), an action whose process died, a turn being undone. After losing a race
the turn is read again and the change decided afresh, so the other process's events stand."""

from __future__ import annotations

from collections.abc import Callable

from appliance.journal.application import CONFLICT_ATTEMPTS, Journal, JournalConflict
from appliance.journal.owners import still_acting
from appliance.turn import Outcome, Turn


def change_shared(
    journal: Journal, turn: Turn, applies: Callable[[Turn], bool], change: Callable[[Turn], None]
) -> Turn | None:
    """Record `change` on `turn`; returns the turn changed, or None if it no longer `applies`
    (another process answered, ended or marked it first), so nothing is said for a change that
    was not made."""
    for _attempt in range(CONFLICT_ATTEMPTS):
        if not applies(turn):
            return None
        change(turn)
        try:
            journal.record(turn)
        except JournalConflict:
            reloaded = journal.trusted_turn(turn.id)
            if reloaded is None:  # what the other process left is not vouched for: no change
                return None
            turn = reloaded
            continue
        return turn
    return None


def record_undone(journal: Journal, turn: Turn, target: Turn) -> None:
    """The undo's outcome, then Undone, in one transaction. Another process may have undone
    the same turn meanwhile (restoring the same before-state): then only the outcome."""
    for _attempt in range(CONFLICT_ATTEMPTS):
        if target.undoable:
            target.mark_undone(by_turn=turn.id.hex, outcome="restored")
        try:
            journal.record(turn, target)
        except JournalConflict as e:
            if turn.id in e.aggregate_ids:
                raise
            reloaded = journal.trusted_turn(target.id)  # `turn` kept its events
            if reloaded is None:
                break
            target = reloaded
            continue
        return
    journal.record(turn)


def abandoned(turn: Turn) -> bool:
    """An action without an outcome whose process (or session) can no longer record one."""
    if not turn.in_flight:
        return False
    return not still_acting(turn.steps[-1].owner, turn.id, turn.modified_on)


def interrupt(turn: Turn) -> None:
    step = turn.steps[-1]
    notice = f"I was interrupted while doing {step.target or step.action.kind}. Please check it."
    turn.interrupt()
    turn.spoke(text=notice, timings={})
    turn.end(Outcome.interrupted)


def is_open(turn: Turn) -> bool:
    return turn.pending


def replace_question(question: Turn) -> None:
    """A new command replaces an open question, as if it had been declined."""
    question.decline(by="new command")
    question.end(Outcome.cancelled)


def time_out(question: Turn) -> None:
    question.time_out()
    question.end(Outcome.timed_out)
