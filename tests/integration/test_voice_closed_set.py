"""Closed-set recognition (issue 15) with real engines: the grammar's sentences on the live screen
heard by Whisper tiny.en, open Whisper when none fits, and a wake decision that does not depend on
what is on screen. Speech from Piper and espeak-ng's plain en-us voice (the tuning voices)."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pytest

from appliance.audit.timeline import timeline
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar.planner import GrammarPlanner
from appliance.intents.grammar.targets import ASK_FROM
from appliance.intents.grammar.wording import words
from appliance.intents.keys import letters_alike
from appliance.journal.application import Journal
from appliance.policy.doubts import Doubt, doubt_reason
from appliance.session import TurnReport
from appliance.session_sink import SessionSink
from appliance.settings import Settings, WakeCheckName
from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, load_wav
from appliance.voice.audio.sources import WavSource
from appliance.voice.commands import VoiceOptions, engines, run_voice, speech_pcm
from appliance.voice.engines import Engines
from appliance.voice.hearing import closed_whisper
from appliance.voice.hearing.closed_set import SentenceSet, closed_set, skeletons, values_named
from appliance.voice.hearing.closed_whisper import (
    DICTATION_FLOOR,
    FULL_WINDOW,
    LETTER_MARGIN,
    QUICK_WINDOW,
    SPOTTER_SURE,
    SPOTTER_VETO,
    WAKE_CHECKS,
    ClosedWhisperRecognizer,
    Heard,
    WhisperScorer,
    apart,
    final_numbers,
    looping,
    wake_rule,
    written,
)
from appliance.voice.hearing.stt_whisper import TRAILING_SILENCE_S
from appliance.voice.hearing.vad import VadSettings
from appliance.voice.hearing.wake import WakeGate
from appliance.voice.hearing.wake_spotter import (
    ENDS,
    FEATURES,
    FIRST,
    HEARD_BYTES,
    WINDOW,
    SpeechEmbedding,
    WakeSpotter,
    speech_embedding,
    windows,
)
from appliance.voice.sink import Reply, ScreenNames, Utterance, screen_names_of, vocabulary_of
from appliance.wiring import build_planner, opened_desktop
from appliance_lab.bench.barge_in import voiced
from appliance_lab.bench.spoken.corpus import clean_speech
from appliance_lab.bench.spoken.outcome import scene_path
from appliance_lab.bench.spoken.voices import Voice

SCENES = {name: scene_path(name) for name in ("messages", "mail", "radio", "settings")}


@pytest.fixture(scope="module")
def loaded() -> Engines:
    return engines("whisper")


@pytest.fixture(scope="module")
def recognizer(loaded: Engines) -> ClosedWhisperRecognizer:
    assert loaded.whisper is not None
    return ClosedWhisperRecognizer(loaded.whisper)


def names(scene: Path) -> ScreenNames:
    return screen_names_of(SimDesktop.from_file(scene).snapshot())


MISLEADING = ("I hate you", "Number", "Hi Jenny", "Juniper Berry", "Send")


def vocabulary(scene: Path) -> list[str]:
    targets, apps, *_numbers = names(scene)
    return [*targets, *apps, "click", "type", "yes", "no"]


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


def test_the_nearest_sentences_are_kept_per_screen_and_given_as_found() -> None:
    """Heard again on the same screen, the same words get the same sentences without another
    search; a kept answer cannot be changed by whoever asked before."""
    messages = sentences("messages")
    first = messages.nearest("Click, send!", 6)
    assert "click send" in first and len(first) == 6
    first.clear()
    assert messages.nearest("click send", 6) == SentenceSet(
        messages.sentences, messages.sounds, 0.0, messages.meanings).nearest("click send", 6)
    assert messages.nearest("click send", 2) != messages.nearest("click send", 6)


def test_a_name_is_ticked_only_if_it_can_be_and_picking_a_button_presses_it() -> None:
    """"tick send" of a button is a sentence the real planner never acts on, and "pick send"
    presses it as "click send" does; both sat beside "click send" as other meanings, where a
    person's takes of "click send" were doubted for them. A name is ticked only when a check
    box or switch bears it, and picking what is not a list item or tab means pressing it,
    unless the screen's roles are not known."""
    messages = sentences("messages")
    planner, snapshot = GrammarPlanner(), SimDesktop.from_file(SCENES["messages"]).snapshot()
    assert "tick urgent" in messages and "untick urgent" in messages
    assert "click send" in messages and "tick send" not in messages
    assert "turn send off" not in messages
    assert planner.plan("tick send", snapshot).intent is None  # not a sentence to act on
    assert messages.means_alike("pick send", "click send")
    assert not messages.means_alike("pick grandma", "click grandma")  # a list item: selected
    for said in ("pick send", "click send"):
        intent = planner.parse(said, snapshot)
        assert intent is not None and intent.model_dump()["intent"] == "activate", said
    targets, apps, *_ = names(SCENES["messages"])
    unknown = closed_set(targets, apps)
    assert "tick send" in unknown and "tick urgent" in unknown
    assert not unknown.means_alike("pick send", "click send")


def test_picking_a_check_box_ticks_it_as_the_planner_does() -> None:
    """"pick urgent" ticks the check box, as "tick urgent" and "select urgent" do (pressing it
    would untick a ticked one): so "tick urgent", heard as "pick urgent", is the same command,
    and a person's takes of one are not doubted for the other."""
    messages = sentences("messages")
    planner, snapshot = GrammarPlanner(), SimDesktop.from_file(SCENES["messages"]).snapshot()
    for said in ("tick urgent", "pick urgent", "choose urgent", "select urgent"):
        assert messages.means_alike(said, "tick urgent"), said
        intent = planner.parse(said, snapshot)
        assert intent is not None and intent.model_dump()["intent"] == "set_value", said
        assert intent.model_dump()["value"] is True, said
    assert not messages.means_alike("click urgent", "tick urgent")  # pressed: it toggles


def test_the_set_is_rebuilt_only_when_the_screens_names_change() -> None:
    skeletons()  # the templates' part, once per process
    first = sentences("radio")
    assert sentences("radio") is first  # same names: the cached set
    assert sentences("mail") is not first
    targets, apps, *numbers = names(SCENES["radio"])
    changed = closed_set((*targets, "Classic Rock"), apps, *numbers)
    assert changed is not first and "select classic rock" in changed


def test_every_value_of_a_list_is_said_in_the_words_the_first_is() -> None:
    """The capped product once kept "set the volume to the maximum" but not "... minimum",
    and Whisper's "minimum" was then scored only against "maximum" sentences. Each wording
    kept for one value of a list is kept for the others, and the real planner reads each."""
    radio = sentences("radio")
    planner, snapshot = GrammarPlanner(), SimDesktop.from_file(SCENES["radio"]).snapshot()
    for said, value in [("set the volume to the maximum", 100.0),
                        ("set the volume to the minimum", 0.0)]:
        assert said in radio, said
        intent = planner.parse(said, snapshot)
        assert intent is not None and intent.model_dump()["value"] == value, (said, intent)
    ups = [s for s in radio.sentences if s.startswith("turn the volume up ")]
    assert ups and all(s.replace(" up ", " down ", 1) in radio for s in ups), ups


def test_a_sentence_that_runs_on_within_its_last_word_is_known() -> None:
    """A pause after "select tab" may be inside "select table": the person's takes do not end
    the utterance there."""
    names = closed_set(("Tab", "Table", "Send"), ("Files",))
    assert "select tab" in names and "select table" in names
    assert names.runs_on("select tab") and not names.runs_on("select table")
    assert not names.runs_on("click send") and not names.runs_on("open files")
    assert not names.runs_on("scroll down")  # "scroll downwards" means the same


def test_a_name_said_to_scroll_means_something_only_with_two_scroll_panes() -> None:
    """Where "scroll down in contacts" scrolls what "scroll down" does (one pane or none),
    the two mean one thing and "scroll down" is said in full; with two panes, or not knowing,
    the person is waited for."""
    targets, apps = ("Contacts", "Send"), ("Files",)
    for panes in (0, 1):
        one = closed_set(targets, apps, panes=panes)
        assert one.means_alike("scroll down", "scroll down in contacts")
        assert one.said_in_full("scroll down") and one.said_in_full("scroll up"), panes
    for panes in (2, None):
        two = closed_set(targets, apps, panes=panes)
        assert not two.means_alike("scroll down", "scroll down in contacts")
        assert not two.said_in_full("scroll down"), panes


def test_a_sentence_said_in_full_means_what_every_sentence_going_on_from_it_means() -> None:
    """The real grammar planner on the real scene: nothing the set lets follow a sentence said
    in full does another thing without asking; a sentence that may go on to mean more is not
    said in full."""
    messages = sentences("messages")
    for said in ("tick urgent", "click send", "undo that", "yes", "no", "open messages",
                 "scroll down"):  # the screen has no scroll pane for a name to pick
        assert messages.said_in_full(said), said
    for said in ("send", "turn it"):
        assert not messages.said_in_full(said), said
    assert not messages.said_in_full("send grandma a hug")  # not in the set at all
    # The element named Message, and in an unlisted wording the content: "read message box"
    # may follow, so the person is waited for.
    assert "read message" in messages and not messages.said_in_full("read message")
    planner, snapshot = GrammarPlanner(), SimDesktop.from_file(SCENES["messages"]).snapshot()

    def action(text: str) -> object:
        """What the planner does without asking first (None: it would ask, or not act)."""
        intent = planner.parse(text, snapshot)
        if intent is None or intent.confidence < ASK_FROM:
            return None
        return intent.model_dump(exclude={"words", "confidence"})

    ordered = sorted(messages.sentences)
    checked = 0
    for i, said in enumerate(ordered[::97]):
        going_on = [s for s in ordered[i * 97 + 1:i * 97 + 40] if s.startswith(said + " ")]
        if not going_on or not messages.said_in_full(said) or action(said) is None:
            continue  # the set lists sentences no screen makes sense of ("push higher status")
        checked += 1
        for longer in going_on:
            # The longer sentence does the same, or nothing without asking (on this set's
            # odder sentences a role word can make the planner doubt the name).
            assert action(longer) in (None, action(said)), (said, longer)
    assert checked >= 10


def test_a_number_is_listed_for_what_takes_one_and_means_its_value() -> None:
    """"volume to 80" is a sentence of the radio screen, and the real planner sets the volume
    to 80 from it; a number is said only to a slider, spin button or dial. "50" may go on as
    "50 percent", a share of the range on a slider that is not 0..100 (text size, 1..5), so
    there it is not said in full; on a 0..100 slider the two are one, and it is."""
    radio, settings = sentences("radio"), sentences("settings")
    planner = GrammarPlanner()
    snapshots = {name: SimDesktop.from_file(SCENES[name]).snapshot()
                 for name in ("radio", "settings")}
    for scene, said, value in [
        ("radio", "volume to 80", 80.0), ("radio", "the volume at 35", 35.0),
        ("radio", "volume 0", 0.0), ("radio", "volume to 100 percent", 100.0),
        ("settings", "brightness at 50", 50.0), ("settings", "text size to 3", 3.0),
        ("settings", "text size to 50 percent", 3.0),
    ]:
        assert said in (radio if scene == "radio" else settings), said
        intent = planner.parse(said, snapshots[scene])
        assert intent is not None and intent.model_dump()["value"] == value, (said, intent)
        assert (radio if scene == "radio" else settings).number(said) is not None
    assert "jazz fm to 80" not in radio and "volume to 101" not in radio
    assert radio.number("select radio 4") is None  # a name's digit is not a number said
    mail = sentences("mail")  # no slider: only keys are said with a digit there
    assert all(mail.number(s) is None for s in mail.sentences)
    assert all(mail.keys_said(s) for s in mail.sentences if any(c.isdigit() for c in s))
    assert names(SCENES["settings"]).percent_alike == ("Brightness",)  # not Text size, 1..5
    assert not settings.said_in_full("text size to 50")
    assert settings.said_in_full("text size to 50 percent")
    assert settings.said_in_full("brightness at 50") and radio.said_in_full("volume to 80")
    assert radio.number("volume to 80 percent") == radio.number("volume to 80") == "80"


def test_every_key_and_shortcut_is_listed_and_means_what_the_planner_presses() -> None:
    """"press control s" (every editor's save) is a sentence of every screen. The capped
    product reached only the first dozen keys, so in FeatherPad "press control s" was heard as
    the nearest listed sentence, "press control esc", and Ctrl+Escape was pressed unasked."""
    messages = sentences("messages")
    planner = GrammarPlanner()
    snapshot = SimDesktop.from_file(SCENES["messages"]).snapshot()
    for said in ("press control s", "control s", "control z", "press alt f4", "press f5",
                 "press page down", "press control shift t"):
        assert said in messages, said
    assert "press control control s" not in messages  # one key said twice is not a shortcut
    assert "press s" not in messages and "press 5" not in messages  # near "press send"
    meanings = dict(zip(messages.sentences, messages.meanings, strict=True))
    keys = [s for s, m in meanings.items() if m is not None and m[0] == "press_key"]
    assert len(keys) > 2000
    assert messages.keys_said("press alt f4") == {"f4"} and messages.keys_said("control s") == {"s"}
    assert not messages.keys_said("press page down") and not messages.keys_said("click send")
    # A key is never guessed: the keys a sentence names are weighed against those Whisper wrote.
    ctrl_s = {("modifier", "ctrl"), ("key", "s")}
    assert messages.values("press control s") == ctrl_s
    assert messages.values("press control plus") == {("modifier", "ctrl"), ("key", "plus")}
    assert messages.values("press the enter key") == {("key", "Return")}
    assert not messages.values("copy that") and not messages.values("click send")
    assert values_named(words("Press Ctrl+S.")) == ctrl_s  # not "plus": "+" is no word
    assert values_named(words("hit page up")) >= {("key", "Page_Up")}
    for said in keys[::13]:
        intent = planner.parse(said, snapshot)
        assert intent is not None, said
        slots = dict(meanings[said][1])  # type: ignore[index]
        mods = tuple(slots[m] for m in ("mod1", "mod2") if m in slots)
        assert (intent.model_dump()["key"], intent.model_dump()["modifiers"]) == (
            slots["key"], mods), said


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
    audio = segment(f"hey juniper, {said}", voice)
    heard = recognizer.hear(audio, sentences(scene), vocabulary(SCENES[scene]))
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
    heard = recognizer.hear(segment(f"hey juniper, {said}"), sentences("messages"),
                            vocabulary(SCENES["messages"]))
    # A frame that changes nothing Whisper wrote leaves dictation open.
    assert heard.wake and heard.path == "open" and not heard.framed, heard
    for word in words:
        assert word in heard.text.lower(), heard


@pytest.mark.parametrize(
    ("voice", "scene", "said", "sentence"),
    [("piper", "radio", "volume at thirty five", "volume at 35"),
     ("espeak", "radio", "volume to five", "volume to 5"),
     # espeak-ng's "brightness at fifty" went open when sentences were written as Whisper
     # writes them ("brightness", one token, scores below the screen's "Brightness", two):
     # docs/measurements/voice-corpus.md, "Sentences written as Whisper writes them (s19)".
     ("piper", "settings", "brightness at fifty", "brightness at 50")],
)
def test_a_number_said_to_a_slider_is_heard_as_a_sentence_of_the_screen(
    recognizer: ClosedWhisperRecognizer, voice: str, scene: str, said: str, sentence: str
) -> None:
    """Before numbers were listed these went to open transcription (right, but slower and
    unweighed)."""
    heard = recognizer.hear(segment(f"hey juniper, {said}", voice), sentences(scene),
                            vocabulary(SCENES[scene]))
    assert (heard.text, heard.path) == (f"hey juniper {sentence}", "closed"), heard


@pytest.mark.parametrize(("command", "numbers"), [
    ("volume to 80", {"80"}), ("volume to 80 percent", {"80"}), ("volume 280", {"280", "80"}),
    ("volume 2 a d", set()), ("volume 205", {"205"}), ("volume play", set()), ("", set()),
])
def test_only_the_number_a_command_ends_with_may_be_heard(command: str, numbers: set[str]) -> None:
    assert final_numbers(command) == numbers


def test_a_sentence_is_scored_as_whisper_writes_it_not_as_the_screen_does(
    recognizer: ClosedWhisperRecognizer,
) -> None:
    """The screen writes "Send" and "Urgent"; Whisper writes "click send." and, forced to
    either, finds its own writing likelier (espeak-ng voices of neither corpus part, on which
    it wrote "click and", "click in", "take a look"). Scored as the screen writes them, two of
    these "click send" went to open transcription as "click in"."""
    assert written("click send", "Hey Juniper, click and.", "Hey Juniper, ") == (
        "Hey Juniper, click send.")
    assert written("select jazz fm", "Select Jazz FM", "") == "Select Jazz FM."
    tokenizer, messages = recognizer.scorer.tokenizer, sentences("messages")
    higher = heard = 0
    for name, rate, pitch in (("en-029+Robert", 165, 30), ("en-us+Andy", 155, 50),
                              ("en-gb-x-gbclan+travis", 130, 35), ("en+Mr_serious", 150, 50)):
        voice = Voice(engine="espeak", name=name, rate=rate, pitch=pitch)
        for said, as_shown in (("click send", "click Send"), ("tick urgent", "tick Urgent")):
            pcm = _said(voice, f"Hey juniper, {said}.")
            encoded, frames = recognizer.scorer.encode(
                np.frombuffer(pcm, "<i2").astype(np.float32) / 32768)
            ours, screens = recognizer.scorer.score(encoded, frames, recognizer._plain, [
                tokenizer.encode(f" Hey Juniper, {text}.") for text in (said, as_shown)])
            higher += ours > screens
            if said == "click send":
                got = recognizer.hear(pcm, messages, vocabulary(SCENES["messages"]))
                heard += (got.path, got.best) == ("closed", said)  # done, or asked about
    assert higher >= 7 and heard >= 3, (higher, heard)


def test_a_number_is_never_guessed(recognizer: ClosedWhisperRecognizer) -> None:
    """Piper's "volume to eighty" is written "Volume 280." by Whisper. With every sentence near
    it scored, "volume 20" won (a short prefix's tokens are likelier on average); only the
    number Whisper ended with may be taken, and "280" is also "to 80"."""
    heard = recognizer.hear(segment("hey juniper, volume to eighty"), sentences("radio"),
                            vocabulary(SCENES["radio"]))
    assert "280" in heard.greedy, heard  # the case this test is about still arises
    assert (heard.text, heard.path) == ("hey juniper volume 80", "closed"), heard


def _said(voice: Voice, text: str) -> bytes:
    pad = bytes(int(0.3 * PIPELINE_RATE) * 2)
    tail = pad + bytes(int(TRAILING_SILENCE_S * PIPELINE_RATE) * 2)
    return pad + clean_speech(voice, text) + tail


def test_a_key_whisper_did_not_write_is_asked_about_never_pressed(
    recognizer: ClosedWhisperRecognizer,
) -> None:
    """In FeatherPad "press control s", written "press control lass", was taken as the nearest
    sentence, "press control plus", and Ctrl+plus was pressed unasked. espeak-ng variants of
    neither corpus part, on which Whisper wrote no "s" ("Control Less", "press control."): the
    nearest sentence (mostly the right one) is only ever asked about."""
    voices = [Voice(engine="espeak", name=name, rate=rate, pitch=pitch) for name, rate, pitch in (
        ("en-029+Steph3", 170, 45), ("en-gb-x-gbcwmd+Caleb", 165, 40),
        ("en-029+Henrique", 145, 45), ("en-029+Robert", 165, 30), ("en-us-nyc+m6", 160, 70),
        ("en-gb-x-gbclan+travis", 130, 35))]
    messages = sentences("messages")
    unwritten = asked_right = done = 0
    for voice in voices:
        heard = recognizer.hear(_said(voice, "Hey juniper, press control s."), messages,
                                vocabulary(SCENES["messages"]))
        if ("key", "s") in values_named(words(heard.greedy)):
            continue  # Whisper wrote it on this CPU's backend: nothing to guess
        unwritten += 1
        asked_right += heard.doubtful and heard.best == "press control s"
        # Done unasked only if the decode with the screen's names wrote the "s" (none does
        # here; one may on another CPU's backend). Before, all five right guesses were done.
        done += heard.path == "closed" and not heard.doubtful
    assert unwritten >= 3 and asked_right >= 2 and done <= 1, (unwritten, asked_right, done)


def _weighed_and_not(recognizer: ClosedWhisperRecognizer, monkeypatch: pytest.MonkeyPatch,
                     pcm: bytes) -> dict[float, Heard]:
    """The utterance heard on Messages without the letter weighing (-inf) and with it."""
    heard = {}
    for margin in (-math.inf, LETTER_MARGIN):
        monkeypatch.setattr(closed_whisper, "LETTER_MARGIN", margin)
        heard[margin] = recognizer.hear(pcm, sentences("messages"),
                                        vocabulary(SCENES["messages"]))
    return heard


def _wrong_key_at_once(heard: Heard, key: str) -> bool:
    command = heard.text.removeprefix("hey juniper ")
    return (heard.path == "closed" and not heard.doubtful
            and bool(sentences("messages").keys_said(command))
            and command != f"press control {key}")


LETTER_VOICES = (("en-029+Steph3", 170, 45), ("en-029+Robert", 165, 30), ("en+m2", 170, 40),
                 ("en+Mr_serious", 150, 50))
"""espeak-ng variants of neither corpus part."""


def test_a_letter_whisper_may_have_mixed_up_with_an_alike_one_is_asked_about(
    recognizer: ClosedWhisperRecognizer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whisper writes espeak-ng's "c", "t" and "p" as "z", "d" and "b" as readily as rightly,
    and each is a sentence of the set: Ctrl+Z was pressed for "press control c". The letter it
    wrote is weighed against those whose names rhyme with it and asked about unless it wins by
    LETTER_MARGIN; without that weighing most of these are pressed wrong, unasked."""
    wrong_unasked = dict.fromkeys((-math.inf, LETTER_MARGIN), 0)
    asked_as_alike = 0
    for name, rate, pitch in LETTER_VOICES:
        voice = Voice(engine="espeak", name=name, rate=rate, pitch=pitch)
        for letter in "ctp":
            pcm = _said(voice, f"Hey juniper, press control {letter}.")
            for margin, heard in _weighed_and_not(recognizer, monkeypatch, pcm).items():
                wrong_unasked[margin] += _wrong_key_at_once(heard, letter)
                # Why it asks, for the caregiver's trace: "... C may have been Z or T".
                asked_as_alike += heard.doubt.startswith(f"{Doubt.LETTER_ALIKE}: ")
    assert wrong_unasked[-math.inf] >= 4 and wrong_unasked[LETTER_MARGIN] == 0, wrong_unasked
    # Each letter taken wrong without the weighing is asked about as a letter alike with it.
    assert asked_as_alike >= wrong_unasked[-math.inf], asked_as_alike


EIGHT_VOICES = (("en+m2", 170, 40), ("en+Mr_serious", 150, 50), ("en-us+Andy", 155, 50),
                ("en-gb-x-gbcwmd+Caleb", 165, 40))
"""espeak-ng variants of neither corpus part whose "press control a" and "press control 8"
Whisper writes as sentences of the set."""


def test_a_letter_and_a_digit_whose_names_rhyme_are_weighed_against_each_other(
    recognizer: ClosedWhisperRecognizer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whisper wrote espeak-ng's "press control a" as "press control 8" for 23 of 60 tuning
    items, and Ctrl+8 was pressed unasked. "a" and "8" ("eight") are weighed against each
    other as rhyming letters are; an "8" Whisper is sure of is still pressed at once."""
    assert "8" in letters_alike("a") and "a" in letters_alike("8")
    assert "3" in letters_alike("c") and letters_alike("f5") == ""
    wrong_unasked = dict.fromkeys((-math.inf, LETTER_MARGIN), 0)
    asked_as_alike = eights_at_once = 0
    for name, rate, pitch in EIGHT_VOICES:
        voice = Voice(engine="espeak", name=name, rate=rate, pitch=pitch)
        for key in "a8":
            pcm = _said(voice, f"Hey juniper, press control {key}.")
            both = _weighed_and_not(recognizer, monkeypatch, pcm)
            for margin, heard in both.items():
                wrong_unasked[margin] += _wrong_key_at_once(heard, key)
            heard = both[LETTER_MARGIN]
            asked_as_alike += heard.doubt in (f"{Doubt.LETTER_ALIKE}: 8 may have been A",
                                              f"{Doubt.LETTER_ALIKE}: A may have been 8")
            eights_at_once += (key == "8" and heard.path == "closed" and not heard.doubtful
                               and heard.text == "hey juniper press control 8")
    assert wrong_unasked[-math.inf] >= 1 and wrong_unasked[LETTER_MARGIN] == 0, wrong_unasked
    assert asked_as_alike >= 2 and eights_at_once >= 2, (asked_as_alike, eights_at_once)


def test_a_rival_as_long_is_weighed_from_the_first_token_it_differs_in() -> None:
    own = ([1, 2, 3, 9], [-0.1, -0.1, -0.5, -0.1])
    assert apart(own, ([1, 2, 4, 9], [-0.1, -0.1, -3.5, -0.1])) == pytest.approx(1.5)
    # Of another length, the tails do not line up: the whole sentences are weighed.
    assert apart(own, ([1, 2, 5, 4, 9], [-0.1, -0.1, -4.0, -0.9, -0.1])) == pytest.approx(0.84)


def test_a_letter_written_over_and_over_is_a_loop_not_words_to_write() -> None:
    assert looping("Hey Juniper, type c u s h u h h h h h h h h h h h h h h.")
    assert looping("Hit, " * 30)
    assert not looping("type c u at noon")
    assert not looping("no no no no no")  # someone who wants something stopped
    assert not looping("press control shift a")


DICTATIONS = ("type hello grandma in the message box", "search for prescription",
              "type see you at noon in the message box")


def test_words_to_write_heard_unsurely_are_read_back_not_typed(
    recognizer: ClosedWhisperRecognizer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whisper writes espeak-ng's "hello grandma" as "the low grandma" or "follow grandma", and
    the words went into the message box unasked. Words to write that it heard less surely than
    DICTATION_FLOOR are asked about ("Did you mean type the low grandma into Message?"); the
    same voices' words heard surely are typed at once. Voices of neither corpus part."""
    messages = sentences("messages")
    typed: dict[float, dict[bool, int]] = {-math.inf: {True: 0, False: 0},
                                           DICTATION_FLOOR: {True: 0, False: 0}}
    for name, rate, pitch in (*LETTER_VOICES, ("en-us+Andy", 155, 50),
                              ("en-gb-x-gbclan+travis", 130, 35),
                              ("en-gb-x-gbcwmd+Caleb", 165, 40), ("en-029+Henrique", 145, 45)):
        voice = Voice(engine="espeak", name=name, rate=rate, pitch=pitch)
        for said in DICTATIONS:
            pcm = _said(voice, f"Hey juniper, {said}.")
            for floor, counts in typed.items():
                monkeypatch.setattr(closed_whisper, "DICTATION_FLOOR", floor)
                heard = recognizer.hear(pcm, messages, vocabulary(SCENES["messages"]))
                if not heard.wake or (heard.path == "closed" and not heard.framed):
                    continue
                if heard.doubtful:
                    assert heard.doubt == Doubt.WORDS_UNSURE, heard
                else:
                    counts[heard.text == f"hey juniper {said}"] += 1
    wrong_before, wrong_now = typed[-math.inf][False], typed[DICTATION_FLOOR][False]
    # When written: 6 wrong typed unasked without the floor ("the lord grandma", "pre scrip
    # show"), 2 with it; the 3 right ones typed at once either way.
    assert wrong_before >= 4 and wrong_now <= wrong_before // 2, typed
    assert typed[DICTATION_FLOOR][True] >= 2, typed


def test_a_letter_in_the_spelling_alphabet_is_heard_and_pressed(
    recognizer: ClosedWhisperRecognizer,
) -> None:
    """"control charlie", which no other letter sounds like: a sentence of the set, heard
    without a question where "control c" is not, and only after a modifier ("press mike" may be
    a button named Mike)."""
    messages = sentences("messages")
    planner = GrammarPlanner()
    snapshot = SimDesktop.from_file(SCENES["messages"]).snapshot()
    for said, key, mods in (("press control charlie", "c", ("ctrl",)),
                            ("control shift tango", "t", ("ctrl", "shift")),
                            ("press alt x ray", "x", ("alt",))):
        assert said in messages, said
        intent = planner.parse(said, snapshot)
        assert intent is not None and (intent.model_dump()["key"],
                                       intent.model_dump()["modifiers"]) == (key, mods), said
    assert "press mike" not in messages and "press charlie" not in messages
    done = 0
    for name, rate, pitch in LETTER_VOICES:
        voice = Voice(engine="espeak", name=name, rate=rate, pitch=pitch)
        for word in ("charlie", "delta"):
            heard = recognizer.hear(_said(voice, f"Hey juniper, press control {word}."),
                                    messages, vocabulary(SCENES["messages"]))
            done += (heard.text, heard.path, heard.doubtful) == (
                f"hey juniper press control {word}", "closed", False)
    assert done >= 7, done


def test_an_extreme_whisper_wrote_is_not_swapped_for_its_opposite(
    recognizer: ClosedWhisperRecognizer,
) -> None:
    """espeak-ng's "set the volume to the minimum", written so by Whisper, was a sentence the
    capped set did not list; the nearest listed one was "... to the maximum", and the volume
    went to its maximum unasked. A listed sentence with the value Whisper wrote is taken."""
    radio = sentences("radio")
    taken = 0
    for name, rate, pitch in (("en-us", 175, 35), ("en-us", 150, 50), ("en", 135, 60)):
        voice = Voice(engine="espeak", name=name, rate=rate, pitch=pitch)  # tuning voices
        heard = recognizer.hear(_said(voice, "Hey juniper, set the volume to the minimum."),
                                radio, vocabulary(SCENES["radio"]))
        if "minimum" in heard.greedy:  # as Whisper wrote it
            assert "maximum" not in heard.best or heard.doubtful, heard
            taken += heard.path == "closed" and not heard.doubtful and heard.best in (
                "set volume to the minimum", "set the volume to the minimum")
    assert taken >= 2, taken


def test_dictation_is_framed_by_its_templates_words() -> None:
    """The words around free text are the grammar's (`SentenceSet.framed`); what stands between
    them is the words heard, and nothing but dictation fits a frame."""
    messages = sentences("messages")
    assert "send grandma a message saying see you soon" in messages.framed(
        "send grandma message settings see you soon", 3)
    assert messages.framed("type go over and in the message box", 3)[0] == (
        "type go over and in the message box")
    assert "reply saying sounds good" in sentences("mail").framed("replay saying sounds good", 3)
    for said in ("click and", "tick urgent", "what's on the screen", "press control s",
                 "send grandma"):
        assert not messages.framed(said, 3), said


def test_the_words_around_dictation_are_the_templates(recognizer: ClosedWhisperRecognizer) -> None:
    """Tuning voices on which Whisper garbles the words around the message ("send run model
    message saying see you soon", "send friends my message ..."): the template's words are
    scored around Whisper's, and the sentence is heard whole. Before, none of these six was."""
    messages = sentences("messages")
    right = 0
    for name, rate, pitch in (("en", 135, 60), ("en", 165, 45), ("en-us+Annie", 150, 50),
                              ("en-us+belinda", 140, 45), ("en-gb-x-gbclan+anika", 145, 40),
                              ("en-us-nyc+steph", 155, 50)):
        voice = Voice(engine="espeak", name=name, rate=rate, pitch=pitch)
        heard = recognizer.hear(
            _said(voice, "Hey juniper, send grandma a message saying see you soon."), messages,
            vocabulary(SCENES["messages"]))
        assert heard.wake, heard
        right += heard.framed and heard.text == (
            "hey juniper send grandma a message saying see you soon")
    assert right >= 4, right


# -- the quick window ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("voice", "scene", "said", "quick"),
    [("piper", "radio", "select jazz fm", True),
     # Through the quick window on the machines before; on an AVX2-only AMD EPYC the quick
     # window's decode fell short and the full window heard it, as right and as sure.
     ("espeak", "settings", "tick large text", False),
     # Through the quick window Whisper wrote "Hey Juniper, undo that. Hey Juniper, do that.":
     # scored, "don't do that" won; the first saying is what was said. With CTranslate2 on
     # oneDNN (AMD) rather than MKL (Intel) it wrote "and do that" twice, no sentence, so the
     # full window hears it: either way, never "don't do that".
     ("piper", "messages", "undo that", False)],
)
def test_a_sentence_of_the_screen_heard_freely_is_taken_from_the_quick_window(
    loaded: Engines, voice: str, scene: str, said: str, quick: bool
) -> None:
    assert loaded.whisper is not None
    spotter = ClosedWhisperRecognizer(loaded.whisper, wake_check=WAKE_CHECKS["spotter"])
    heard = spotter.hear(segment(f"hey juniper, {said}", voice), sentences(scene),
                         vocabulary(SCENES[scene]))
    assert (heard.text, heard.path, heard.doubtful) == (f"hey juniper {said}", "closed", False)
    assert heard.window_s == QUICK_WINDOW / 100 or not quick, heard


@pytest.mark.parametrize(
    ("said", "wake"),
    [("hey juniper, type hello grandma in the message box", True),  # open: heard again
     ("tick urgent", False),  # a sentence of the screen, but no wake phrase
     ("hey june, tick urgent", False)],  # a near miss the spotter is not sure of
)
def test_all_else_is_heard_through_the_full_window(
    loaded: Engines, said: str, wake: bool
) -> None:
    assert loaded.whisper is not None
    spotter = ClosedWhisperRecognizer(loaded.whisper, wake_check=WAKE_CHECKS["spotter"])
    heard = spotter.hear(segment(said), sentences("messages"), vocabulary(SCENES["messages"]))
    assert heard.wake is wake, heard
    assert heard.window_s == FULL_WINDOW / 100, heard


def test_an_utterance_too_long_for_the_quick_window_skips_it(
    loaded: Engines, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert loaded.whisper is not None
    recognizer = ClosedWhisperRecognizer(loaded.whisper, wake_check=WAKE_CHECKS["spotter"])
    windows: list[int] = []
    encode = recognizer.scorer.encode

    def spy(audio: Any, window: int = FULL_WINDOW) -> Any:
        windows.append(window)
        return encode(audio, window)

    monkeypatch.setattr(recognizer.scorer, "encode", spy)
    long = segment("hey juniper, type dear grandma, thank you for the lovely flowers, they are "
                   "on the kitchen table by the window and they make the whole room smell of "
                   "summer, I will ring you on sunday after lunch")
    assert len(long) / 2 / PIPELINE_RATE > QUICK_WINDOW / 100
    heard = recognizer.hear(long, sentences("messages"), vocabulary(SCENES["messages"]))
    assert heard.wake and "flowers" in heard.text.lower(), heard
    assert heard.spot is not None and heard.spot >= SPOTTER_SURE, heard  # else no quick pass
    assert windows == [FULL_WINDOW], windows
    recognizer.hear(segment("hey juniper, tick urgent"), sentences("messages"))
    assert windows[1] == QUICK_WINDOW, windows


# -- the wake phrase -------------------------------------------------------------------------


@pytest.mark.parametrize("check", ["command", "spotter"])
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
    recognizer: ClosedWhisperRecognizer, said: str, voice: str, wake: bool, check: str
) -> None:
    recognizer = ClosedWhisperRecognizer(recognizer.engine, wake_check=WAKE_CHECKS[check])
    audio = segment(said, voice)
    screens = {scene: (sentences(scene), vocabulary(SCENES[scene])) for scene in SCENES}
    # The issue's screen: names like what one voice's "hey juniper" was heard as when they were
    # in Whisper's prompt ("I hate you, number"), so that every command on it was ignored.
    screens["misleading"] = (closed_set(MISLEADING, ()), [*MISLEADING, "click", "type"])
    heard = {name: recognizer.hear(audio, s, v) for name, (s, v) in screens.items()}
    assert {h.wake for h in heard.values()} == {wake}, heard
    # The pass that decided the wake saw no screen. Which window gave the words may depend on
    # the screen (a sentence of it heard freely after a wake phrase the spotter was sure of),
    # the words through each may not.
    for window in {h.window_s for h in heard.values()}:
        assert len({h.greedy for h in heard.values() if h.window_s == window}) == 1, heard
    assert len({h.spot for h in heard.values()}) == 1, heard  # nor did the spotter
    assert (heard["messages"].spot is None) == (check != "spotter"), heard


JENNIFER = pytest.mark.xfail(strict=True, reason="a near miss the lenient check lets through")


def _by_both_voices(said: str, check: str, wake: bool, *marks: Any) -> list[Any]:
    """The case said by Piper and by espeak-ng: (said, voice, check, wake) each."""
    return [pytest.param(said, voice, check, wake, marks=marks) for voice in ("piper", "espeak")]


@pytest.mark.parametrize(
    ("said", "voice", "check", "wake"),
    [
        # Let through since the lenient check was tuned with female voices too (WAKE_MARGIN,
        # -6.0): "Juniper" forced on it scores -3.7 against the free words; refusing it costs 3
        # points of the tuning part's false rejects (docs/measurements/voice-corpus.md). Strict
        # xfail: a lenient rule that refuses it again shows here. The strict check refuses it.
        *_by_both_voices("hey jennifer, click send", "lenient", False, JENNIFER),
        *_by_both_voices("hey jennifer, click send", "strict", False),
        *_by_both_voices("hey june, open the calendar", "lenient", False),
        ("hey juniper, click send", "espeak", "lenient", True),
        ("hey juniper, click send", "espeak", "strict", True),
        # The spotter is sure of neither near miss (log-odds -4.8 for Piper, 4.2 for espeak-ng)
        # and leaves them to the command check.
        *_by_both_voices("hey june, open the calendar", "spotter", False),
        *_by_both_voices("hey juniper, click send", "spotter", True),
    ],
)
def test_a_near_miss_of_the_wake_phrase_is_not_taken_for_it_on_any_screen(
    recognizer: ClosedWhisperRecognizer, said: str, voice: str, check: str, wake: bool
) -> None:
    """The fixed prompt holds "Hey Juniper" and made these into it; the second opinion (the wake
    phrase forced on the audio with no prompt) tells them apart, the same on every screen."""
    recognizer = ClosedWhisperRecognizer(recognizer.engine, wake_check=WAKE_CHECKS[check])
    audio = segment(said, voice)
    heard = {scene: recognizer.hear(audio, sentences(scene), vocabulary(SCENES[scene]))
             for scene in SCENES}
    assert {h.wake for h in heard.values()} == {wake}, heard
    assert len({h.evidence for h in heard.values()}) == 1, heard  # no screen in it
    if not wake:  # the fixed pass alone takes it for the wake phrase: the test can fail
        alone = ClosedWhisperRecognizer(recognizer.engine, wake_check=None)
        assert alone.hear(audio, sentences("messages")).wake, "not a near miss of the first pass"
    if wake:  # what follows depends on the screen's sentences ("click save" on Settings)
        assert heard["messages"].text == "hey juniper click send", heard
        assert all(h.text.startswith("hey juniper click") for h in heard.values()), heard
        return
    # And the pipeline's gate does not take the words for the wake phrase either.
    for h in heard.values():
        decision = WakeGate().decide(h.text, 0.0, h.wake)
        assert decision.kind == "ignored", (h, decision)


@pytest.mark.parametrize("voice", ["piper", "espeak"])
def test_words_that_fit_a_dictation_frame_do_not_make_a_doubtful_wake_phrase_sure(
    recognizer: ClosedWhisperRecognizer, voice: str
) -> None:
    """A sentence of the screen after a doubtful wake phrase makes it sure; words that fit a
    dictation frame do not: both were taken so when they did. How doubtful this near miss is
    depends on the CPU (Piper's second opinion scored -2.21 against the strict check's -2.25 on
    an AVX2-only AMD EPYC, below it on the machines before), so the strict check alone must
    decide it, on every screen, whatever the frame's words."""
    rule = WAKE_CHECKS["spotter"]
    spotter = ClosedWhisperRecognizer(recognizer.engine, wake_check=rule)
    audio = segment("hey jennifer, reply saying sounds good", voice)
    for scene in SCENES:
        heard = spotter.hear(audio, sentences(scene), vocabulary(SCENES[scene]))
        assert heard.evidence is not None and rule.if_command is not None, heard
        # Doubtful: the spotter neither wakes nor vetoes, and the lenient check lets it by.
        assert not rule.spotted(heard.spot) and not rule.vetoed(heard.spot), heard
        assert rule.if_command.passes(heard.evidence), heard
        assert heard.wake == rule.sure.passes(heard.evidence), heard


def test_every_wake_check_a_caregiver_can_choose_has_a_rule() -> None:
    assert set(WAKE_CHECKS) == set(get_args(WakeCheckName))


@pytest.mark.parametrize(
    ("said", "check", "wake"),
    [
        # A near miss the lenient check lets through ("Juniper" forced on it scores -4.4
        # against the free words), then talk: taken leniently, not by the command check.
        ("hey jennifer, are you coming for lunch", "lenient", True),
        ("hey jennifer, are you coming for lunch", "strict", False),
        ("hey jennifer, are you coming for lunch", "command", False),
        # The same doubt before a command of the screen is taken: the command check's price.
        ("hey jennifer, click send", "command", True),
        # The wake phrase itself passes the strict part: taken whatever follows.
        ("hey juniper, are you coming for lunch", "command", True),
        ("hey juniper, click send", "command", True),
    ],
)
def test_the_command_check_takes_a_doubtful_wake_phrase_only_before_a_command(
    recognizer: ClosedWhisperRecognizer, said: str, check: str, wake: bool
) -> None:
    recognizer = ClosedWhisperRecognizer(recognizer.engine, wake_check=WAKE_CHECKS[check])
    heard = recognizer.hear(segment(said, "piper"), sentences("messages"),
                            vocabulary(SCENES["messages"]))
    assert heard.wake == wake, heard
    assert heard.evidence is not None, heard  # the fixed pass heard the wake phrase in each
    decision = WakeGate().decide(heard.text, 0.0, heard.wake)
    assert decision.kind == ("command" if wake else "ignored"), (heard, decision)
    if wake and said.endswith("click send"):
        assert heard.text == "hey juniper click send", heard


def test_the_command_check_takes_a_doubtful_wake_phrase_said_alone(
    recognizer: ClosedWhisperRecognizer,
) -> None:
    """People pause after the wake phrase and say the command in the window it opens. A
    tuning-part clip the strict part refuses (espeak-ng's linda variant, reverberant: "Hey
    Juniper" forced scores -2.75 against the free words) is taken by the command check."""
    from appliance_lab.bench.spoken.conditions import CONDITIONS
    from appliance_lab.bench.spoken.corpus import load_part, non_wake_audio

    voice = next(v for v in load_part("tune").voices if v.label == "espeak:en+linda@165/55")
    reverb = next(c for c in CONDITIONS if c.name == "reverb")
    audio = non_wake_audio("tune", voice, "hey juniper", reverb, None)
    audio += bytes(int(TRAILING_SILENCE_S * PIPELINE_RATE) * 2)
    heard = {check: ClosedWhisperRecognizer(recognizer.engine, wake_check=WAKE_CHECKS[check])
             .hear(audio, sentences("messages"), vocabulary(SCENES["messages"]))
             for check in ("strict", "command")}
    assert not heard["strict"].wake, heard
    assert heard["command"].wake, heard
    assert WakeGate().decide(heard["command"].text, 0.0, True).kind == "wake_only", heard


def test_the_spotter_overrules_the_command_check_either_way() -> None:
    """Below SPOTTER_VETO it refuses what the command check would take; at SPOTTER_SURE it wakes
    on its own; between them, or with no score, the command check decides alone."""
    spotter, command = WAKE_CHECKS["spotter"], WAKE_CHECKS["command"]
    assert (spotter.sure, spotter.if_command) == (command.sure, command.if_command)
    assert spotter.spots and not command.spots
    assert spotter.spotted(SPOTTER_SURE) and not spotter.spotted(np.nextafter(SPOTTER_SURE, 0))
    assert spotter.vetoed(SPOTTER_VETO - 0.01) and not spotter.vetoed(SPOTTER_VETO)
    for between in (SPOTTER_VETO, (SPOTTER_VETO + SPOTTER_SURE) / 2, None):
        assert not spotter.spotted(between) and not spotter.vetoed(between)
    assert not command.spotted(99.0) and not command.vetoed(-99.0)


def test_the_spotter_is_for_the_phrase_it_was_trained_on(
    recognizer: ClosedWhisperRecognizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another wake phrase gets the command check, said so by the rule's name, and so does every
    phrase where pyopen-wakeword (the models it reads) is missing; asking for the spotter on a
    phrase it does not know is refused rather than silently ignored."""
    spotter = WakeSpotter.load("hey juniper")
    assert spotter is not None and np.isfinite(spotter.hidden).all()
    assert spotter.hidden.shape[0] == spotter.mean.shape[0] == WINDOW * FEATURES
    assert WakeSpotter.load("hello computer") is None
    assert wake_rule("spotter", "Hey Juniper") == ("spotter", WAKE_CHECKS["spotter"])
    assert wake_rule("spotter", "hello computer") == ("command", WAKE_CHECKS["command"])
    assert wake_rule("strict", "hello computer") == ("strict", WAKE_CHECKS["strict"])
    with pytest.raises(ValueError, match="no wake spotter"):
        ClosedWhisperRecognizer(recognizer.engine, "hello computer", WAKE_CHECKS["spotter"])
    monkeypatch.setitem(sys.modules, "pyopen_wakeword", None)  # as if not installed
    assert WakeSpotter.load("hey juniper") is None
    assert wake_rule("spotter", "hey juniper") == ("command", WAKE_CHECKS["command"])


def test_the_spotter_reads_the_sound_alone() -> None:
    """openWakeWord's embedding of real speech (Piper, espeak-ng): one per 80 ms after the lead
    of silence; the wake phrase far above the sure floor, commands without it far below the
    veto, and silence below even odds (scored as 2.2 s of it, as anything shorter is)."""
    spotter = WakeSpotter.load("hey juniper")
    assert spotter is not None
    pad = bytes(int(0.3 * PIPELINE_RATE) * 2)
    for voice in ("piper", "espeak"):
        woken = pad + speech_pcm("Hey juniper, click send.", voice) + pad
        seconds = len(woken) / 2 / PIPELINE_RATE
        embedded = speech_embedding().embed(woken)
        assert embedded.shape[1] == FEATURES
        assert abs(len(embedded) - ((2.0 + seconds) / 0.08 - 8.5)) < 2, (len(embedded), seconds)
        assert spotter.score(woken) >= SPOTTER_SURE + 4, voice
        for said in ("Click send.", "Open the calendar."):
            assert spotter.score(pad + speech_pcm(said, voice) + pad) < SPOTTER_VETO, said
    assert len(speech_embedding().embed(pad)) <= ENDS[0]
    assert spotter.score(pad) < 0.0


def test_every_window_of_ends_is_scored_the_last_one_too() -> None:
    """The melspectrogram model reads 512 samples a frame: HEARD_BYTES holds the last scored
    window's audio and no more, and a score is that of the same windows cut from the whole
    utterance's embeddings (until s26 the window ending 2.0 s in was never scored)."""
    spotter = WakeSpotter.load("hey juniper")
    assert spotter is not None
    embedding = speech_embedding()
    assert len(embedding.embed(bytes(HEARD_BYTES), FIRST, ENDS[-1])) == ENDS[-1] - FIRST + 1
    assert len(embedding.embed(bytes(HEARD_BYTES - 2), FIRST, ENDS[-1])) == ENDS[-1] - FIRST
    long = segment("Hey juniper, type hello grandma in the message box.")
    whole = embedding.embed(long)
    assert len(whole) > ENDS[-1]
    by_end = dict(zip(ENDS, map(float, spotter.logits(windows(whole))), strict=True))
    assert spotter.score(long) == pytest.approx(max(by_end.values()), abs=0.05)
    read = windows(embedding.embed(long[:HEARD_BYTES], FIRST, ENDS[-1]), FIRST)
    assert len(read) == len(ENDS)
    assert float(spotter.logits(read[-1:])[0]) == pytest.approx(by_end[ENDS[-1]], abs=0.05)


def test_a_lone_wake_phrase_cut_short_is_scored_as_if_silence_followed(
    recognizer: ClosedWhisperRecognizer,
) -> None:
    """The VAD hands over a lone "Hey juniper." heard early (`speculate_secs` into the silence)
    about 1.1 s long with Whisper's tail, too short for any window ending where training's
    positives end. Scored as a stream goes on, in silence, it is sure. (Scored on the windows
    there were, Piper's was 6.9, not sure, and over a reply's echo below the veto; but that
    was without the window ending at its end, which the spotter dropped until s26: 14.5.)"""
    spotter = WakeSpotter.load("hey juniper")
    assert spotter is not None
    phrase = speech_pcm("Hey juniper.")
    first, last = voiced(phrase)
    tail = VadSettings().speculate_secs + TRAILING_SILENCE_S
    short = (bytes(int(0.2 * PIPELINE_RATE) * 2) + phrase[first * 2 : last * 2]
             + bytes(int(tail * PIPELINE_RATE) * 2))
    assert len(short) / 2 / PIPELINE_RATE < 1.19  # no window of training's positives fits
    assert spotter.score(short) == spotter.score(short + bytes(PIPELINE_RATE * 2))
    assert spotter.score(short) >= SPOTTER_SURE
    rule = ClosedWhisperRecognizer(recognizer.engine, wake_check=WAKE_CHECKS["spotter"])
    heard = rule.hear(short, sentences("messages"), vocabulary(SCENES["messages"]))
    assert heard.wake and heard.text.strip() == "hey juniper", heard


def test_a_long_utterance_is_spotted_once_from_its_first_two_seconds(
    monkeypatch: pytest.MonkeyPatch, loaded: Engines
) -> None:
    """The spotter reads only the first HEARD_BYTES: scored while the person is still speaking
    (as the utterance grows, each embedding once), the pipeline's hearing of the whole segment
    does not embed it again, and the score is the one the whole gives."""
    long = segment("Hey juniper, type hello grandma in the message box.")
    assert len(long) > HEARD_BYTES + PIPELINE_RATE  # a second and more after what is read
    spotter = WakeSpotter.load("hey juniper")
    assert spotter is not None
    whole = spotter.score(long)
    assert WakeSpotter.load("hey juniper").score(long[:HEARD_BYTES]) == whole  # type: ignore[union-attr]
    growing = WakeSpotter.load("hey juniper")
    assert growing is not None
    for end in range(PIPELINE_RATE, len(long), PIPELINE_RATE // 2):
        growing.score(long[:end])
    assert growing.score(long) == pytest.approx(whole, abs=1e-4)
    embedded: list[bytes] = []
    windows = SpeechEmbedding.windows

    def counted(self: SpeechEmbedding, pcm: bytes, *args: Any) -> Any:
        embedded.append(pcm)
        return windows(self, pcm, *args)

    class Sink:
        def vocabulary(self) -> list[str]:
            return vocabulary(SCENES["messages"])

        def handle(self, utterance: Utterance) -> Reply:
            return Reply("t1", "Done.", False)

        def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None: ...

        def fault(self, message: str) -> None: ...

    monkeypatch.setattr(SpeechEmbedding, "windows", counted)
    stats = run_voice(WavSource(pcm=Pcm(long + bytes(PIPELINE_RATE), PIPELINE_RATE)),
                      Sink(), loaded, None, VoiceOptions(recognizer="closed"))
    assert [h["decision"] for h in stats.heard] == ["command"], stats.heard
    # Every one is scored as HEARD_BYTES (a shorter one with silence after it); the long one,
    # still speaking at its end, once: then no more. (A pause after the wake phrase may be
    # heard early.)
    assert {len(pcm) for pcm in embedded} == {HEARD_BYTES}
    assert sum(any(pcm[-PIPELINE_RATE // 5 :]) for pcm in embedded) == 1


def test_the_last_encoding_is_kept_for_the_next_reader_of_the_same_audio(
    recognizer: ClosedWhisperRecognizer,
) -> None:
    """Whisper's choice between near sentences, then its quick pass, read one utterance through
    the same window: the second is not encoded again; other audio or another window is."""
    from appliance.voice.hearing.stt_whisper import speech_of

    scorer = recognizer.scorer
    audio = speech_of(segment("Hey juniper, show numbers."))
    first = scorer.encode(audio, QUICK_WINDOW)
    assert scorer.encode(audio.copy(), QUICK_WINDOW) is first
    full = scorer.encode(audio, FULL_WINDOW)
    assert full is not first and full[1] == first[1]
    other = speech_of(segment("Hey juniper, hide numbers."))
    assert scorer.encode(other, FULL_WINDOW) is not full


def test_a_pause_the_person_speaks_past_is_not_heard_to_its_end(
    monkeypatch: pytest.MonkeyPatch, loaded: Engines
) -> None:
    """"Hey juniper, select ... grandma", in real time: what is heard early at the pause after
    "select" is given up once the person speaks on (held here until they do), before Whisper's
    encoder, which would keep the one hearing thread from the end; the end is heard whole."""
    from appliance.voice.hearing import early
    from appliance.voice.hearing.stt_whisper import WhisperSTTService
    from appliance.voice.hearing.templates import speech

    first, rest = speech(speech_pcm("Hey juniper, select", "piper")), speech(
        speech_pcm("grandma", "piper"))
    said = (bytes(PIPELINE_RATE) + first + bytes(int(0.25 * PIPELINE_RATE) * 2) + rest
            + bytes(PIPELINE_RATE * 2))
    whole = len(first) + len(rest)  # bytes of speech in all
    early_at: list[int] = []
    held: list[bool] = []
    encoded: list[int] = []
    speculate, score, encode = (WhisperSTTService._speculate, WakeSpotter.score,
                                WhisperScorer.encode)

    def counted_pause(self: WhisperSTTService, pcm: bytes, *args: Any) -> Any:
        early_at.append(len(pcm))
        return speculate(self, pcm, *args)

    def held_until_spoken_on(self: WakeSpotter, pcm: bytes) -> float:
        spoke_on = getattr(early._scope, "spoke_on", None)  # set in an early hearing only
        if spoke_on is not None and len(pcm) < whole:
            held.append(spoke_on.wait(timeout=60))
        return score(self, pcm)

    def counted(self: WhisperScorer, audio: Any, *args: Any) -> Any:
        done = encode(self, audio, *args)  # an encode given up at its start encoded nothing
        encoded.append(len(audio) * 2)
        return done

    class Sink:
        def __init__(self) -> None:
            self.utterances: list[Utterance] = []

        def vocabulary(self) -> list[str]:
            return vocabulary(SCENES["messages"])

        def handle(self, utterance: Utterance) -> Reply:
            self.utterances.append(utterance)
            return Reply(f"t{len(self.utterances)}", "Done.", False)

        def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None: ...

        def fault(self, message: str) -> None: ...

    monkeypatch.setattr(WhisperSTTService, "_speculate", counted_pause)
    monkeypatch.setattr(WakeSpotter, "score", held_until_spoken_on)
    monkeypatch.setattr(WhisperScorer, "encode", counted)
    sink = Sink()
    stats = run_voice(WavSource(pcm=Pcm(said, PIPELINE_RATE)), sink, loaded, None,
                      VoiceOptions(recognizer="closed", pace=1.0))
    assert [u.text for u in sink.utterances] == ["select grandma"], stats.heard
    assert any(at < whole for at in early_at), early_at  # the pause after "select" was one
    assert all(held)  # each early hearing that got as far as the spotter was then given up
    assert encoded and all(size >= whole for size in encoded), (encoded, whole)


def _tuning_clip(voice_label: str, condition: str, said: str, wake: bool) -> tuple[bytes, str]:
    """A clip of the tuning part as appliance_lab.tuning.wake_rule_tune hears it, and its scene."""
    from appliance_lab.bench.spoken.conditions import CONDITIONS
    from appliance_lab.bench.spoken.corpus import (
        audio,
        items,
        load_part,
        noise_for,
        non_wake_audio,
    )
    from appliance_lab.bench.spoken.false_accepts import SCENE

    tail = bytes(int(TRAILING_SILENCE_S * PIPELINE_RATE) * 2)
    cond = next(c for c in CONDITIONS if c.name == condition)
    if wake:
        item = next(i for i in items("tune", [cond])
                    if i.voice.label == voice_label and i.sentence == said)
        return audio(item) + tail, item.scene
    voice = next(v for v in load_part("tune").voices if v.label == voice_label)
    return non_wake_audio("tune", voice, said, cond, noise_for(voice, said, cond)) + tail, SCENE


# Tuning clips on which the spotter check and the command check disagreed when the rule was
# tuned (CTranslate2 on an Intel CPU, with MKL); on another CPU backend (oneDNN on AMD) or
# another Intel CPU (a 2-core Xeon VM, s24) Whisper's numbers move a little and one or two
# clips' command check come out the other way (there "Hey Juniper, switch to the column dot."
# was written, and "come on sit here" not taken); the spotter's log-odds do not move.
SPOTTER_CLIPS = [
    # At 10 dB Whisper wrote only "Okay, go ahead.": no wake phrase for the command check;
    # the spotter is sure of it (log-odds 11.9).
    ("espeak:en-us+Annie@150/50", "snr10", "okay go ahead", True, "hey juniper okay go ahead"),
    # Written "Thank you, Juniper, switch to the column dot.": its words for the wake phrase
    # are dropped, and the rest is the screen's sentence (log-odds 20.5).
    ("espeak:en+linda@165/55", "snr10", "switch to the calendar", True,
     "hey juniper switch to the calendar"),
    # Heard as "hey juniper, come on, sit here" and taken by the strict part; the spotter
    # (log-odds -4.4) overrules it.
    ("espeak:en@165/45", "snr5", "hey julia, the bus is here", False, ""),
]


def test_the_spotter_changes_the_command_checks_answer_on_tuning_clips(
    recognizer: ClosedWhisperRecognizer,
) -> None:
    """The spotter check decides each clip the right way from the sound alone, and overrules
    the command check on at least one of them on any CPU (the spotter was trained on them: this
    shows the rule acting on real audio)."""
    overruled = []
    for voice, condition, said, wake, heard in SPOTTER_CLIPS:
        audio, scene = _tuning_clip(voice, condition, said, wake)
        answers = {check: ClosedWhisperRecognizer(
            recognizer.engine, wake_check=WAKE_CHECKS[check]).hear(
                audio, sentences(scene), vocabulary(SCENES[scene]))
            for check in ("command", "spotter")}
        assert answers["spotter"].wake is wake, answers
        spot = answers["spotter"].spot
        assert spot is not None and (spot >= SPOTTER_SURE if wake else spot < SPOTTER_VETO), (
            answers)
        if wake:
            assert answers["spotter"].text == heard, answers
        overruled.append(answers["command"].wake is not wake)
    assert sum(overruled) >= 1, overruled


def espeak_in_noise(text: str, rate: int, snr_db: float, seed: int) -> bytes:
    """espeak-ng en-us at `rate` words a minute, 0.3 s either side, white noise at `snr_db`."""
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "s.wav"
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", str(rate), "-w", str(wav), text],
                       check=True, capture_output=True)
        pcm = load_wav(wav).data
    pad = np.zeros(int(0.3 * PIPELINE_RATE), dtype=np.float32)
    x = np.concatenate([pad, np.frombuffer(pcm, "<i2").astype(np.float32), pad])
    power = float(np.mean(np.square(x[x != 0])))
    noise = np.random.default_rng(seed).normal(0, np.sqrt(power / 10 ** (snr_db / 10)), len(x))
    out = np.clip(x + noise, -32768, 32767).astype("<i2").tobytes()
    return out + bytes(int(TRAILING_SILENCE_S * PIPELINE_RATE) * 2)


def test_the_issues_case_screen_names_no_longer_decide_the_wake_phrase(
    recognizer: ClosedWhisperRecognizer,
) -> None:
    """Measured with the lab's closed_set_tune (10 dB): with the screen's names in the prompt
    this audio was "Hey Juniper, what is on the screen?" on the Mail screen only; on Messages
    "do the perfect weapon on the screen", on Radio nothing, so the command was ignored there.
    The wake pass now sees no screen: the same decision, and the command, on every screen."""
    audio = espeak_in_noise("hey juniper, what is on the screen", 190, 10.0, seed=1)
    heard = {
        scene: recognizer.hear(audio, sentences(scene), vocabulary(SCENES[scene]))
        for scene in SCENES
    }
    assert all(h.wake for h in heard.values()), heard
    assert len({h.greedy for h in heard.values()}) == 1, heard
    assert {h.text for h in heard.values()} == {"hey juniper what is on the screen"}, heard


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
    heard = [(h["text"], h["engine"], h["decision"]) for h in stats.heard]
    assert [h[1:] for h in heard[:2]] == [("closed:whisper", "command"),
                                         ("open:whisper", "command")], heard
    assert heard[2][2] == "ignored", heard
    assert reports[0].transcript == "tick urgent"
    assert "hello grandma" in reports[1].transcript.lower()
    assert [r.decision for r in reports] == ["executed", "executed"], reports
    assert "checked" in _element(scene, "Urgent").states
    assert "hello grandma" in _element(scene, "Message").value.lower()
    assert stats.ignored == 1


@pytest.mark.parametrize(("check", "acted"),
                         [("lenient", True), ("strict", False), ("command", True),
                          ("spotter", True)])
def test_the_caregivers_wake_check_reaches_the_pipeline(
    tmp_path: Path, loaded: Engines, check: WakeCheckName, acted: bool
) -> None:
    """The `wake_check` setting as `appliance run` passes it: "hey jennifer, click send" (a near
    miss) becomes a turn when the check is lenient, and is ignored when it is strict; the
    command check takes it, "click send" being a command of the screen, and so does the
    spotter's, not sure of it either way (log-odds 7.7)."""
    scene = tmp_path / "scene.json"
    shutil.copyfile(SCENES["messages"], scene)
    reports: list[TurnReport] = []
    sink = SessionSink(Journal(str(tmp_path / "journal.sqlite")),
                       lambda: opened_desktop(f"sim:{scene}"),
                       build_planner(Settings(llm="off")), reports.append)
    gap = bytes(int(1.2 * PIPELINE_RATE) * 2)
    pcm = gap + speech_pcm("Hey jennifer, click send.", "piper") + gap
    options = VoiceOptions(wake_check=Settings(wake_check=check).wake_check)
    stats = run_voice(WavSource(pcm=Pcm(pcm, PIPELINE_RATE)), sink, loaded, None, options)
    assert len(reports) == int(acted) and stats.ignored == int(not acted), stats.heard
    if acted:
        assert reports[0].transcript == "click send", reports


def _unsure_tick_urgent() -> bytes:
    """A tuning-part item Whisper hears as "Hey Juniper, take your agent": espeak-ng's anika
    variant at 10 dB. The closed set's best, "tick urgent", misses the bar for acting and meets
    the one for asking (appliance_lab.tuning.closed_set_sweep)."""
    from appliance_lab.bench.spoken.corpus import audio, items

    return audio(next(i for i in items("tune") if i.condition.name == "snr10"
                      and i.voice.label == "espeak:en-gb-x-gbclan+anika@145/40"
                      and i.sentence == "tick urgent"))


def test_a_doubtful_closed_set_sentence_is_taken_with_doubt(
    recognizer: ClosedWhisperRecognizer,
) -> None:
    words = vocabulary_of(names(SCENES["messages"]))
    heard = recognizer.hear(_unsure_tick_urgent(), sentences("messages"), words)
    assert (heard.path, heard.doubt, heard.text) == ("closed", Doubt.LESS_SURE,
                                                    "hey juniper tick urgent"), heard
    sure = recognizer.hear(segment("hey juniper, tick urgent", "piper"), sentences("messages"),
                           words)
    assert (sure.path, sure.doubtful) == ("closed", False), sure


def _tick_urgent_in_noise() -> list[bytes]:
    """The tuning part's "tick urgent" at 10 and 5 dB, `_unsure_tick_urgent` first."""
    from appliance_lab.bench.spoken.corpus import audio, items

    said = [i for i in items("tune") if i.sentence == "tick urgent"
            and i.condition.name in ("snr10", "snr5")]
    said.sort(key=lambda i: (i.voice.label != "espeak:en-gb-x-gbclan+anika@145/40",
                             i.condition.name != "snr10"))
    return [audio(i) for i in said[:8]]


def test_a_doubtful_closed_set_command_asks_before_it_acts(tmp_path: Path, loaded: Engines) -> None:
    """Through the pipeline into the session: asked, not done; a yes does it. The clip is the
    first of `_tick_urgent_in_noise` the pipeline hears with doubt (anika's at 10 dB when this
    was tuned; Whisper's numbers, and so which clip, move a little with the CPU's backend)."""
    for n, clip in enumerate(_tick_urgent_in_noise()):
        scene = tmp_path / f"scene{n}.json"
        # Urgent starts unticked here, so that ticking it shows.
        scene.write_text(SCENES["messages"].read_text().replace(
            '"name": "Urgent", "states": ["checked"]', '"name": "Urgent"'))
        reports: list[TurnReport] = []
        sink = SessionSink(Journal(str(tmp_path / f"journal{n}.sqlite")),
                           lambda s=scene: opened_desktop(f"sim:{s}"),
                           build_planner(Settings(llm="off")), reports.append)
        assert "checked" not in _element(scene, "Urgent").states
        gap = bytes(int(1.2 * PIPELINE_RATE) * 2)
        pcm = gap + clip + gap + speech_pcm("Yes.", "piper") + gap
        stats = run_voice(WavSource(pcm=Pcm(pcm, PIPELINE_RATE)), sink, loaded, None,
                          VoiceOptions(recognizer="closed", mute_while_speaking=False))
        if reports and reports[0].decision == "needs_confirmation":
            assert reports[0].spoken == "Did you mean tick Urgent? Say yes or no.", reports
            # The caregiver's trace says why it asked.
            asked = timeline(Journal(str(tmp_path / f"journal{n}.sqlite")),
                             turn=reports[0].turn_id)
            assert doubt_reason(Doubt.LESS_SURE) in next(
                r["detail"] for r in asked if r["event"] == "Validated"), asked
            assert [r.decision for r in reports] == ["needs_confirmation", "executed"], (
                stats.heard)
            assert "checked" in _element(scene, "Urgent").states
            return
        if reports and reports[0].decision == "executed":  # sure of it: done, and right
            assert reports[0].transcript == "tick urgent", stats.heard
    pytest.fail("no clip of tick urgent in noise was heard with doubt")


class _HeardSink(SessionSink):
    """The session's sink, keeping what the appliance said outside any turn too."""

    said: list[str]

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        self.said.append(text)
        super().spoke(turn_id, text, timings)


def test_a_command_lost_after_the_wake_phrase_is_said_so_and_may_be_said_again(
    tmp_path: Path, loaded: Engines
) -> None:
    """Words Whisper cannot make out after the wake phrase (espeak-ng's "turn the radio up a
    little" played backwards: Whisper writes words, but too doubtful to pass on). Silence
    would leave the person waiting: the appliance says it did not catch it and then takes the
    command without the wake phrase. (A tuning-part clip Whisper half heard was used before;
    how doubtful it was differed by CPU, and on an AVX2-only AMD EPYC it was passed on.)"""
    wake = np.frombuffer(speech_pcm("Hey juniper", "espeak"), np.int16)
    wake = wake[: np.flatnonzero(np.abs(wake) > 300)[-1] + 1]  # no pause for the VAD to end at
    said = np.frombuffer(speech_pcm("turn the radio up a little", "espeak"), np.int16)
    unclear = wake.tobytes() + said[::-1].copy().tobytes()
    scene = tmp_path / "scene.json"
    shutil.copyfile(SCENES["settings"], scene)
    assert "checked" not in _element(scene, "Large text").states
    reports: list[TurnReport] = []
    sink = _HeardSink(Journal(str(tmp_path / "journal.sqlite")),
                      lambda: opened_desktop(f"sim:{scene}"),
                      build_planner(Settings(llm="off")), reports.append)
    sink.said = []
    gap = bytes(int(1.2 * PIPELINE_RATE) * 2)
    pcm = gap + unclear + gap + speech_pcm("Tick large text.", "piper") + gap
    stats = run_voice(WavSource(pcm=Pcm(pcm, PIPELINE_RATE)), sink, loaded, None,
                      VoiceOptions(recognizer="closed"))
    assert [h["decision"] for h in stats.heard] == ["not caught", "command"], stats.heard
    assert sink.said[0] == "Sorry, I didn't catch that. Please say it again.", sink.said
    assert [r.decision for r in reports] == ["executed"], reports
    assert "checked" in _element(scene, "Large text").states
