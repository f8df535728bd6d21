"""End to end: the spoken demo session through the voice pipeline into the real `Session`
(grammar planner, validator, journal) acting on the sim desktop with the bundled scene."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from appliance.voice.commands import run_audio, synthesize_demo_audio
from appliance.voice.sink import Reply, Utterance

session_mod = pytest.importorskip("appliance.session")
grammar_mod = pytest.importorskip("appliance.intents.grammar")

from appliance.desktop.sim import SimDesktop  # noqa: E402
from appliance.journal.application import Journal  # noqa: E402

DEMO = [
    "hey juniper, type hello grandma in the message box",
    "hey juniper, click send",
    "yes",
    "hey juniper, undo that",
]


class SessionSink:
    """A TurnSink on the lead's Session (a stand-in until the CLI wires its own)."""

    def __init__(self, journal: Journal, scene: Path) -> None:
        self.journal = journal
        self.scene = scene
        self.planner = grammar_mod.GrammarPlanner()
        self.reports: list[Any] = []
        self.spoken: list[tuple[str, str, dict[str, float]]] = []

    def vocabulary(self) -> list[str]:
        return [*SimDesktop.from_file(self.scene).snapshot().names(), "type", "click", "undo that"]

    def handle(self, utterance: Utterance) -> Reply:
        desktop = SimDesktop.from_file(self.scene)
        session = session_mod.Session(self.journal, desktop, self.planner, speaks_later=True)
        report = session.say(utterance.text, trigger="voice", engine=utterance.engine,
                             confidence=utterance.confidence, timings=utterance.timings)
        desktop.save()
        self.reports.append(report)
        return Reply(report.turn_id, report.spoken, report.expects_answer)

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        self.spoken.append((turn_id, text, timings))
        turn = self.journal.turn(UUID(turn_id))
        turn.spoke(text=text, timings=timings)
        self.journal.record(turn)


def _element(scene: Path, name: str) -> Any:
    snap = SimDesktop.from_file(scene).snapshot()
    return next(n for n in snap.nodes if n.name == name)


def test_spoken_demo_acts_on_the_sim_desktop(tmp_path: Path) -> None:
    from appliance.demo import bundled_scene

    scene = tmp_path / "scene.json"
    shutil.copyfile(bundled_scene(), scene)
    journal = Journal(str(tmp_path / "journal.sqlite"))
    sink = SessionSink(journal, scene)
    audio = synthesize_demo_audio(DEMO, tmp_path / "demo.wav")
    run_audio(audio, sink, tmp_path / "replies.wav")

    decisions = [r.decision for r in sink.reports]
    assert sink.reports[0].transcript.startswith("type hello grandma")
    assert decisions == ["executed", "needs_confirmation", "executed", "undone"], [
        (r.transcript, r.decision, r.spoken) for r in sink.reports
    ]
    # The message was sent (a sent message is not taken back); "undo that" put the typing back.
    assert _element(scene, "Status").value == "Message sent"
    assert _element(scene, "Message").value == ""
    assert sink.reports[3].spoken.startswith("Undone")
    assert sink.reports[1].expects_answer and "send" in sink.reports[1].spoken.lower()
    # Each Spoke event carries the voice timings.
    t = sink.spoken[0][2]
    assert t["speech_end"] <= t["transcript_ready"] <= t["action_done"] <= t["first_audio"]
    turn = journal.turn(UUID(sink.reports[0].turn_id))
    assert turn.spoken and turn.spoken[-1] == sink.reports[0].spoken
    assert (tmp_path / "replies.wav").stat().st_size > 16_000
