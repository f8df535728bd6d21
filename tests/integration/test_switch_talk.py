"""Push-to-talk: the switch lets a command through without the wake phrase.

The pure parts (PushToTalk windows, the WakeGate hook) run on virtual times. The end-to-end tests
run the real pipecat pipeline (webrtcvad, Whisper tiny.en, Piper) on Piper-spoken WAV audio into
the real `Session` on the sim desktop; the switch is pressed by the audio source at a point in
the file, as a live switch would be pressed while the microphone runs.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from appliance.desktop.sim import SimDesktop
from appliance.journal.application import Journal
from appliance.session import TurnReport
from appliance.session_sink import SessionSink
from appliance.settings import Settings
from appliance.switch.talk import PushToTalk, TalkingSink
from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm
from appliance.voice.audio.sources import WavSource
from appliance.voice.commands import engines, run_voice, speech_pcm
from appliance.voice.hearing.wake import WakeGate
from appliance.voice.pipeline.run import VoiceStats
from appliance.wiring import build_planner, opened_desktop

# -- PushToTalk on virtual times ------------------------------------------------------------


def test_tap_takes_the_next_utterance_only() -> None:
    talk = PushToTalk("tap")
    assert not talk.claims(10.0, 11.0)  # no tap yet
    talk.tap(20.0)
    assert talk.listening(21.0)
    assert not talk.claims(18.0, 19.0)  # speech from before the tap
    assert talk.claims(21.0, 23.0)
    assert not talk.claims(24.0, 25.0)  # the window closed with that utterance
    assert not talk.listening(24.0)


def test_speech_begun_just_before_the_tap_counts() -> None:
    talk = PushToTalk("tap")
    talk.tap(5.0)
    assert talk.claims(4.7, 6.0)


def test_a_tap_window_lapses() -> None:
    talk = PushToTalk("tap", window_s=8.0)
    talk.tap(0.0)
    assert not talk.listening(8.5)
    assert not talk.claims(9.0, 10.0)
    assert not talk.claims(9.5, 10.0)  # and stays closed


def test_cancel_closes_the_tap_window() -> None:
    talk = PushToTalk("tap")
    talk.tap(0.0)
    talk.cancel()
    assert not talk.claims(1.0, 2.0)


def test_hold_takes_speech_begun_while_held_and_only_that() -> None:
    talk = PushToTalk("hold")
    talk.down(10.0)
    assert talk.listening(10.5)
    talk.up(14.0)
    assert not talk.listening(14.5)
    assert talk.claims(10.2, 13.0)
    assert talk.claims(11.0, 12.0)  # a hold may hold several utterances
    assert talk.claims(13.8, 15.0)  # begun while held, ended after the release
    assert not talk.claims(14.5, 16.0)  # begun after the release
    assert not talk.claims(8.0, 9.0)  # long before the press
    assert talk.claims(9.7, 12.0)  # just before the press


def test_hold_mode_ignores_taps() -> None:
    talk = PushToTalk("hold")
    talk.tap(1.0)
    assert not talk.claims(1.5, 2.0)


def test_settings_choose_the_mode() -> None:
    assert PushToTalk.from_settings(Settings(switch_talk="hold")).mode == "hold"
    assert PushToTalk.from_settings(Settings()).mode == "tap"


def test_the_gate_takes_switched_speech_without_the_wake_phrase() -> None:
    gate = WakeGate()
    decision = gate.decide("open messages", 1.0, talking=True)
    assert (decision.kind, decision.text, decision.via) == ("command", "open messages", "switch")
    assert gate.decide("open messages", 2.0).kind == "ignored"
    # Saying the wake phrase anyway while talking is still the wake phrase.
    assert gate.decide("hey juniper open messages", 3.0, talking=True).via == "wake"
    assert gate.decide("", 4.0, talking=True).kind == "ignored"


# -- the real pipeline --------------------------------------------------------------------

# Lines Whisper tiny.en hears word for word from Piper (it makes "uncheck" "and check").
SELECT = "Select doctor."
SEND = "Click send."
OPEN = "Hey juniper, open the calendar."
Press = Callable[[float], None]


class PressingSource(WavSource):
    """A WAV whose reader presses the switch when it reaches given points in the audio."""

    def __init__(self, pcm: Pcm, presses: list[tuple[float, Press]]) -> None:
        super().__init__(pcm=pcm)
        self.presses = sorted(presses, key=lambda p: p[0])

    def read(self, samples: int) -> bytes | None:
        at_s = self._pos / 2 / PIPELINE_RATE
        while self.presses and self.presses[0][0] <= at_s:
            self.presses.pop(0)[1](time.monotonic())
        return super().read(samples)


def silence(seconds: float) -> bytes:
    return bytes(int(seconds * PIPELINE_RATE) * 2)


def audio(*parts: str | float) -> tuple[Pcm, list[tuple[float, float]]]:
    """Speech (str) and pauses (s) after 0.8 s of silence; also where each speech is, in s."""
    pcm = bytearray(silence(0.8))
    spans: list[tuple[float, float]] = []
    for part in parts:
        if isinstance(part, float):
            pcm += silence(part)
            continue
        start = len(pcm) / 2 / PIPELINE_RATE
        pcm += speech_pcm(part, "piper")
        spans.append((start, len(pcm) / 2 / PIPELINE_RATE))
    pcm += silence(0.8)
    return Pcm(bytes(pcm), PIPELINE_RATE), spans


def element(scene: Path, name: str) -> Any:
    return next(n for n in SimDesktop.from_file(scene).snapshot().nodes if n.name == name)


def selected(scene: Path) -> list[str]:
    nodes = SimDesktop.from_file(scene).snapshot().nodes
    return [n.name for n in nodes if n.role == "list item" and "selected" in n.states]


@pytest.fixture
def scene(tmp_path: Path) -> Path:
    from appliance.scenes import bundled_scene

    path = tmp_path / "scene.json"
    shutil.copyfile(bundled_scene(), path)
    return path


def run(tmp_path: Path, scene: Path, pcm: Pcm, talk: PushToTalk,
        presses: list[tuple[float, Press]]) -> tuple[list[TurnReport], VoiceStats]:
    journal = Journal(str(tmp_path / "journal.sqlite"))
    reports: list[TurnReport] = []
    sink = SessionSink(journal, lambda: opened_desktop(f"sim:{scene}"),
                       build_planner(Settings(llm="off")), reports.append)
    stats = run_voice(PressingSource(pcm, presses), TalkingSink(sink, talk), engines("whisper"))
    return reports, stats


def test_a_tap_then_a_command_without_the_wake_phrase_acts(tmp_path: Path, scene: Path) -> None:
    pcm, _ = audio(SELECT)
    talk = PushToTalk("tap")
    reports, stats = run(tmp_path, scene, pcm, talk, [(0.3, talk.tap)])
    assert [r.decision for r in reports] == ["executed"], stats.heard
    assert stats.heard[0]["via"] == "switch"
    assert selected(scene) == ["Doctor"]


def test_the_same_audio_without_a_tap_does_nothing(tmp_path: Path, scene: Path) -> None:
    pcm, _ = audio(SELECT)
    reports, stats = run(tmp_path, scene, pcm, PushToTalk("tap"), [])
    assert reports == [] and stats.ignored == 1, stats.heard
    assert selected(scene) == ["Grandma"]


def test_a_tap_after_the_speech_does_not_reach_back(tmp_path: Path, scene: Path) -> None:
    pcm, spans = audio(SELECT)
    talk = PushToTalk("tap")
    reports, stats = run(tmp_path, scene, pcm, talk, [(spans[0][1] + 0.2, talk.tap)])
    assert reports == [] and stats.ignored == 1, stats.heard
    assert talk.listening(time.monotonic())  # still open for the next utterance


def test_hold_to_talk_takes_only_what_is_said_while_held(tmp_path: Path, scene: Path) -> None:
    pcm, spans = audio(SELECT, 1.0, SEND, 1.0, OPEN)
    talk = PushToTalk("hold")
    held = spans[0]
    reports, stats = run(tmp_path, scene, pcm, talk,
                         [(held[0] - 0.3, talk.down), (held[1], talk.up)])
    # Held: "select doctor" runs without the wake phrase. "Click send" after the release is
    # ignored; "hey juniper, open the calendar" outside the hold runs on the wake phrase.
    assert [r.decision for r in reports] == ["executed", "executed"], stats.heard
    assert [h["via"] for h in stats.heard] == ["switch", "none", "wake"]
    assert selected(scene) == ["Doctor"]
    assert element(scene, "Status").value == "Draft"  # not sent
    assert "Calendar" in SimDesktop.from_file(scene).snapshot().applications


def test_a_press_hears_against_the_same_closed_set_as_the_wake_phrase(
    tmp_path: Path, scene: Path
) -> None:
    """Push-to-talk wraps the session's sink: its screen names (applications too) still reach
    the closed set, so "open calendar" after a press is a sentence of it."""
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.stt_closed import screen_reader

    sink = SessionSink(Journal(str(tmp_path / "journal.sqlite")),
                       lambda: opened_desktop(f"sim:{scene}"),
                       build_planner(Settings(llm="off")))
    names, words_of = screen_reader(TalkingSink(sink, PushToTalk("tap")))
    read = names()
    assert read == sink.screen_names() and read[1], read
    assert "open calendar" in closed_set(*read)
    assert words_of(read) == sink.vocabulary()
