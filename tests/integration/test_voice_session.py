"""End to end: the spoken demo session through the voice pipeline into the real `Session`
(grammar planner, validator, journal) acting on the sim desktop with the bundled scene."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from uuid import UUID

from appliance.desktop.sim import SimDesktop
from appliance.journal.application import Journal
from appliance.session import TurnReport
from appliance.session_sink import SessionSink
from appliance.settings import Settings
from appliance.voice.commands import run_audio, synthesize_demo_audio
from appliance.wiring import build_planner, opened_desktop

DEMO = [
    "hey juniper, type hello grandma in the message box",
    "hey juniper, click send",
    "yes",
    "hey juniper, undo that",
]


def _element(scene: Path, name: str) -> Any:
    snap = SimDesktop.from_file(scene).snapshot()
    return next(n for n in snap.nodes if n.name == name)


def test_spoken_demo_acts_on_the_sim_desktop(tmp_path: Path) -> None:
    from appliance.scenes import bundled_scene

    scene = tmp_path / "scene.json"
    shutil.copyfile(bundled_scene(), scene)
    journal = Journal(str(tmp_path / "journal.sqlite"))
    reports: list[TurnReport] = []
    planner = build_planner(Settings(llm="off"))
    sink = SessionSink(journal, lambda: opened_desktop(f"sim:{scene}"), planner, reports.append)
    audio = synthesize_demo_audio(DEMO, tmp_path / "demo.wav")
    run_audio(audio, sink, tmp_path / "replies.wav")

    decisions = [r.decision for r in reports]
    assert reports[0].transcript.startswith("type hello grandma")
    assert decisions == ["executed", "needs_confirmation", "executed", "undone"], [
        (r.transcript, r.decision, r.spoken) for r in reports
    ]
    # The message was sent (a sent message is not taken back); "undo that" put the typing back.
    assert _element(scene, "Status").value == "Message sent"
    assert _element(scene, "Message").value == ""
    assert reports[3].spoken.startswith("Undone")
    assert reports[1].expects_answer and "send" in reports[1].spoken.lower()
    # Each Spoke event carries the voice timings.
    spoke = [e for _, e in journal.domain_events() if type(e).__name__ == "Spoke"]
    t = spoke[0].timings
    assert t["speech_end"] <= t["transcript_ready"] <= t["action_done"] <= t["first_audio"]
    turn = journal.turn(UUID(reports[0].turn_id))
    assert turn.spoken and turn.spoken[-1] == reports[0].spoken
    assert (tmp_path / "replies.wav").stat().st_size > 16_000
