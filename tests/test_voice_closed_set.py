"""Closed-set recognition (issue 15) with real engines: the grammar's sentences on the live screen
heard by Whisper tiny.en, open Whisper when none fits, and a wake decision that does not depend on
what is on screen. Speech from Piper and espeak-ng's plain en-us voice (the tuning voices)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop
from appliance.journal.application import Journal
from appliance.session import TurnReport
from appliance.settings import Settings
from appliance.voice.audio_file import PIPELINE_RATE, Pcm
from appliance.voice.closed_set import SentenceSet, closed_set, skeletons
from appliance.voice.closed_whisper import ClosedWhisperRecognizer
from appliance.voice.commands import VoiceOptions, engines, run_voice, speech_pcm
from appliance.voice.engines import Engines
from appliance.voice.session_sink import SessionSink
from appliance.voice.sources import WavSource
from appliance.voice.stt_whisper import TRAILING_SILENCE_S
from appliance.wiring import build_planner, opened_desktop

ROOT = Path(__file__).resolve().parents[1]
SCENES = {
    "messages": ROOT / "appliance/scenes/messages.json",
    "mail": ROOT / "appliance/bench/scenes/mail.json",
    "radio": ROOT / "appliance/bench/scenes/radio.json",
    "settings": ROOT / "appliance/bench/scenes/settings.json",
}


@pytest.fixture(scope="module")
def loaded() -> Engines:
    return engines("whisper")


@pytest.fixture(scope="module")
def recognizer(loaded: Engines) -> ClosedWhisperRecognizer:
    assert loaded.whisper is not None
    return ClosedWhisperRecognizer(loaded.whisper)


def names(scene: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    snap = SimDesktop(Scene.model_validate_json(scene.read_text())).snapshot()
    return tuple(snap.names()), (*snap.applications, *snap.launchable)


def sentences(scene: str) -> SentenceSet:
    return closed_set(*names(SCENES[scene]))


def segment(text: str, voice: str = "piper") -> bytes:
    """One utterance as the VAD hands it over: a little silence either side."""
    pad = bytes(int(0.3 * PIPELINE_RATE) * 2)
    return pad + speech_pcm(text, voice) + pad + bytes(int(TRAILING_SILENCE_S * 16000) * 2)


# -- the sentence set ------------------------------------------------------------------------


def test_the_set_holds_the_screens_commands_and_no_free_text() -> None:
    messages = sentences("messages")
    for said in ("tick urgent", "click send", "select grandma", "undo that", "yes",
                 "what is on the screen", "open calendar"):
        assert said in messages, said
    assert "tick large text" not in messages  # a name from another screen
    assert "tick large text" in sentences("settings")
    # Dictation and free text are not listed: those go to open transcription.
    assert not any("{" in s for s in messages.sentences)
    assert all(not s.startswith("type ") for s in messages.sentences)


def test_the_set_is_rebuilt_only_when_the_screens_names_change() -> None:
    skeletons()  # the templates' part, once per process
    first = sentences("radio")
    assert sentences("radio") is first  # same names: the cached set
    assert sentences("mail") is not first
    targets, apps = names(SCENES["radio"])
    changed = closed_set((*targets, "Classic Rock"), apps)
    assert changed is not first and "select classic rock" in changed


# -- recognition -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("voice", "scene", "said"),
    [
        ("piper", "messages", "tick urgent"),
        ("piper", "radio", "select jazz fm"),
        ("espeak", "settings", "tick large text"),
        ("espeak", "messages", "click send"),
    ],
)
def test_a_closed_set_command_is_heard_as_its_sentence(
    recognizer: ClosedWhisperRecognizer, voice: str, scene: str, said: str
) -> None:
    heard = recognizer.hear(segment(f"hey juniper, {said}", voice), sentences(scene))
    assert heard.wake and heard.path == "closed", heard
    assert heard.text == f"hey juniper {said}", heard


@pytest.mark.parametrize(
    ("said", "words"),
    [
        ("type hello grandma in the message box", ("hello", "grandma", "message")),
        ("what's the weather like tomorrow", ("weather", "tomorrow")),
    ],
)
def test_out_of_set_speech_falls_back_to_open_whisper(
    recognizer: ClosedWhisperRecognizer, said: str, words: tuple[str, ...]
) -> None:
    heard = recognizer.hear(segment(f"hey juniper, {said}"), sentences("messages"))
    assert heard.wake and heard.path == "open", heard
    for word in words:
        assert word in heard.text.lower(), heard


# -- the wake phrase -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "voice", "wake"),
    [
        ("hey juniper, click send", "piper", True),
        ("hey juniper, select the doctor", "espeak", True),
        ("click send", "piper", False),
        ("open the calendar", "espeak", False),
    ],
)
def test_the_wake_decision_is_the_same_on_every_screen(
    recognizer: ClosedWhisperRecognizer, said: str, voice: str, wake: bool
) -> None:
    audio = segment(said, voice)
    heard = {scene: recognizer.hear(audio, sentences(scene)) for scene in SCENES}
    assert {h.wake for h in heard.values()} == {wake}, heard
    assert len({h.greedy for h in heard.values()}) == 1, heard  # the wake pass saw no screen


# -- through the pipeline, into a real Session on the sim desktop ----------------------------


def _element(scene: Path, name: str) -> Any:
    snap = SimDesktop.from_file(scene).snapshot()
    return next(n for n in snap.nodes if n.name == name)


def test_spoken_commands_act_on_the_scene_closed_first_open_second(
    tmp_path: Path, loaded: Engines
) -> None:
    scene = tmp_path / "scene.json"
    shutil.copyfile(SCENES["messages"], scene)
    journal = Journal(str(tmp_path / "journal.sqlite"))
    reports: list[TurnReport] = []
    planner = build_planner(Settings(llm="off"))
    sink = SessionSink(journal, lambda: opened_desktop(f"sim:{scene}"), planner, reports.append)
    gap = bytes(int(1.2 * PIPELINE_RATE) * 2)
    pcm = gap
    for line in ("Hey juniper, tick urgent.", "Hey juniper, type hello grandma in the message box.",
                 "Tick urgent."):  # no wake phrase, no window: nothing happens
        pcm += speech_pcm(line, "piper") + gap
    stats = run_voice(WavSource(pcm=Pcm(pcm, PIPELINE_RATE)), sink, loaded, None,
                      VoiceOptions(recognizer="closed"))
    engines_heard = [h["engine"] for h in stats.heard]
    assert engines_heard == ["closed:whisper", "open:whisper", "closed:whisper"], stats.heard
    assert reports[0].transcript == "tick urgent"
    assert "hello grandma" in reports[1].transcript.lower()
    assert [r.decision for r in reports] == ["executed", "executed"], reports
    assert "checked" in _element(scene, "Urgent").states
    assert "hello grandma" in _element(scene, "Message").value.lower()
    assert stats.ignored == 1
