"""A file is heard the same way however busy the machine is.

Real components throughout: Piper makes the speech, pipecat + webrtcvad + Whisper tiny.en hear
it, the real SessionSink runs each utterance through the real Session (GrammarPlanner, validator,
journal) on the sim desktop with the bundled Messages scene. The CPU load is real too: busy-loop
processes, one per core, for the whole run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from appliance.demo import SPOKEN_DEMO
from appliance.desktop.model import Desktop
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.journal.application import Journal
from appliance.scenes import bundled_scene
from appliance.session import TurnReport
from appliance.session_sink import SessionSink
from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm
from appliance.voice.audio.sources import WavSource
from appliance.voice.commands import (
    VoiceOptions,
    engines,
    run_audio,
    run_voice,
    speech_pcm,
    synthesize_demo_audio,
)
from appliance.voice.engines import Engines
from appliance.voice.sink import COMMAND_WORDS, Reply, Utterance

DECISIONS = ["executed", "needs_confirmation", "executed", "undone"]


@contextmanager
def cpu_load(processes: int | None = None) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Busy loops on every core (another program on the kiosk, or an LLM thinking)."""
    busy = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(processes or os.cpu_count() or 2)
    ]
    try:
        yield busy
    finally:
        for p in busy:
            p.kill()
        for p in busy:
            p.wait()


@pytest.fixture(scope="module")
def loaded() -> Engines:
    return engines("whisper", progress=False)


@pytest.fixture(scope="module")
def demo_audio(tmp_path_factory: pytest.TempPathFactory, loaded: Engines) -> Path:
    return synthesize_demo_audio(list(SPOKEN_DEMO), tmp_path_factory.mktemp("load") / "demo.wav")


def spoken_session(workdir: Path, audio: Path) -> tuple[list[TurnReport], SimDesktop]:
    """`appliance demo`'s voice session: the audio through run_audio into a SessionSink."""
    workdir.mkdir()
    scene = workdir / "scene.json"
    shutil.copyfile(bundled_scene(), scene)
    journal = Journal(str(workdir / "journal.sqlite"))

    @contextmanager
    def desktop() -> Iterator[Desktop]:
        sim = SimDesktop.from_file(scene)
        yield sim
        sim.save()

    reports: list[TurnReport] = []
    sink = SessionSink(journal, desktop, GrammarPlanner(), reports.append)
    run_audio(audio, sink, workdir / "replies.wav")
    return reports, SimDesktop.from_file(scene)


def value(sim: SimDesktop, name: str) -> str | float | None:
    return next(n for n in sim.snapshot().nodes if n.name == name).value


def test_the_spoken_demo_is_heard_whole_under_cpu_load(tmp_path: Path, demo_audio: Path) -> None:
    """Two runs in one process (the second once lost its first line), both under load."""
    with cpu_load() as busy:
        runs = [spoken_session(tmp_path / f"run{i}", demo_audio) for i in range(2)]
        assert all(p.poll() is None for p in busy), "the load was there for the whole run"
    for reports, sim in runs:
        heard = [(r.transcript, str(r.decision)) for r in reports]
        assert [d for _, d in heard] == DECISIONS, heard
        assert [t for t, _ in heard] == [
            "type hello grandma in the message box", "click send", "yes", "undo that"
        ]
        assert value(sim, "Status") == "Message sent"
        assert value(sim, "Message") == ""


def test_the_same_audio_is_transcribed_the_same_every_time(loaded: Engines) -> None:
    """A second of silence before the command, with the scene's words as the prompt, sent
    greedy decoding round a loop; faster-whisper's fallback then sampled an unseeded generator,
    so each call heard something else (sometimes nothing)."""
    assert loaded.whisper is not None
    sim = SimDesktop.from_file(bundled_scene())
    snapshot = sim.snapshot()
    vocabulary = [*snapshot.names(), *snapshot.applications, *snapshot.launchable, *COMMAND_WORDS]
    pcm = bytes(PIPELINE_RATE * 2) + speech_pcm("Hey juniper, click send.") + bytes(6400)
    texts = {loaded.whisper.transcribe(pcm, vocabulary, "hey juniper").text for _ in range(4)}
    assert len(texts) == 1, texts
    assert "click send" in texts.pop().lower().replace(",", "")


class AskingSink:
    """Asks before sending, like the real turn; records what was spoken and how long."""

    def __init__(self) -> None:
        self.heard: list[str] = []
        self.spoken: list[tuple[str, float]] = []

    def vocabulary(self) -> list[str]:
        return ["Send", "Urgent", "click", "yes", "no"]

    def handle(self, utterance: Utterance) -> Reply:
        self.heard.append(utterance.text)
        turn = f"t{len(self.heard)}"
        if utterance.text.startswith("yes"):
            return Reply(turn, "Sent.", False)
        return Reply(turn, "Send the message to Grandma? Say yes or no.", True)

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        self.spoken.append((text, timings["spoken_s"]))


def test_a_reply_slow_to_synthesize_is_still_one_reply(
    loaded: Engines, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pipecat ends a TTS context after a quiet spell (5 s here before); a reply that slow was
    reported spoken with no audio, the file went on, and its audio then belonged to no reply.
    Here Piper stalls once, for 6 s, before its first sentence, as on a starved CPU."""
    piper = loaded.speaker
    fast = piper.sentences
    stalls = [6.0]

    def slow(text: str, steady: bool = False) -> Iterator[bytes]:
        for pcm in fast(text, steady):
            if stalls:
                time.sleep(stalls.pop())
            yield pcm

    gap = bytes(int(1.2 * PIPELINE_RATE) * 2)
    pcm = gap + speech_pcm("Hey juniper, click send.") + gap + speech_pcm("Yes.") + gap
    monkeypatch.setattr(piper, "sentences", slow)
    sink = AskingSink()
    stats = run_voice(WavSource(pcm=Pcm(pcm, PIPELINE_RATE)), sink, loaded, None, VoiceOptions())
    assert sink.heard == ["click send", "yes"], stats.heard
    assert [text for text, _ in sink.spoken] == [
        "Send the message to Grandma? Say yes or no.", "Sent."
    ]
    assert all(seconds > 0.3 for _, seconds in sink.spoken), sink.spoken
