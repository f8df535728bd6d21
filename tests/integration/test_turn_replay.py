"""A `Turn` rebuilt from its stored events equals the one the session ended with.

Real turns through a real `Session` on a real journal; a second `Journal` on the same store (a
new process, nothing cached) rebuilds each turn from its events. Both the events and every field
of the turn must come back as they were: data dropped or changed on the way through the store
fails here even when no field of the turn holds it (the Heard event's engine and timings).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.router import Router
from appliance.journal.application import Journal
from appliance.scenes import bundled_scene
from appliance.session import Session
from appliance.turn import Phase, Turn


class KeepingJournal(Journal):
    """The journal, keeping the turn objects it was asked to record and their events."""

    name = Journal.name  # eventsourcing names the tables after the application

    def __init__(self, store: str) -> None:
        super().__init__(store)
        self.kept: dict[UUID, Turn] = {}
        self.kept_events: dict[UUID, list[Any]] = {}

    def record(self, *aggregates: Any) -> None:
        pending = [(a, list(a.pending_events)) for a in aggregates]
        super().record(*aggregates)
        for aggregate, events in pending:
            if isinstance(aggregate, Turn):
                self.kept[aggregate.id] = aggregate  # the newest object wins: the session's last
                self.kept_events.setdefault(aggregate.id, []).extend(events)


# What is said, with the decision each time; then each turn's outcome, oldest turn first.
CONFIRMED = [("click send", "needs_confirmation"), ("yes", "executed")], ["executed"]
REFUSED = [("click send", "needs_confirmation"), ("no", "cancelled")], ["cancelled"]
REJECTED = [("yes", "rejected")], ["rejected"]  # no question is waiting: the policy refuses
MULTI_STEP = [("tick urgent and then type hello into message", "executed")], ["executed"]
# The undo is a turn of its own that also records `Undone` on the sequence's turn.
UNDONE = [*MULTI_STEP[0], ("undo", "undone")], ["executed", "undone"]


@pytest.mark.parametrize(
    ("script", "outcomes"),
    [CONFIRMED, REFUSED, REJECTED, MULTI_STEP, UNDONE],
    ids=["confirmed", "refused", "rejected", "multi-step", "undone"],
)
def test_turn_rebuilt_from_its_events_equals_the_original(
    script: list[tuple[str, str]], outcomes: list[str], store: str, tmp_path: Path
) -> None:
    scene = tmp_path / "messages.json"
    shutil.copy(bundled_scene(), scene)
    journal = KeepingJournal(store)
    session = Session(
        journal, SimDesktop.from_file(scene), Router(GrammarPlanner(), None), device="microphone"
    )
    for n, (text, decision) in enumerate(script):
        report = session.say(
            text, trigger="voice", engine="whisper", confidence=0.9 - n / 10,
            timings={"speech_end": 1000.0 + n, "stt_ms": 210.5},
        )
        assert report.decision == decision, report

    ended = list(journal.kept.values())
    assert [(t.phase, t.outcome) for t in ended] == [(Phase.ended, o) for o in outcomes]
    if len(ended) == 2:
        assert ended[0].undone_by == ended[1].id.hex
    again = Journal(store)  # a second process: nothing cached
    stored: dict[UUID, list[Any]] = {}
    for _nid, event in again.domain_events():
        if event.originator_id in journal.kept:
            stored.setdefault(event.originator_id, []).append(event)
    for turn_id, original in journal.kept.items():
        assert stored[turn_id] == journal.kept_events[turn_id]
        rebuilt = again.turn(turn_id)
        assert type(rebuilt) is Turn
        fields = vars(original)
        assert set(vars(rebuilt)) == set(fields)
        for name, value in fields.items():
            assert getattr(rebuilt, name) == value, name
