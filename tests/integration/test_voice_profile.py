"""The person's own voice, end to end with the real parts: espeak-ng's takes enrolled with
`appliance enroll`, openWakeWord's embeddings matched by the templates, Whisper tiny.en behind
them, the real pipeline and session acting on a sim scene, the journal read back."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import tempfile
import time
import wave
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from appliance.journal.store import voice_profile_path as profile_path
from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, load_wav, write_wav
from appliance.voice.hearing.profile import TakeKind, TakeSource, VoiceProfile
from tests.cli_runner import Kiosk, run
from tests.scenes import messages
from tests.speech import silence

if TYPE_CHECKING:
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
    from appliance.voice.hearing.personal import PersonalHearing

VOICE = "en-us+Annie"  # a voice of the tuning part (never one held out)
ENROL_RATES = (135, 160, 185)  # words a minute of the enrolled takes
SAID_RATE = 150  # of what is said later: a rate no take has


@cache
def espeak(text: str, rate: int, pitch: int = 50) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "said.wav"
        subprocess.run(["espeak-ng", "-v", VOICE, "-s", str(rate), "-p", str(pitch), "-w",
                        str(wav), text], capture_output=True, check=True)
        return load_wav(wav).data


def slowly(text: str, rate: int, gap_s: float) -> bytes:
    """Each word on its own, `gap_s` of silence between them: slow, broken speech."""
    out = bytearray()
    for word in text.replace(",", "").split():
        out += espeak(word, rate) + silence(gap_s)
    return bytes(out[: len(out) - int(gap_s * PIPELINE_RATE) * 2])


def wav(path: Path, *parts: bytes) -> Path:
    write_wav(path, Pcm(b"".join(parts), PIPELINE_RATE))
    return path


def enrol(kiosk: Kiosk, tmp: Path, phrase: str | None, takes: list[bytes]) -> None:
    files = [str(wav(tmp / f"take-{phrase or 'wake'}-{i}.wav", pcm))
             for i, pcm in enumerate(takes)]
    option = ["--wake"] if phrase is None else ["--phrase", phrase]
    r = run("enroll", *option, *files, "--store", kiosk.store, "--by", "Carol")
    assert r.code == 0, r.err


def heard(kiosk: Kiosk, audio: Path) -> list[dict[str, object]]:
    """The turns `appliance run` took from `audio`, with the engine each was heard by."""
    r = run("run", "--audio", str(audio), "--desktop", f"sim:{kiosk.scene}",
            "--store", kiosk.store, "--no-panel", "--no-switch", "--json")
    assert r.code == 0, r.err
    turns = [json.loads(line) for line in r.out.splitlines() if line.startswith("{")]
    timeline = run("audit", "--json", "--store", kiosk.store).json()
    engines = [e["data"]["engine"] for e in timeline if e["event"] in ("Heard", "Answered")
               and "engine" in e["data"]]
    return [{**t, "engine": engine} for t, engine in zip(turns, engines[-len(turns):],
                                                         strict=False)]


def espeak_profile(tmp_path: Path, commands: tuple[str, ...]) -> VoiceProfile:
    """A real profile with the wake phrase and `commands` enrolled in espeak-ng's takes."""
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for phrase, kind in (("hey juniper", TakeKind.WAKE),
                         *((c, TakeKind.COMMAND) for c in commands)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    return profile


def spotter_hearing(tmp_path: Path, commands: tuple[str, ...]
                    ) -> tuple[VoiceProfile, ClosedWhisperRecognizer, PersonalHearing]:
    """The wake phrase and `commands` enrolled in espeak-ng's takes, heard by the takes with
    Whisper and the wake spotter behind them (which knows this voice)."""
    from appliance.voice.commands import engines
    from appliance.voice.hearing.closed_whisper import WAKE_CHECKS, ClosedWhisperRecognizer
    from appliance.voice.hearing.personal import PersonalHearing, PersonalOptions

    loaded = engines("whisper")
    assert loaded.whisper is not None
    profile = espeak_profile(tmp_path, commands)
    recognizer = ClosedWhisperRecognizer(loaded.whisper, wake_check=WAKE_CHECKS["spotter"])
    hearing = PersonalHearing(profile, recognizer, lambda *a: None, lambda _s: None,
                              PersonalOptions())
    assert recognizer.spotter is not None and hearing.spotter_knows_voice()
    return profile, recognizer, hearing


@pytest.fixture
def enrolled(tmp_path: Path) -> Kiosk:
    kiosk = Kiosk(tmp_path, messages())
    enrol(kiosk, tmp_path, None, [espeak("hey juniper", r) for r in ENROL_RATES])
    enrol(kiosk, tmp_path, "click send", [espeak("click send", r) for r in ENROL_RATES])
    enrol(kiosk, tmp_path, "select doctor", [espeak("select doctor", r) for r in ENROL_RATES])
    return kiosk


def test_an_enrolled_command_is_heard_by_the_persons_takes(enrolled: Kiosk,
                                                           tmp_path: Path) -> None:
    audio = wav(tmp_path / "said.wav", silence(1), espeak("hey juniper, select doctor", SAID_RATE),
                silence(1.5))
    turns = heard(enrolled, audio)
    assert [(t["decision"], t["engine"]) for t in turns] == [("executed", "closed:templates")]
    assert enrolled.element("Doctor")["states"] == ["selected"]


def test_a_command_not_enrolled_falls_through_to_whisper(enrolled: Kiosk, tmp_path: Path) -> None:
    audio = wav(tmp_path / "said.wav", silence(1), espeak("hey juniper, tick urgent", SAID_RATE),
                silence(1.5))
    turns = heard(enrolled, audio)
    assert [t["engine"] for t in turns] == ["closed:whisper"]
    assert turns[0]["decision"] in ("executed", "needs_confirmation")  # Whisper's own doubt


def test_forgetting_the_profile_stops_its_use(enrolled: Kiosk, tmp_path: Path) -> None:
    r = run("enroll", "--forget", "--store", enrolled.store, "--by", "Carol")
    assert r.code == 0 and "removed 9 takes" in r.out, r.out + r.err
    assert run("enroll", "--list", "--store", enrolled.store).out.strip() == \
        "nothing is enrolled yet"
    audio = wav(tmp_path / "said.wav", silence(1), espeak("hey juniper, select doctor", SAID_RATE),
                silence(1.5))
    assert [t["engine"] for t in heard(enrolled, audio)] == ["closed:whisper"]


@pytest.mark.parametrize(("sure", "share"), [(True, 0.5), (False, 0.5), (False, 1.0)])
def test_a_match_of_the_takes_ends_the_command_at_its_pause_or_after_part_of_the_wait(
        tmp_path: Path, loaded: Any, monkeypatch: pytest.MonkeyPatch, sure: bool,
        share: float) -> None:
    """"select grandma", which the takes match surely and nothing the screen allows goes on
    from, ends 60 ms into the silence after it. A match decided but not sure enough to end at
    once (here none is: END_ON_MATCH above 1) ends after `likely_end_share` of the person's
    wait, not all of it. "yes" said alone, an answer, is not how the person's wake phrase
    begins, and ends as the command does."""
    from dataclasses import replace

    from appliance.voice.audio.sources import WavSource
    from appliance.voice.commands import VoiceOptions, run_voice
    from appliance.voice.hearing import personal
    from tests.integration.test_voice_pipeline import ScriptedSink

    if not sure:
        monkeypatch.setattr(personal, "END_ON_MATCH", 1.01)
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for phrase, kind in (("hey juniper", TakeKind.WAKE), ("select grandma", TakeKind.COMMAND),
                         ("yes", TakeKind.COMMAND)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    audio = Pcm(silence(1) + espeak("hey juniper, select grandma", SAID_RATE) + silence(1.5)
                + espeak("yes", SAID_RATE) + silence(1.5), PIPELINE_RATE)
    options = VoiceOptions(profile=profile.path)
    options = replace(options, vad=replace(options.vad, likely_end_share=share))
    sink = ScriptedSink()
    stats = run_voice(WavSource(pcm=audio), sink, loaded, None, options)
    assert sink.texts[0] == "select grandma"
    command, answer = stats.heard  # type: ignore[attr-defined]
    assert [command["engine"], answer["engine"]] == ["closed:templates"] * 2, (command, answer)
    for heard in (command, answer):
        waited = heard["timings"]["vad_ms"]
        if sure:
            assert heard["ended_early"] and waited < 150, heard
        elif share < 1:
            assert heard["ended_early"] and 150 <= waited < 300, heard
        else:
            assert not heard["ended_early"] and waited >= 300, heard


def answered_after_a_question_or_not(tmp_path: Path, loaded: Any,
                                     answer: str) -> dict[bool, tuple[Any, list[str]]]:
    """`answer` said after "click send" (which asks) and after "select grandma" (which does
    not), with takes of both and of the answers: whether asked -> (what was heard, the sink's
    texts)."""
    from appliance.voice.audio.sources import WavSource
    from appliance.voice.commands import VoiceOptions, run_voice
    from tests.integration.test_voice_pipeline import ScriptedSink

    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for phrase, kind in (("hey juniper", TakeKind.WAKE), ("click send", TakeKind.COMMAND),
                         ("select grandma", TakeKind.COMMAND), ("yes", TakeKind.COMMAND),
                         ("no", TakeKind.COMMAND)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    out = {}
    for command, asks in (("click send", True), ("select grandma", False)):
        audio = Pcm(silence(1) + espeak(f"hey juniper, {command}", SAID_RATE) + silence(1.2)
                    + espeak(answer, SAID_RATE) + silence(1.5), PIPELINE_RATE)
        sink = ScriptedSink()
        stats = run_voice(WavSource(pcm=audio), sink, loaded, None,
                          VoiceOptions(profile=profile.path))
        out[asks] = (stats.heard, sink.texts)  # type: ignore[attr-defined]
    return out


def test_a_no_ends_at_its_pause_only_in_a_questions_listening_window(
        tmp_path: Path, loaded: Any) -> None:
    """"no" is how "noisier" begins, a sentence of every screen, so a pause after it may be
    inside a command and "no" waits out the person's pause. In a question's listening window an
    answer is what is awaited: there the takes' sure "no" ends at its pause, as "yes" does."""
    from appliance.voice.hearing.closed_set import closed_set
    from tests.integration.test_voice_pipeline import ScriptedSink

    assert closed_set(tuple(ScriptedSink().vocabulary()), ()).runs_on("no")
    answers = {}
    for asks, ((said, answer), texts) in answered_after_a_question_or_not(
            tmp_path, loaded, "no").items():
        assert (said["engine"], answer["engine"]) == ("closed:templates",) * 2, (said, answer)
        assert texts == (["click send", "no"] if asks else ["select grandma"]), texts
        answers[asks] = answer
    assert answers[True]["ended_early"] and answers[True]["timings"]["vad_ms"] < 150, answers
    assert not answers[False]["ended_early"], answers[False]
    assert answers[False]["timings"]["vad_ms"] >= 300, answers[False]


def test_an_answer_after_the_wake_phrase_ends_at_its_pause_only_in_a_questions_window(
        tmp_path: Path, loaded: Any) -> None:
    """People say the wake phrase out of habit. In a question's listening window "hey juniper,
    no" is the answer the window awaits: the takes' sure "no" ends at its pause, with no Whisper
    decode. Outside a window it is left to Whisper's words."""
    answers = {}
    for asks, ((_said, answer), texts) in answered_after_a_question_or_not(
            tmp_path, loaded, "hey juniper, no").items():
        assert texts[1:] == ["no"], texts
        answers[asks] = answer
    assert answers[True]["engine"] == "closed:templates", answers[True]
    assert answers[True]["ended_early"] and answers[True]["timings"]["vad_ms"] < 150, answers
    assert answers[False]["engine"] == "closed:whisper", answers[False]


@pytest.mark.parametrize("panes", [0, 2])
def test_scroll_down_ends_at_its_pause_where_a_name_cannot_change_what_it_scrolls(
        tmp_path: Path, loaded: Any, panes: int) -> None:
    """On a screen with no scroll pane, "scroll down in contacts" would scroll what "scroll
    down" does, so the person's "scroll down" ends at its pause; with two panes a name may
    follow and pick one, so the person is waited for."""
    from appliance.voice.audio.sources import WavSource
    from appliance.voice.commands import VoiceOptions, run_voice
    from appliance.voice.sink import ScreenNames
    from tests.integration.test_voice_pipeline import ScriptedSink

    class Screen(ScriptedSink):
        def screen_names(self) -> ScreenNames:
            return ScreenNames(tuple(self.vocabulary()), (), panes=panes)

    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for phrase, kind in (("hey juniper", TakeKind.WAKE), ("scroll down", TakeKind.COMMAND),
                         ("scroll up", TakeKind.COMMAND), ("stop", TakeKind.COMMAND)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    audio = Pcm(silence(1) + espeak("hey juniper, scroll down", SAID_RATE) + silence(1.5),
                PIPELINE_RATE)
    sink = Screen()
    stats = run_voice(WavSource(pcm=audio), sink, loaded, None, VoiceOptions(profile=profile.path))
    assert sink.texts == ["scroll down"]
    (command,) = stats.heard  # type: ignore[attr-defined]
    assert command["engine"] == "closed:templates", command
    if panes == 0:
        assert command["ended_early"] and command["timings"]["vad_ms"] < 150, command
    else:
        assert not command["ended_early"] and command["timings"]["vad_ms"] >= 300, command


def test_a_pause_where_what_was_said_is_how_another_phrase_begins_ends_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut anywhere inside "scroll down", "read it" or "click send", the takes often hear
    another of the person's phrases ("stop" for "scroll", "cancel" for "hey ju-"); however sure
    that match, a pause there does not end the utterance, for what was said so far is nearer to
    how the phrase said begins. Said whole, each still ends at its pause."""
    from appliance.voice.hearing import personal
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.stt_whisper import TRAILING_BYTES

    # Every match counts as sure, so that only how another phrase begins decides.
    monkeypatch.setattr(personal, "END_ON_MATCH", 0.0)
    monkeypatch.setattr(personal, "END_RIVAL_RATIO", math.inf)
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    commands = ("stop", "cancel", "scroll down", "scroll up", "read it", "click send")
    for phrase, kind in (("hey juniper", TakeKind.WAKE),
                         *((c, TakeKind.COMMAND) for c in commands)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    templates = profile.template_set()
    sentences = closed_set(("Send",), ("Send",), ("Send",))
    step = int(0.04 * PIPELINE_RATE) * 2
    for command in ("scroll down", "read it", "click send"):
        said = espeak(f"hey juniper, {command}", SAID_RATE)
        others = [found for at in range(step, len(said), step)
                  if (found := templates.hear(said[:at] + bytes(TRAILING_BYTES),
                                              lambda p: p in sentences)) is not None
                  and found.phrase != command]
        assert len(others) >= 10, (command, others)
        assert not any(personal.ends_at_match(found, sentences) for found in others), command
        with monkeypatch.context() as without:  # the rule is what holds them
            without.setattr(personal, "END_START_RATIO", math.inf)
            assert sum(personal.ends_at_match(found, sentences) for found in others) >= 5
        whole = templates.hear(said + bytes(TRAILING_BYTES), lambda p: p in sentences)
        assert whole is not None and whole.phrase == command, (command, whole)
        if command != "scroll down":  # sentences of the screen go on from it
            assert personal.ends_at_match(whole, sentences), (command, whole)


def test_an_answer_said_alone_ends_at_its_pause_but_the_wake_phrases_start_never_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """"yes" said alone ends at its pause, as a sure command does. Cut anywhere inside "hey
    juniper, ...", the takes sometimes hear "yes" ("hey" alone passes for it in slow speech);
    however sure that match, it ends nothing, for it is nearer to how the person's wake
    phrase begins. Without wake takes to tell the two apart, "yes" waits as before."""
    from appliance.voice.hearing import personal
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.stt_whisper import TRAILING_BYTES

    commands = ("yes", "no", "stop", "cancel", "scroll down", "click send")
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for phrase, kind in (("hey juniper", TakeKind.WAKE),
                         *((c, TakeKind.COMMAND) for c in commands)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    templates = profile.template_set()
    sentences = closed_set(("Send",), ("Send",), ("Send",))
    for rate in (SAID_RATE, 110):
        alone = templates.hear(espeak("yes", rate) + bytes(TRAILING_BYTES),
                               lambda p: p in sentences)
        assert alone is not None and (alone.phrase, alone.wake) == ("yes", False), alone
        assert personal.ends_at_match(alone, sentences), alone
    # Every match counts as sure, so that only how the wake phrase begins decides.
    monkeypatch.setattr(personal, "END_ON_MATCH", 0.0)
    monkeypatch.setattr(personal, "END_RIVAL_RATIO", math.inf)
    step = int(0.04 * PIPELINE_RATE) * 2
    answers = []
    for said in (espeak("hey juniper, click send", SAID_RATE), espeak("hey juniper, yes", 110),
                 slowly("hey juniper, click send", SAID_RATE, 0.4)):
        answers += [found for at in range(step, len(said), step)
                    if (found := templates.hear(said[:at] + bytes(TRAILING_BYTES),
                                                lambda p: p in sentences)) is not None
                    and not found.wake and found.phrase in ("yes", "no")]
    assert answers
    assert not any(personal.ends_at_match(found, sentences) for found in answers), answers
    assert all(found.distance > personal.END_START_RATIO * found.wake_start
               for found in answers), answers  # the wake phrase's start alone holds each
    profile.forget("hey juniper")
    alone = profile.template_set().hear(espeak("yes", SAID_RATE) + bytes(TRAILING_BYTES),
                                        lambda p: p in sentences)
    assert alone is not None and alone.phrase == "yes", alone
    assert not personal.ends_at_match(alone, sentences), alone


def test_the_wake_phrase_alone_is_no_command_however_near_one_it_is(tmp_path: Path) -> None:
    """A person whose "undo that" sounds like their wake phrase (here: the same takes): "hey
    juniper" alone is their wake phrase, not a bare "undo that", which a listening window would
    act on; "hey juniper, undo that" is still the command."""
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for rate in ENROL_RATES:
        profile.add("hey juniper", TakeKind.WAKE, espeak("hey juniper", rate))
        profile.add("undo that", TakeKind.COMMAND, espeak("hey juniper", rate))
        profile.add("select grandma", TakeKind.COMMAND, espeak("select grandma", rate))
    templates = profile.template_set()
    alone = espeak("hey juniper", SAID_RATE)
    assert templates.wake_alone(alone)
    assert templates.hear(alone, lambda _phrase: True) is None
    command = espeak("hey juniper, select grandma", SAID_RATE)
    assert not templates.wake_alone(command)
    found = templates.hear(command, lambda _phrase: True)
    assert found is not None and (found.phrase, found.wake) == ("select grandma", True)


def test_the_pause_after_the_wake_phrase_is_not_decoded(tmp_path: Path, loaded: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """"hey juniper, ... select grandma": at the pause after the wake phrase alone Whisper
    decodes nothing (its decode would hold the one hearing thread while the command is said);
    the command's own pause ends it, heard by the takes, with no Whisper decode at all."""
    from appliance.voice.audio.sources import WavSource
    from appliance.voice.commands import VoiceOptions, run_voice
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
    from appliance.voice.hearing.templates import speech
    from tests.integration.test_voice_pipeline import ScriptedSink

    decoded: list[int] = []
    transcribe = ClosedWhisperRecognizer.transcribe

    def counted(self: ClosedWhisperRecognizer, pcm: bytes, *args: Any, **kwargs: Any) -> Any:
        decoded.append(len(pcm))
        return transcribe(self, pcm, *args, **kwargs)

    monkeypatch.setattr(ClosedWhisperRecognizer, "transcribe", counted)
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for phrase, kind in (("hey juniper", TakeKind.WAKE), ("select grandma", TakeKind.COMMAND),
                         ("yes", TakeKind.COMMAND)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    audio = Pcm(silence(1) + speech(espeak("hey juniper", SAID_RATE)) + silence(0.2)
                + speech(espeak("select grandma", SAID_RATE)) + silence(1.5), PIPELINE_RATE)
    sink = ScriptedSink()
    stats = run_voice(WavSource(pcm=audio), sink, loaded, None, VoiceOptions(profile=profile.path))
    assert sink.texts == ["select grandma"]
    (command,) = stats.heard  # type: ignore[attr-defined]
    assert command["engine"] == "closed:templates" and command["ended_early"], command
    assert decoded == []


def test_speech_embedded_while_it_is_spoken_is_what_embedding_it_at_the_end_gives() -> None:
    """The takes embed an utterance ahead as it grows (stt_closed: every 0.5 s): at the end only
    its last words are embedded, and the result is the whole utterance's, to within the
    melspectrogram's rounding."""
    import numpy as np

    from appliance.voice.hearing import templates

    said = templates.speech(espeak("hey juniper, select radio 4 and then scroll down", SAID_RATE))
    templates._RECENT.clear()
    whole = templates.features(said)
    templates._RECENT.clear()
    for part in (0.3, 0.6, 0.8):
        templates.features(said[: int(len(said) * part) // 2 * 2])
    ahead = templates.features(said)
    assert ahead.shape == whole.shape
    assert float(np.max(1 - np.sum(ahead * whole, axis=1))) < 0.01  # cosine distances


def test_the_speech_embedding_is_the_same_from_two_threads_at_once() -> None:
    """One embedder serves the process; an embedding computed ahead may still run when another
    pipeline's hearing thread starts: neither may get the other's shapes or results."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from appliance.voice.hearing.wake_spotter import speech_embedding

    one, other = espeak("hey juniper, select doctor", SAID_RATE), espeak("scroll up", 120)
    embedder = speech_embedding()
    alone = {pcm: embedder.embed(pcm) for pcm in (one, other)}
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = [pool.submit(embedder.embed, pcm) for _ in range(12) for pcm in (one, other)]
        got = [(pcm, run.result()) for run, pcm in zip(runs, [one, other] * 12, strict=True)]
    assert all(np.array_equal(result, alone[pcm]) for pcm, result in got)


def test_a_slow_command_is_heard_whole_once_its_pauses_are_learned(tmp_path: Path) -> None:
    slow = slowly("hey juniper select doctor", SAID_RATE, gap_s=0.55)
    audio = wav(tmp_path / "slow.wav", silence(1), slow, silence(2.5))
    (tmp_path / "before").mkdir()
    cut = heard(Kiosk(tmp_path / "before", messages()), audio)
    assert not any(t["decision"] == "executed" for t in cut), "cut into fragments, unlearned"
    after_dir = tmp_path / "after"
    after_dir.mkdir()
    kiosk = Kiosk(after_dir, messages())
    enrol(kiosk, after_dir, None, [slowly("hey juniper", r, 0.55) for r in ENROL_RATES])
    enrol(kiosk, after_dir, "select doctor",
          [slowly("select doctor", r, 0.55) for r in ENROL_RATES])
    turns = heard(kiosk, audio)
    assert [t["decision"] for t in turns] == ["executed"]
    assert kiosk.element("Doctor")["states"] == ["selected"]


def test_enrolment_is_journaled_without_audio(enrolled: Kiosk) -> None:
    timeline = run("audit", "--json", "--store", enrolled.store).json()
    added = [e["data"] for e in timeline if e["event"] == "VoiceTakesAdded"]
    assert [(a["phrase"], a["kind"], a["takes"], a["by"]) for a in added] == [
        ("hey juniper", "wake", 3, "Carol"), ("click send", "command", 3, "Carol"),
        ("select doctor", "command", 3, "Carol")]
    profile = VoiceProfile(profile_path(enrolled.store))
    assert profile.path.stat().st_mode & 0o777 == 0o600
    take = profile.takes("click send")[0]
    audio = profile.audio(take.id)
    journal = b"".join(p.read_bytes() for p in Path(enrolled.store).parent.glob("journal.sqlite*"))
    # Any stretch of the take's samples would be in the journal's files if its audio were.
    stretches = [audio[i:i + 64] for i in range(0, len(audio) - 64, 640)]
    sounding = [s for s in stretches if len(set(s)) > 16]
    assert len(sounding) > 10
    assert not any(s in journal for s in sounding)
    with sqlite3.connect(enrolled.store) as db:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert not any("voice" in n or "take" in n for n in names)


def test_use_teaches_the_profile_and_an_undo_unteaches_it(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from appliance.voice.hearing.learning import UNDO_WINDOW_S, Learning

    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    clock = [0.0]
    learned: list[str] = []
    later = ThreadPoolExecutor(max_workers=1)
    learning = Learning(profile, later.submit, learned.append, now=lambda: clock[0])

    def settle() -> None:
        later.submit(lambda: None).result()

    # "Did you mean click send?" - "yes": the doubted audio is a take, waiting for a second yes.
    learning.heard("click send", espeak("click send", SAID_RATE), "activate", doubted=True)
    learning.heard("yes", espeak("yes", SAID_RATE), "confirm", doubted=False)
    settle()
    assert [(t.phrase, t.source, t.pending) for t in profile.takes()] == [
        ("click send", TakeSource.LEARNED, True)]
    assert profile.template_set().phrases == [], "pending: not used before a second yes"
    # Anything but a yes after the doubt teaches nothing.
    learning.heard("select doctor", espeak("select doctor", 150), "select", doubted=True)
    learning.heard("no", espeak("no", 150), "deny", doubted=False)
    settle()
    assert len(profile.takes()) == 1
    # Carried out and not undone within a minute: a second take, which promotes both.
    learning.heard("click send", espeak("click send", 140), "activate", doubted=False)
    learning.replied(acted=True)
    clock[0] += UNDO_WINDOW_S + 1
    learning.heard("", b"", None, doubted=False)  # the next utterance finds it a minute old
    settle()
    assert [t.pending for t in profile.takes()] == [False, False]
    assert profile.template_set().phrases == ["click send"]
    assert learned == ["click send", "click send"]
    # Refused, or undone within the minute: nothing learned.
    learning.heard("click send", espeak("click send", 170), "activate", doubted=False)
    learning.replied(acted=False)
    learning.heard("click send", espeak("click send", 180), "activate", doubted=False)
    learning.replied(acted=True)
    clock[0] += 10
    learning.heard("undo that", espeak("undo that", 150), "undo", doubted=False)
    learning.replied(acted=True)
    clock[0] += UNDO_WINDOW_S + 1
    learning.heard("", b"", None, doubted=False)
    settle()
    assert len(profile.takes()) == 2
    # A command a take heard, then undone, drops that take (while the phrase keeps two).
    for rate in (130, 190):
        profile.add("click send", TakeKind.COMMAND, espeak("click send", rate))
    ids = [t.id for t in profile.takes()]
    learning.heard("click send", b"", "activate", doubted=False, take=ids[0])
    learning.replied(acted=True)
    learning.heard("undo that", b"", "undo", doubted=False)
    settle()
    assert [t.id for t in profile.takes()] == ids[1:]
    assert all(t.kind == TakeKind.COMMAND for t in profile.takes())


def test_a_confirmed_command_after_the_wake_phrase_teaches_its_words_and_the_wake_phrase(
        tmp_path: Path, loaded: Any) -> None:
    """"hey juniper, click send", doubted and then confirmed: the command's take holds only
    "click send" (a take with the wake phrase in it would widen that phrase's bound), and the
    wake phrase becomes a wake take of its own; without wake takes to split by, or said over a
    television at 5 dB (the take would keep the noise as the person's voice), nothing."""
    from appliance.policy.doubts import Doubt
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
    from appliance.voice.hearing.personal import PersonalHearing, PersonalOptions
    from appliance.voice.hearing.stt_whisper import RATE, TRAILING_BYTES, Transcript
    from appliance.voice.hearing.take_audio import heard_in_noise

    def seconds(pcm: bytes) -> float:
        return len(pcm) / 2 / RATE

    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for rate in ENROL_RATES:
        profile.add("hey juniper", TakeKind.WAKE, espeak("hey juniper", rate))
    learned: list[str] = []
    hearing = PersonalHearing(profile, ClosedWhisperRecognizer(loaded.whisper),
                              lambda f, *a: f(*a), lambda _s: None,
                              PersonalOptions(on_learned=learned.append))
    sentences = closed_set(("Send",), ("Send",))
    said = espeak("hey juniper, click send", SAID_RATE) + bytes(TRAILING_BYTES)
    doubted = Transcript("hey juniper click send", 0.4, 0.0, seconds(said),
                         engine="closed:whisper", wake=True, doubt=Doubt.LESS_SURE)
    yes = espeak("yes", SAID_RATE)
    noisy = mixed(silence(0.3) + said, other_voice(FREE_TALK[:2], "en-gb-x-rp"), 5)
    assert heard_in_noise(noisy) and not heard_in_noise(said)
    for heard in (noisy, said):
        hearing.after(doubted, heard, sentences)
        hearing.after(Transcript("yes", 0.9, 0.0, seconds(yes), engine="closed:whisper"), yes,
                      sentences)
        assert learned == ([] if heard is noisy else ["click send", "hey juniper"])
    takes = {t.phrase: t for t in profile.takes() if t.source == TakeSource.LEARNED}
    assert takes["click send"].kind == TakeKind.COMMAND and takes["click send"].pending
    assert takes["hey juniper"].kind == TakeKind.WAKE and takes["hey juniper"].pending
    alone = {p: seconds(espeak(p, SAID_RATE)) for p in ("click send", "hey juniper")}
    for phrase, length in alone.items():
        assert abs(takes[phrase].seconds - length) < 0.4, (phrase, takes[phrase].seconds, length)
    # No wake takes to find where the command begins: nothing is learned from it.
    bare = VoiceProfile(tmp_path / "bare.voice.sqlite")
    untaught = PersonalHearing(bare, ClosedWhisperRecognizer(loaded.whisper),
                               lambda f, *a: f(*a), lambda _s: None, PersonalOptions())
    untaught.after(doubted, said, sentences)
    untaught.after(Transcript("yes", 0.9, 0.0, seconds(yes), engine="closed:whisper"), yes,
                   sentences)
    assert bare.takes() == []


def test_bad_takes_are_one_line_and_add_nothing(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    good = wav(tmp_path / "good.wav", espeak("click send", 150))
    quiet = wav(tmp_path / "quiet.wav", silence(1.0))
    not_wav = tmp_path / "notes.wav"
    not_wav.write_text("not audio")
    cases = [
        (["--phrase", "click send", str(good), str(quiet)], "quiet.wav: nothing was heard"),
        (["--phrase", "click send", str(not_wav)], "notes.wav is not a WAV file"),
        (["--phrase", "banana split", str(good)], "is not a command the appliance knows"),
        (["--phrase", "click send"], "give at least one WAV file"),
        (["--wake", "--phrase", "click send", str(good)], "one or the other"),
        (["--speech", "--phrase", "click send", str(good)], "one or the other"),
        (["--speech", "--wake", str(good)], "choose one of --wake, --speech"),
        (["--room", str(wav(tmp_path / "short.wav", *[espeak("hum", 150)] * 3))],
         "short.wav: it is shorter than 5 seconds of the room"),
        (["--room", str(wav(tmp_path / "off.wav", silence(10.0)))],
         "off.wav: it holds no sound at all"),
        (["--room", str(good), str(good)], "give one WAV file of the room"),
        (["--room", "--phrase", "click send", str(good)], "one or the other"),
        (["--speech", str(wav(tmp_path / "long.wav", *[espeak("and then we went out to the "
                                                              "garden again", 150)] * 16))],
         "long.wav: it is longer than 30 seconds"),
    ]
    for args, message in cases:
        r = run("enroll", *args, "--store", kiosk.store)
        assert r.code == 1 and message in r.err, (args, r.err)
        assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    assert VoiceProfile(profile_path(kiosk.store)).takes() == []
    with wave.open(str(good)) as w:
        assert w.getframerate() == PIPELINE_RATE


def test_learn_my_voice_at_the_kiosk_takes_each_phrase_and_resumes(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    gap = silence(2.0)  # longer than the wait after a take while enrolling

    def takes(text: str, count: int) -> list[bytes]:
        return [part for i in range(count) for part in (espeak(text, 140 + 15 * i), gap)]

    audio = wav(tmp_path / "enrol.wav", silence(1), espeak("hey juniper, learn my voice", 150),
                gap, *takes("hey juniper", 5), *takes("yes", 3), espeak("stop", 150), gap)
    replies = tmp_path / "replies.wav"
    r = run("run", "--audio", str(audio), "--desktop", f"sim:{kiosk.scene}", "--store",
            kiosk.store, "--no-panel", "--no-switch", "--speak-to", str(replies))
    assert r.code == 0, r.err
    profile = VoiceProfile(profile_path(kiosk.store))
    counts: dict[str, int] = {}
    for take in profile.takes():
        counts[take.phrase] = counts.get(take.phrase, 0) + 1
    assert counts == {"hey juniper": 5, "yes": 3}  # "stop", said when asked for "no", stopped
    timeline = run("audit", "--json", "--store", kiosk.store).json()
    added = [(e["data"]["phrase"], e["data"]["kind"], e["data"]["takes"], e["data"]["by"])
             for e in timeline if e["event"] == "VoiceTakesAdded"]
    assert added == [("hey juniper", "wake", 5, "the person"), ("yes", "command", 3, "the person")]
    assert not any(e["event"] in ("Heard", "Answered") for e in timeline), "takes are no turns"
    # Said again, it goes on where it stopped.
    from appliance.voice.hearing.enrolling import Enrolling

    assert Enrolling.plan(profile, "hey juniper").prompt() == "Say: no."


def test_a_caregivers_request_starts_learning_and_a_stale_one_is_dropped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the caregiver page hands over (test_web_voice.py) starts enrolment at the kiosk, as
    "learn my voice" said does; one left from before the kiosk ran is dropped unsaid."""
    from appliance.web.handoff import enrol_path, post_note

    monkeypatch.setenv("APPLIANCE_HANDOFF_DIR", str(tmp_path / "handoff"))
    gap = silence(2.0)
    takes = [part for i in range(5) for part in (espeak("hey juniper", 140 + 15 * i), gap)]
    takes += [part for i in range(3) for part in (espeak("yes", 140 + 15 * i), gap)]
    audio = wav(tmp_path / "enrol.wav", silence(1), *takes, espeak("stop", 150), gap)
    for stale in (True, False):
        (tmp_path / str(stale)).mkdir()
        kiosk = Kiosk(tmp_path / str(stale), messages())
        request = enrol_path()
        post_note(request, "Carol")
        if stale:
            os.utime(request, (time.time() - 600, time.time() - 600))
        r = run("run", "--audio", str(audio), "--desktop", f"sim:{kiosk.scene}", "--store",
                kiosk.store, "--no-panel", "--no-switch")
        assert r.code == 0, r.err
        assert not request.exists()
        counts: dict[str, int] = {}
        for take in VoiceProfile(profile_path(kiosk.store)).takes():
            counts[take.phrase] = counts.get(take.phrase, 0) + 1
        assert counts == ({} if stale else {"hey juniper": 5, "yes": 3})


def test_the_switch_pauses_skips_and_stops_learning_the_voice(tmp_path: Path) -> None:
    """What the switch's choices ask (switch/controller.py) done by the person's hearing, with
    Whisper and openWakeWord: paused, takes wait and speech is heard as usual; going on asks
    the same phrase; a skipped phrase is left; a stop keeps, and journals, what was taken."""
    from appliance.voice.commands import engines
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
    from appliance.voice.hearing.enrolling import SKIPPED
    from appliance.voice.hearing.personal import GOING_ON, PAUSED, PersonalHearing, PersonalOptions

    loaded = engines("whisper")
    assert loaded.whisper is not None
    said: list[str] = []
    waits: list[float] = []
    enrolled: list[tuple[str, str, int]] = []
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    hearing = PersonalHearing(
        profile, ClosedWhisperRecognizer(loaded.whisper), lambda *a: None, waits.append,
        PersonalOptions(on_enrolled=lambda *e: enrolled.append(e)))
    hearing.say = said.append
    sentences = closed_set(("Send",), ("Send",), ("Send",))

    def take(text: str, rate: int) -> None:
        assert hearing.enrolling
        hearing.enrol_take(espeak(text, rate), sentences, ["Send"])

    hearing.control("start")
    assert hearing.enrolment == "taking" and said[-1].endswith("Say: hey juniper.")
    for rate in (140, 165):
        take("hey juniper", rate)
    hearing.control("pause")
    assert said[-1] == PAUSED and hearing.enrolment == "paused" and not hearing.enrolling
    assert waits[-1] == 0.35, "paused: the wait after speech is the usual one"
    heard = hearing.hear(espeak("hey juniper", 150), sentences, over_reply=False)
    assert heard is None, "two wake takes are no phrase to hear by yet"
    hearing.control("pause")  # pressed twice: still paused, nothing said again
    assert said[-1] == PAUSED and len([s for s in said if s == PAUSED]) == 1
    hearing.control("start")
    assert said[-1] == f"{GOING_ON} Say: hey juniper." and hearing.enrolling
    for rate in (150, 175, 190):
        take("hey juniper", rate)
    assert enrolled == [("hey juniper", "wake", 5)] and said[-1] == "Say: yes."
    take("yes", 150)
    hearing.control("skip")
    assert said[-1] == f"{SKIPPED} Say: no."
    assert enrolled[-1] == ("yes", "command", 1), "a skipped phrase keeps the take it has"
    take("no", 150)
    hearing.control("stop")
    assert said[-1].startswith("Thank you. I learned 3 phrases") and hearing.enrolment == "off"
    assert enrolled[-1] == ("no", "command", 1)
    counts: dict[str, int] = {}
    for kept in profile.takes():
        counts[kept.phrase] = counts.get(kept.phrase, 0) + 1
    assert counts == {"hey juniper": 5, "yes": 1, "no": 1}
    hearing.control("skip")  # nothing is being learned: nothing happens
    assert said[-1].startswith("Thank you.") and hearing.enrolment == "off"


def test_an_answer_after_a_wake_phrase_stands_only_as_whisper_hears_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """"hey juniper, no" is not taken from the takes alone (a near miss and a bare "no" fit them
    as well), while "no" alone and "hey juniper, click send" are. Whisper's words are passed on,
    never asked about; only where the spotter does not know the person's voice (slow speech,
    whose wake phrase Whisper misses) does the takes' wake phrase stand before the answer
    Whisper heard too, when the utterance starts as the person's wake takes do."""
    from dataclasses import replace

    from appliance.policy.doubts import Doubt
    from appliance.voice.commands import engines
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
    from appliance.voice.hearing.personal import PersonalHearing, PersonalOptions
    from appliance.voice.hearing.stt_whisper import Transcript

    loaded = engines("whisper")
    assert loaded.whisper is not None
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for phrase, kind in (("hey juniper", TakeKind.WAKE), ("no", TakeKind.COMMAND),
                         ("click send", TakeKind.COMMAND)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    hearing = PersonalHearing(profile, ClosedWhisperRecognizer(loaded.whisper),
                              lambda *a: None, lambda _s: None, PersonalOptions())
    sentences = closed_set(("Send",), ("Send",), ("Send",))
    alone = hearing.hear(espeak("no", SAID_RATE), sentences, over_reply=False)
    assert alone is not None and alone.text == "no" and not alone.wake
    woken = hearing.hear(espeak("hey juniper, click send", SAID_RATE), sentences, False)
    assert woken is not None and woken.text == "hey juniper click send" and woken.wake
    said = espeak("hey juniper, no", SAID_RATE)
    by_takes = hearing.hear(said, sentences, False)
    assert by_takes is not None and by_takes.wake and by_takes.doubt == Doubt.LESS_SURE
    took = by_takes.stt_ms + 500.0
    same = Transcript("no", 0.8, 500.0, 2.0, engine="closed:whisper", wake=False)
    for knows in (True, False):
        monkeypatch.setattr(hearing, "spotter_knows_voice", lambda knows=knows: knows)
        assert hearing.settled(by_takes, same, said, sentences) == (
            replace(same, stt_ms=took) if knows else replace(by_takes, doubt="", stt_ms=took))
        for whisper in (replace(same, text="you know"), replace(same, doubt=Doubt.LESS_SURE),
                        replace(same, text="yes")):
            assert hearing.settled(by_takes, whisper, said, sentences) == replace(
                whisper, stt_ms=took), whisper
        near_miss = espeak("hi jupiter, no", SAID_RATE)
        assert hearing.settled(by_takes, same, near_miss, sentences) == replace(
            same, stt_ms=took), "not the person's wake phrase"
    whole = hearing.transcribe(said, sentences, (), over_reply=False)
    assert (whole.text, whole.wake) == ("hey juniper no", True), whole


def test_an_answer_whisper_heard_alone_is_doubted_when_it_sounds_like_the_other_answer(
        tmp_path: Path) -> None:
    """Whisper can write a "no" said in noise as "yeah": the person's takes of "no" are then
    nearer than their takes of "yes", and the answer is doubted (the session asks again).
    Whisper's answer stands when its own takes are nearer, after the wake phrase (the wake
    phrase's rules settle it), and without takes of both answers to weigh."""
    from dataclasses import replace

    from appliance.policy.doubts import Doubt
    from appliance.voice.commands import engines
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
    from appliance.voice.hearing.personal import PersonalHearing, PersonalOptions
    from appliance.voice.hearing.stt_whisper import Transcript

    loaded = engines("whisper")
    assert loaded.whisper is not None
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for phrase, kind in (("hey juniper", TakeKind.WAKE), ("yes", TakeKind.COMMAND),
                         ("no", TakeKind.COMMAND), ("click send", TakeKind.COMMAND)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    hearing = PersonalHearing(profile, ClosedWhisperRecognizer(loaded.whisper),
                              lambda *a: None, lambda _s: None, PersonalOptions())
    sentences = closed_set(("Send",), ("Send",), ("Send",))
    whisper = Transcript("yeah", 0.8, 500.0, 1.0, engine="closed:whisper", wake=False)
    no = espeak("no", SAID_RATE)
    talk = other_voice(("the weather will be mild and dry this afternoon",), "en-us+f3")
    for said in (no, mixed(no, talk, 5.0)):
        for whispered in (whisper, replace(whisper, engine="open:whisper")):
            assert hearing.weighed(whispered, said, sentences) == replace(
                whispered, doubt=Doubt.OTHER_ANSWER)
        assert hearing.weighed(replace(whisper, text="no"), said, sentences).doubt == ""
    yes = espeak("yes", SAID_RATE)
    assert hearing.weighed(whisper, yes, sentences) == whisper
    for stands in (replace(whisper, text="hey juniper yeah", wake=True),
                   replace(whisper, engine="closed:templates"),
                   replace(whisper, text="click send")):
        assert hearing.weighed(stands, no, sentences) == stands, stands
    # The whole hearing, on a "no" in another voice: beyond the takes' bounds, Whisper hears
    # it; at 10 dB right, and at 5 dB as "yeah", which would send the message unasked.
    other = other_voice(("no",), "en-gb-x-rp+m2")
    for snr, text, doubt in ((10.0, "no", ""), (5.0, "yeah", Doubt.OTHER_ANSWER)):
        said = mixed(other, talk, snr)
        assert hearing.hear(said, sentences, over_reply=False) is None
        heard = hearing.transcribe(said, sentences, (), over_reply=False)
        assert (heard.text, heard.engine, heard.doubt) == (text, "closed:whisper", doubt), heard
    profile.forget("no")
    assert hearing.weighed(whisper, no, sentences) == whisper, "no takes of no to weigh by"


def test_the_persons_wake_takes_turn_away_a_near_miss_whisper_took_for_the_wake_phrase(
        tmp_path: Path) -> None:
    """The person's wake verifier, with openWakeWord's embeddings of real espeak-ng speech: their
    own wake phrase at a rate no take has fits, in a quiet room and in noise; near misses said
    by the same voice do not, and a transcript that woke on one is not taken as waking."""
    from appliance.voice.commands import engines
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
    from appliance.voice.hearing.personal import PersonalHearing, PersonalOptions, fits_wake
    from appliance.voice.hearing.stt_whisper import TRAILING_BYTES, Transcript, as_captured
    from appliance.voice.hearing.take_audio import (
        NOISY_ROOM_DB,
        signal_to_noise_db,
        with_noise,
    )

    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for rate in (125, 135, 160, 175, 185):
        profile.add("hey juniper", TakeKind.WAKE, espeak("hey juniper", rate))
    templates = profile.template_set()
    own = espeak("hey juniper, click send", SAID_RATE)
    padded = silence(0.3) + own + silence(0.5)
    noisy = with_noise(padded, 10.0)
    assert signal_to_noise_db(padded) == float("inf")
    assert signal_to_noise_db(noisy) < NOISY_ROOM_DB, "judged said in a noisy room"
    assert fits_wake(templates, own) and fits_wake(templates, noisy)
    # Digital silence around a segment (Whisper's padding after it, a file's or a muted input's
    # before it) is no room: a short wake phrase in noise must not seem said in silence.
    wake_alone = with_noise(silence(0.3) + espeak("hey juniper", 220) + silence(0.35), 10.0)
    as_heard = silence(0.5) + wake_alone + bytes(TRAILING_BYTES)
    assert signal_to_noise_db(as_heard) < NOISY_ROOM_DB, "the silence around seemed the room"
    assert signal_to_noise_db(as_captured(as_heard)) < NOISY_ROOM_DB
    assert fits_wake(templates, as_heard)
    for near in ("hi jupiter, click send", "hey jennifer, click send", "okay juniper, click send"):
        assert not fits_wake(templates, espeak(near, SAID_RATE)), near
    loaded = engines("whisper")
    assert loaded.whisper is not None
    hearing = PersonalHearing(profile, ClosedWhisperRecognizer(loaded.whisper), lambda *a: None,
                              lambda _s: None, PersonalOptions())
    woke = Transcript("hey juniper click send", 0.9, 0.0, 2.0, engine="closed:whisper",
                      wake=True)
    assert hearing.verified(woke, own).wake is True
    assert hearing.verified(woke, espeak("hi jupiter, click send", SAID_RATE)).wake is False


def test_whisper_made_to_choose_lets_the_takes_words_stand(tmp_path: Path) -> None:
    """"show numbers", with "hide numbers" on every screen and not enrolled: the takes cannot
    tell the two apart, Whisper made to choose between them can, and the takes' words stand
    without a whole decode. Said "hide numbers", they do not."""
    from appliance.policy.doubts import Doubt
    from appliance.voice.commands import engines
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
    from appliance.voice.hearing.personal import PersonalHearing, PersonalOptions

    loaded = engines("whisper")
    assert loaded.whisper is not None
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for phrase, kind in (("hey juniper", TakeKind.WAKE), ("show numbers", TakeKind.COMMAND)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    recognizer = ClosedWhisperRecognizer(loaded.whisper)
    hearing = PersonalHearing(profile, recognizer, lambda *a: None, lambda _s: None,
                              PersonalOptions())
    sentences = closed_set(("Send",), ("Send",), ("Send",))
    assert "hide numbers" in sentences
    said = espeak("hey juniper, show numbers", SAID_RATE)
    heard = hearing.hear(said, sentences, over_reply=False)
    assert heard is not None and (heard.text, heard.doubt) == ("hey juniper show numbers", "")
    other = espeak("hey juniper, hide numbers", SAID_RATE)
    assert recognizer.choose(other, "show numbers", ["hide numbers"], True).margin < 0
    taken = hearing.hear(other, sentences, over_reply=False)
    assert taken is None or taken.doubt == Doubt.LESS_SURE, taken


@pytest.mark.parametrize("window", ["choice", "quick"])
def test_whisper_chooses_between_sentences_differing_in_one_word_by_that_word(
        window: str) -> None:
    """"scroll up" against "scroll down": only the last word differs, and Whisper's choice is
    scored from there, so it is clear either way (weighed on the whole sentence, the words
    both share thinned this one's margin to under a third, below CHOICE_MARGIN); through the
    short choice window as through the quick one, whose margin was tuned."""
    from appliance.voice.commands import engines
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
    from appliance.voice.hearing.personal import CHOICE_MARGIN

    loaded = engines("whisper")
    assert loaded.whisper is not None
    recognizer = ClosedWhisperRecognizer(loaded.whisper)
    if window == "quick":
        recognizer.choice_window = None
    up = espeak("hey juniper, scroll up", SAID_RATE)
    assert recognizer.choose(up, "scroll up", ["scroll down"], True).margin >= CHOICE_MARGIN
    down = espeak("hey juniper, scroll down", SAID_RATE)
    assert recognizer.choose(down, "scroll up", ["scroll down"], True).margin < 0


def test_whisper_chooses_among_phrases_the_takes_cannot_tell_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Enrolled phrases the takes find nearly as near each other (as noise makes them: here
    forced, every phrase within reach counts as near): Whisper, made to choose among them and
    the sentences spelt near them, picks the one said, and the takes' words stand; said
    something else ("hide numbers", spelt near "show numbers"; "click send", not enrolled), it
    prefers none clearly and the takes pass nothing on. Its choice weighs the command only, so
    a wake phrase the spotter is not sure of ("hey june, pepper, ...") passes nothing on."""
    from appliance.voice.hearing import templates
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.closed_whisper import SPOTTER_SURE

    monkeypatch.setattr(templates, "RIVAL_RATIO", 1e-3)
    profile, recognizer, hearing = spotter_hearing(
        tmp_path, ("scroll up", "scroll down", "show numbers"))
    assert recognizer.spotter is not None
    sentences = closed_set(("Send",), ("Send",), ("Send",))
    for said, passed in (("hey juniper, scroll up", True), ("hey juniper, scroll down", True),
                         ("hey juniper, show numbers", True), ("hey juniper, hide numbers", False),
                         ("hey juniper, click send", False),
                         ("hey june, pepper, scroll up", False)):
        pcm = espeak(said, SAID_RATE)
        found = profile.template_set().hear(pcm, lambda p: p in sentences)
        assert found is not None and not found.decided, (said, found)
        heard = hearing.hear(pcm, sentences, over_reply=False)
        if passed:
            assert recognizer.spotter.score(pcm) >= SPOTTER_SURE
            assert heard is not None, said
            assert (heard.text, heard.doubt, heard.said_in_full) == (
                said.replace(",", ""), "", False), "chosen, never ended at a pause"
        else:
            assert heard is None, (said, heard)


def test_whispers_words_act_after_a_wake_phrase_only_the_takes_heard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command the takes doubt ("click send", with "tick send" on the screen, and Whisper's
    choice between the two never clear enough: here its margin is never met) goes to Whisper;
    when Whisper hears the same words sure but misses the wake phrase (as in slow speech), the
    wake phrase the takes heard stands, if the utterance starts as the person's wake takes.
    When Whisper hears an answer where the takes heard the wake phrase and a command, the
    command is asked about."""
    from dataclasses import replace

    from appliance.policy.doubts import Doubt
    from appliance.voice.commands import engines
    from appliance.voice.hearing import personal
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
    from appliance.voice.hearing.personal import PersonalHearing, PersonalOptions
    from appliance.voice.hearing.stt_whisper import Transcript

    monkeypatch.setattr(personal, "CHOICE_MARGIN", math.inf)
    loaded = engines("whisper")
    assert loaded.whisper is not None
    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for rate in (125, 135, 160, 175, 185):
        profile.add("hey juniper", TakeKind.WAKE, espeak("hey juniper", rate))
    for rate in ENROL_RATES:
        profile.add("click send", TakeKind.COMMAND, espeak("click send", rate))
    hearing = PersonalHearing(profile, ClosedWhisperRecognizer(loaded.whisper),
                              lambda *a: None, lambda _s: None, PersonalOptions())
    sentences = closed_set(("Send",), ("Send",), ("Send",))
    assert "tick send" in sentences
    said = espeak("hey juniper, click send", SAID_RATE)
    by_takes = hearing.hear(said, sentences, over_reply=False)
    assert by_takes is not None and by_takes.wake and by_takes.doubt == Doubt.LESS_SURE
    same = Transcript("click send", 0.8, 500.0, 2.0, engine="closed:whisper", wake=False)
    settled = hearing.settled(by_takes, same, said, sentences)
    assert (settled.text, settled.wake, settled.doubt) == ("hey juniper click send", True, "")
    assert settled.stt_ms == by_takes.stt_ms + 500.0, "the hearing took Whisper's decode too"
    other = replace(same, text="tick send")
    assert hearing.settled(by_takes, other, said, sentences) == replace(
        other, stt_ms=by_takes.stt_ms + 500.0), "Whisper's other words decide"
    unsure = replace(same, doubt=Doubt.LESS_SURE)
    took = by_takes.stt_ms + 500.0
    assert hearing.settled(by_takes, unsure, said, sentences) == replace(by_takes, stt_ms=took), \
        "neither is sure: asked"
    for answer, wake in (("hey juniper no", True), ("don't do that", False)):
        assert sentences.intent_of(answer.removeprefix("hey juniper ")) == "deny"
        heard = replace(same, text=answer, wake=wake)
        assert hearing.settled(by_takes, heard, said, sentences) == replace(
            by_takes, stt_ms=took), f"{answer!r} after the takes' wake phrase and command: asked"
    near_miss = espeak("hi jupiter, click send", SAID_RATE)
    assert hearing.settled(by_takes, same, near_miss, sentences) == replace(same, stt_ms=took), \
        "not the person's wake phrase"


FREE_TALK = (
    "Hey junior, come and sit with me for a while.",  # what they call their grandson
    "We went to the garden this morning, and the roses are out at last.",
    "My daughter rang at eleven; she is coming on Sunday with the little ones.",
    "The soup at lunch was too salty again, but the bread was lovely and warm.",
    "I would like the window open a little this afternoon, if it stays dry.",
    "Tell the nurse that my left hand is stiffer than it was last week.",
    "We watched an old film about a lighthouse, and I fell asleep before the end.",
    "The cat from next door sat on the wall all morning and watched the birds.",
)


def test_learning_the_voice_ends_with_free_speech_that_the_wake_phrase_is_told_from(
        tmp_path: Path) -> None:
    """After the phrases, the person talks freely for half a minute (nothing said back until
    it is enough); its pauses to think do not lengthen the wait after speech, and the wake
    verifier's bound comes within the nearest their own talk came to their wake takes: in a
    noisy room, "hey junior" (their grandson) then no longer passes for their wake phrase."""
    from appliance.voice.hearing.enrolling import (
        FREE_SPEECH_S,
        LISTEN_TO_ROOM,
        TALK_FREELY,
        Enrolling,
    )
    from appliance.voice.hearing.personal import (
        OTHER_SPEECH_SHARE,
        WAKE_VERIFY_LEAST,
        WAKE_VERIFY_QUIET,
        fits_wake,
        wake_bound,
    )
    from appliance.voice.hearing.take_audio import with_noise

    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    for rate in (125, 135, 160, 175, 185):
        profile.add("hey juniper", TakeKind.WAKE, espeak("hey juniper", rate))
    wait = profile.end_of_speech_s()
    own = espeak("hey juniper, click send", SAID_RATE)
    before = profile.template_set()
    assert wake_bound(own, before) == WAKE_VERIFY_QUIET

    def in_noise(text: str) -> bytes:
        return with_noise(silence(0.3) + espeak(text, SAID_RATE) + silence(0.5), 10.0)

    grandson = in_noise("hey junior, click send")
    assert fits_wake(before, grandson), "in noise the wake takes alone let it pass"
    enrolling = Enrolling.plan(profile, "hey juniper", commands=())
    assert enrolling.prompt() == TALK_FREELY
    replies = []
    for first, then in zip(FREE_TALK[::2], FREE_TALK[1::2], strict=False):
        take = espeak(first, 150) + silence(1.2) + espeak(then, 150)  # a pause to think
        replies.append(enrolling.take(take))
        if enrolling.done:
            break
    talked = [t for t in profile.takes() if t.kind == TakeKind.SPEECH]
    assert sum(t.seconds for t in talked) >= FREE_SPEECH_S
    assert replies[:-1] == [""] * (len(replies) - 1) and replies[-1] == LISTEN_TO_ROOM
    assert profile.end_of_speech_s() == wait, "pauses to think are not pauses between words"
    assert Enrolling.plan(profile, "hey juniper", commands=()).prompt() == LISTEN_TO_ROOM
    templates = profile.template_set()
    other = templates.other_fit(noisy=False)
    assert other is not None and other > 0
    assert wake_bound(own, templates) == max(WAKE_VERIFY_LEAST,
                                             min(WAKE_VERIFY_QUIET, OTHER_SPEECH_SHARE * other))
    assert fits_wake(templates, own), "the person's own wake phrase still fits"
    assert fits_wake(templates, in_noise("hey juniper, click send")), "and in noise"
    assert not fits_wake(templates, grandson), "their talk to their grandson no longer does"
    store = str(tmp_path / "journal.sqlite")
    more = wav(tmp_path / "talk.wav", espeak(FREE_TALK[-1], 150))
    r = run("enroll", "--speech", str(more), "--store", store, "--by", "Carol")
    assert r.code == 0 and "of 'talking freely'" in r.out, r.out + r.err
    r = run("enroll", "--list", "--store", store)
    assert f"talking freely (free speech): {len(talked) + 1} takes" in r.out, r.out + r.err


def other_voice(lines: tuple[str, ...], voice: str) -> bytes:
    """Someone else talking (a television in the room): espeak-ng's `voice` reading `lines`."""
    out = bytearray()
    for line in lines:
        with tempfile.TemporaryDirectory() as tmp:
            said = Path(tmp) / "said.wav"
            subprocess.run(["espeak-ng", "-v", voice, "-s", "170", "-w", str(said), line],
                           capture_output=True, check=True)
            out += load_wav(said).data
    return bytes(out)


def mixed(words: bytes, noise: bytes, snr_db: float, level: float = 1.0) -> bytes:
    """`words` with `noise` (repeated as needed) `snr_db` below them, all scaled by `level`."""
    import numpy as np

    from appliance.voice.audio.pcm import float_to_pcm16, pcm16_to_float

    x = pcm16_to_float(words).astype(np.float64)
    n = pcm16_to_float(noise).astype(np.float64)
    n = np.tile(n, len(x) // len(n) + 2)[: len(x)]
    n *= np.sqrt(np.mean(x ** 2)) / np.sqrt(np.mean(n ** 2)) / 10 ** (snr_db / 20)
    return float_to_pcm16(np.clip((x + n) * level, -1, 1).astype(np.float32))


def test_every_take_is_also_learned_in_the_sound_of_the_persons_room(tmp_path: Path) -> None:
    """`appliance enroll --room` (openWakeWord, SQLite): each take gets a copy in the room's own
    sound (a television there) beside its copy in made-up noise; a command said over that
    television later is nearer the person's takes in the room, and farther from their other
    phrases, than in made-up noise. Deleting the room's sound takes its copies away."""
    import numpy as np

    from appliance.voice.hearing.take_audio import room_features, with_noise
    from appliance.voice.hearing.templates import TemplateSet, distance, features, speech

    kiosk = Kiosk(tmp_path, messages())
    for phrase in ("click send", "select doctor", "scroll down"):
        enrol(kiosk, tmp_path, phrase, [espeak(phrase, r) for r in ENROL_RATES])
    profile = VoiceProfile(profile_path(kiosk.store))

    def noisy(templates: TemplateSet) -> list[tuple[int, np.ndarray]]:
        return sorted(((t.take, t.embeddings) for t in templates.commands if t.noisy),
                      key=lambda kept: (kept[0], kept[1].tobytes()))

    television = other_voice(FREE_TALK[:6] * 2, "en-gb-x-rp")[: 30 * PIPELINE_RATE * 2]
    room = mixed(television, television, 60, 0.05)
    later = other_voice(FREE_TALK[6:], "en-gb-scotland")  # the same set, another programme
    said_there = features(speech(mixed(silence(0.3) + espeak("click send", SAID_RATE)
                                       + silence(0.3), later, 10)))
    made_up = profile.template_set()
    r = run("enroll", "--room", str(wav(tmp_path / "room.wav", room)), "--store", kiosk.store,
            "--by", "Carol")
    assert r.code == 0 and "added 1 take of 'the room'" in r.out, r.out + r.err
    assert "the room (the room's own sound): 1 take" in run("enroll", "--list", "--store",
                                                           kiosk.store).out
    in_room = profile.template_set()
    assert in_room.phrases == made_up.phrases, "the room is no phrase"
    assert len(noisy(in_room)) == 2 * len(noisy(made_up)) == 2 * 9

    def nearest(copy: Callable[[bytes], np.ndarray]) -> dict[str, float]:
        found: dict[str, float] = {}
        for take in profile.takes():
            if take.kind == TakeKind.COMMAND:
                far = distance(copy(profile.audio(take.id)), said_there)
                found[take.phrase] = min(found.get(take.phrase, 9.0), far)
        return found

    kept_room = profile.room()
    assert kept_room is not None
    by_room = nearest(lambda said: room_features(said, kept_room))
    by_pink = nearest(lambda said: features(with_noise(said)))
    assert by_room["click send"] < by_pink["click send"]
    rival = min(v for k, v in by_room.items() if k != "click send")
    pink_rival = min(v for k, v in by_pink.items() if k != "click send")
    assert by_room["click send"] / rival < by_pink["click send"] / pink_rival
    late = [profile.add("read it", TakeKind.COMMAND, espeak("read it", r)) for r in (140, 170)]
    copies = noisy(profile.template_set())
    for t in late:
        assert any(take == t.id and np.allclose(e, room_features(profile.audio(t.id), kept_room))
                   for take, e in copies), "a take learned later is also kept in the room"
    talk = profile.add("talking freely", TakeKind.SPEECH, espeak(FREE_TALK[1], 150))
    assert sum(t.take == talk.id for t in profile.template_set().others) == 2, \
        "free speech is kept clean and in made-up noise only: the wake verifier's as measured"
    r = run("enroll", "--forget", "--phrase", "the room", "--store", kiosk.store, "--by", "Carol")
    assert r.code == 0 and "removed 1 take" in r.out, r.out + r.err
    assert profile.room() is None
    again = [(take, e) for take, e in noisy(profile.template_set())
             if take not in {t.id for t in late}]
    assert len(again) == len(noisy(made_up))
    assert all(a[0] == b[0] and np.allclose(a[1], b[1]) for a, b in zip(again, noisy(made_up),
                                                                       strict=True))
    timeline = run("audit", "--json", "--store", kiosk.store).json()
    assert ("the room", "room", 1) in [(e["data"]["phrase"], e["data"]["kind"],
                                        e["data"]["takes"]) for e in timeline
                                       if e["event"] == "VoiceTakesAdded"]
    assert "RIFF" not in json.dumps(timeline)


def test_takes_learned_in_a_noisy_room_are_used_but_never_widen_a_bound(tmp_path: Path) -> None:
    """openWakeWord's embeddings of a real profile (SQLite): "stop" and the wake phrase learned
    twice over a television at 5 dB are used as takes, but each bound, and the wake verifier,
    stay as enrolment set them."""
    from dataclasses import replace

    from appliance.voice.hearing.templates import TemplateSet

    profile = espeak_profile(tmp_path, ("stop", "scroll down"))
    enrolled = profile.template_set()
    television = other_voice(FREE_TALK[:3], "en-gb-x-rp")
    for rate, start in ((145, 0), (175, 40_000)):
        for phrase, kind in (("stop", TakeKind.COMMAND), ("hey juniper", TakeKind.WAKE)):
            said = silence(0.2) + espeak(phrase, rate) + silence(0.2)
            profile.learn(phrase, mixed(said, television[start:], 5), kind)
    used = profile.template_set()
    learned = {t.take for t in used.commands + used.wake if t.learned}
    assert len(learned) == 4 and all(t.source == TakeSource.LEARNED and not t.pending
                                     for t in profile.takes() if t.id in learned)
    assert used.spreads == enrolled.spreads and used.wake_spread == enrolled.wake_spread
    widened = TemplateSet.of([replace(t, learned=False) for t in used.commands])
    assert widened.spreads["stop"] > 1.5 * enrolled.spreads["stop"], \
        "counted as enrolled, the noisy takes would have widened the bound"
    # Near misses in that television's sound fit the learned wake takes (the noise in both):
    # the verifier reads the enrolled ones alone, so it lets through what it did before.
    assert len(used.verifying) == len(enrolled.wake) < len(used.wake)
    trusting = TemplateSet.of(used.commands, [replace(t, learned=False) for t in used.wake])
    nearer = 0
    for rate, start, line in ((160, 80_000, "hey jupiter, stop"), (150, 120_000, "hey june")):
        heard = mixed(silence(0.2) + espeak(line, rate) + silence(0.2), television[start:], 5)
        assert used.wake_fit(heard) == enrolled.wake_fit(heard)
        nearer += (trusting.wake_fit(heard) or 0) < (enrolled.wake_fit(heard) or 0)
    assert nearer == 2, "read from every wake take, the verifier would fit them nearer"
    assert used.wake_split(mixed(silence(0.2) + espeak("hey juniper, stop", 160)
                                 + silence(0.2), television[80_000:], 5)) is not None


def test_a_take_learned_in_use_makes_a_match_surer_but_never_makes_one(tmp_path: Path) -> None:
    """openWakeWord's embeddings of a real profile (SQLite): a television's line learned as
    "scroll down" (a take that kept the wrong sound) is not heard as it when the television says
    it again, since no enrolled take of "scroll down" is near; a true take of "stop" learned in
    use is still the nearest to the person's "stop"."""
    from appliance.voice.hearing.templates import TemplateSet

    profile = espeak_profile(tmp_path, ("stop", "scroll down"))
    enrolled = profile.template_set()
    for voice in ("en-gb-x-rp", "en-us+m3"):
        profile.learn("scroll down", silence(0.2) + other_voice(("call for help",), voice))
    for _ in range(2):
        profile.learn("stop", silence(0.3) + espeak("stop", SAID_RATE, 70) + silence(0.1))
    used = profile.template_set()
    learned = {p: {t.take for t in used.commands if t.learned and t.phrase == p}
               for p in ("stop", "scroll down")}
    assert all(learned.values()) and used.spreads == enrolled.spreads

    again = mixed(silence(0.5) + other_voice(("call for help",), "en-gb-x-rp"),
                  other_voice(FREE_TALK[:1], "en-us+m3"), 20)
    trusting = TemplateSet(used.commands, used.wake, used.spreads, used.wake_spread)
    found = trusting.hear(again, lambda _p: True)
    assert found is not None and found.phrase == "scroll down" and \
        found.take in learned["scroll down"], "counted freely, the learned take would match"
    assert used.hear(again, lambda _p: True) is None
    assert used.nearest_takes(again, used.phrases) == enrolled.nearest_takes(again,
                                                                            used.phrases)

    said = silence(0.2) + espeak("stop", SAID_RATE, 65) + silence(0.2)
    before, after = enrolled.hear(said, lambda _p: True), used.hear(said, lambda _p: True)
    assert before is not None and after is not None and before.phrase == after.phrase == "stop"
    assert after.take in learned["stop"] and after.distance < before.distance


def test_learning_the_voice_at_the_kiosk_ends_by_listening_to_the_room(tmp_path: Path) -> None:
    """Through the real pipeline (webrtcvad, Whisper, openWakeWord, SQLite): with every phrase
    and the free speech already taken, "learn my voice" asks for quiet and keeps half a minute
    of the room (a television talking in it, which is no take), then says it is done."""
    from appliance.voice.hearing.enrolling import (
        COMMAND_TAKES,
        LISTEN_TO_ROOM,
        ROOM_S,
        STARTING_COMMANDS,
        WAKE_TAKES,
        Enrolling,
    )

    kiosk = Kiosk(tmp_path, messages())
    profile = VoiceProfile(profile_path(kiosk.store))
    for i in range(WAKE_TAKES):
        profile.add("hey juniper", TakeKind.WAKE, espeak("hey juniper", 130 + 15 * i))
    for command in STARTING_COMMANDS:
        for i in range(COMMAND_TAKES):
            profile.add(command, TakeKind.COMMAND, espeak(command, 140 + 20 * i))
    for lines in (FREE_TALK[1:4], FREE_TALK[4:6], FREE_TALK[6:]):
        profile.add("talking freely", TakeKind.SPEECH, espeak(" ".join(lines), 150))
    assert Enrolling.plan(profile, "hey juniper").prompt() == LISTEN_TO_ROOM
    television = other_voice(FREE_TALK * 2, "en-gb-x-rp")
    room = mixed(television, television, 60, 0.02)[: 50 * PIPELINE_RATE * 2]
    audio = wav(tmp_path / "enrol.wav", silence(1), espeak("hey juniper, learn my voice", 150),
                silence(2), room, silence(3))
    r = run("run", "--audio", str(audio), "--desktop", f"sim:{kiosk.scene}", "--store",
            kiosk.store, "--no-panel", "--no-switch")
    assert r.code == 0, r.err
    kept = [t for t in profile.takes() if t.kind == TakeKind.ROOM]
    assert len(kept) == 1 and abs(kept[0].seconds - ROOM_S) < 0.5, kept
    assert sum(t.kind == TakeKind.COMMAND for t in profile.takes()) == 15 * COMMAND_TAKES, \
        "the television's words were no takes"
    assert Enrolling.plan(profile, "hey juniper").done
    timeline = run("audit", "--json", "--store", kiosk.store).json()
    added = [(e["data"]["phrase"], e["data"]["kind"], e["data"]["by"])
             for e in timeline if e["event"] == "VoiceTakesAdded"]
    assert added == [("the room", "room", "the person")]


def test_free_speech_said_in_many_short_takes_is_all_kept_up_to_a_minute(
        tmp_path: Path) -> None:
    """At the kiosk the person's talk comes as one take a sentence (openWakeWord, SQLite): more
    than the ten takes a phrase keeps are kept while they add up to less than a minute, so
    half a minute of short sentences is enough and not asked for again; beyond a minute the
    oldest go."""
    from appliance.voice.hearing.enrolling import FREE_SPEECH_S, TALK_FREELY, Enrolling
    from appliance.voice.hearing.profile import KEPT_PER_PHRASE, KEPT_SPEECH_S

    profile = VoiceProfile(tmp_path / "journal.voice.sqlite")
    said = [profile.add("talking freely", TakeKind.SPEECH, espeak(line, rate))
            for rate in (150, 175) for line in FREE_TALK[:6]]
    talked = [t for t in profile.takes() if t.kind == TakeKind.SPEECH]
    assert len(talked) == len(said) > KEPT_PER_PHRASE
    assert FREE_SPEECH_S <= sum(t.seconds for t in talked) <= KEPT_SPEECH_S
    assert Enrolling.plan(profile, "hey juniper", commands=()).prompt() != TALK_FREELY
    newest = [profile.add("talking freely", TakeKind.SPEECH, espeak(line, 200))
              for line in FREE_TALK]
    talked = [t for t in profile.takes() if t.kind == TakeKind.SPEECH]
    assert sum(t.seconds for t in talked) <= KEPT_SPEECH_S
    assert {t.id for t in newest} <= {t.id for t in talked}
    assert said[0].id not in {t.id for t in talked}, "the oldest went"


def test_a_near_miss_the_spotter_doubts_is_left_to_whisper_by_the_takes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Near misses of the wake phrase fit the start of the person's wake takes ("hey junie,
    stop" is split and matched as "stop"); where the wake spotter is not fairly sure of them,
    though it would not veto Whisper's wake phrase, the takes pass nothing on. The person's own
    commands still pass; at the old level (the spotter's veto) the near misses would too."""
    from appliance.voice.hearing import personal
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.closed_whisper import SPOTTER_VETO
    from appliance.voice.hearing.personal import TAKES_SPOTTER_FLOOR

    commands = ("stop", "show numbers", "scroll down")
    profile, recognizer, hearing = spotter_hearing(tmp_path, commands)
    assert recognizer.spotter is not None
    sentences = closed_set(("Send",), ("Send",), ("Send",))
    misses = {"hey junie, stop": espeak("hey junie, stop", 140, 40),
              "hey jenny, show numbers": espeak("hey jenny, show numbers", 170, 60),
              "hey ginger, scroll down": espeak("hey ginger, scroll down", 140, 40)}
    own = {f"hey juniper, {c}": espeak(f"hey juniper, {c}", SAID_RATE) for c in commands}

    def passed() -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for said, pcm in {**misses, **own}.items():
            heard = hearing.hear(pcm, sentences, over_reply=False)
            out[said] = heard.text if heard is not None and not heard.doubt else None
        return out

    for said, pcm in misses.items():
        found = profile.template_set().hear(pcm, lambda p: p in sentences)
        assert found is not None and found.wake and found.decided, (said, found)
        assert found.phrase == said.split(", ")[1]
        assert SPOTTER_VETO <= recognizer.spotter.score(pcm) < TAKES_SPOTTER_FLOOR, said
    theirs = {said: said.replace(",", "") for said in own}
    assert passed() == {**dict.fromkeys(misses), **theirs}
    monkeypatch.setattr(personal, "TAKES_SPOTTER_FLOOR", SPOTTER_VETO)
    assert passed() == {said: f"hey juniper {said.split(', ')[1]}" for said in misses} | theirs


def test_the_spotter_scores_each_wake_take_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A take learned from use changes the profile after many commands; scoring every wake
    take again (about 0.1 s each) would hold the next command's hearing. Only a wake take that
    comes into use is scored, a new take under a deleted one's id too; with the wake takes
    forgotten the spotter knows no voice."""
    from appliance.voice.hearing.wake_spotter import WakeSpotter

    profile, _, hearing = spotter_hearing(tmp_path, ("click send",))
    scored: list[int] = []
    score = WakeSpotter.score

    def counted(self: WakeSpotter, pcm: bytes) -> float:
        scored.append(len(pcm))
        return score(self, pcm)

    monkeypatch.setattr(WakeSpotter, "score", counted)
    generation = profile.generation()
    profile.learn("click send", espeak("click send", SAID_RATE))
    profile.learn("click send", espeak("click send", 170))  # the second confirmation: in use
    profile.learn("hey juniper", espeak("hey juniper", SAID_RATE), TakeKind.WAKE)  # pending
    assert profile.generation() > generation
    assert hearing.spotter_knows_voice() and scored == []
    profile.learn("hey juniper", espeak("hey juniper", 170), TakeKind.WAKE)
    assert hearing.spotter_knows_voice()
    assert len(scored) == 2 and len(profile.wake_takes()) == len(ENROL_RATES) + 2
    profile.forget("hey juniper")
    for rate in ENROL_RATES:  # under the ids of the last takes deleted
        profile.add("hey juniper", TakeKind.WAKE, espeak("hey juniper", rate))
    assert hearing.spotter_knows_voice() and len(scored) == 2 + len(ENROL_RATES)
    profile.forget("hey juniper")
    assert not hearing.spotter_knows_voice()


def test_a_profile_changed_in_quiet_is_worked_out_before_the_person_speaks(
        tmp_path: Path, loaded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caregiver enrols two more wake takes from their page while the room is quiet: the
    spotter scores them in the quiet, before the person's command, not while it is said."""
    from appliance.voice.audio.sources import WavSource
    from appliance.voice.commands import VoiceOptions, run_voice
    from appliance.voice.hearing.personal import PersonalHearing
    from appliance.voice.hearing.templates import speech
    from appliance.voice.hearing.wake_spotter import WakeSpotter
    from tests.integration.test_voice_pipeline import ScriptedSink

    path = tmp_path / "journal.voice.sqlite"
    profile = VoiceProfile(path)
    for phrase, kind in (("hey juniper", TakeKind.WAKE), ("select grandma", TakeKind.COMMAND)):
        for rate in ENROL_RATES:
            profile.add(phrase, kind, espeak(phrase, rate))
    events: list[str] = []
    score, warm = WakeSpotter.score, PersonalHearing.warm

    def scored(self: WakeSpotter, pcm: bytes) -> float:
        events.append("score")
        return score(self, pcm)

    def warmed(self: PersonalHearing, pcm: bytes) -> None:
        events.append("warm")
        warm(self, pcm)

    monkeypatch.setattr(WakeSpotter, "score", scored)
    monkeypatch.setattr(PersonalHearing, "warm", warmed)

    class CaregiverEnrols(WavSource):
        def read(self, samples: int) -> bytes | None:
            if self._pos >= PIPELINE_RATE * 2 and "enrolled" not in events:
                deadline = time.monotonic() + 120
                while events.count("score") < len(ENROL_RATES) and time.monotonic() < deadline:
                    time.sleep(0.01)  # the takes enrolled before are scored as the run starts
                for rate in (140, 175):  # the caregiver's page writes the same file
                    VoiceProfile(path).add("hey juniper", TakeKind.WAKE,
                                           espeak("hey juniper", rate))
                events.append("enrolled")
            return super().read(samples)

    said = speech(espeak("hey juniper select grandma", SAID_RATE))
    sink = ScriptedSink()
    run_voice(CaregiverEnrols(pcm=Pcm(silence(5) + said + silence(1.5), PIPELINE_RATE)), sink,
              loaded, None, VoiceOptions(profile=path))
    assert sink.texts == ["select grandma"]
    enrolled, spoken = events.index("enrolled"), events.index("warm")
    assert events[:enrolled].count("score") == len(ENROL_RATES)
    assert events[enrolled:spoken].count("score") == 2, events
