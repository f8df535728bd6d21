"""The person's voice and taught names as the caregiver page words them (issue 44 item 2, issue
46 item 3): phrases with the wake phrase first, takes enrolled, learned or waiting, a take as a
WAV of its own length, taught names by application, and a removal journaled by name."""

from __future__ import annotations

import io
import wave
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from appliance.desktop.seeing.taught import TaughtTarget
from appliance.journal.application import Journal
from appliance.voice.audio.pcm import PIPELINE_RATE
from appliance.voice.hearing.profile import Take, TakeKind, TakeSource
from appliance.web.voice import aliases_by_app, phrases, taught_by_app, wav_of, when

UTC_ZONE = ZoneInfo("UTC")
NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC).timestamp()


def _take(take_id: int, phrase: str, kind: TakeKind = TakeKind.COMMAND,
          source: TakeSource = TakeSource.ENROLLED, pending: bool = False) -> Take:
    return Take(take_id, phrase, kind, source, pending, NOON + take_id * 60, 1.25, 0.1)


def test_phrases_put_the_wake_phrase_first_free_speech_and_room_last_and_say_how_each_came(
) -> None:
    shown = phrases([_take(7, "the room", TakeKind.ROOM),
        _take(1, "tick urgent"), _take(2, "hey juniper", TakeKind.WAKE),
        _take(3, "tick urgent", source=TakeSource.LEARNED),
        _take(4, "click send", source=TakeSource.LEARNED, pending=True),
        _take(5, "hey juniper", TakeKind.WAKE), _take(6, "talking freely", TakeKind.SPEECH)],
        UTC_ZONE)
    assert [p.title for p in shown] == [
        "\u201chey juniper\u201d (the wake phrase)", "\u201cclick send\u201d",
        "\u201ctick urgent\u201d",
        "The person talking freely (the wake phrase is told apart from it)",
        "The sound of the room, no one speaking (every take is also learned in it)"]
    assert [p.counts for p in shown] == [
        "2 takes: 2 enrolled", "1 take: 1 learned from a yes; 1 waiting for a second yes",
        "2 takes: 1 enrolled, 1 learned from a yes", "1 take: 1 enrolled", "1 take: 1 enrolled"]
    assert shown[0].key == 2 and [t.number for t in shown[0].takes] == [1, 2]
    assert [t.how for t in shown[2].takes] == ["Enrolled", "Learned from a yes"]
    assert shown[1].takes[0].how.endswith("waiting for a second yes (not used yet)")
    assert shown[0].takes[0].length == "1.2 seconds"
    assert shown[0].takes[0].when == "Tue 1 Dec 12:02"
    assert phrases([], UTC_ZONE) == []


def test_a_take_plays_as_a_wav_of_its_own_length() -> None:
    pcm = bytes(range(256)) * 125  # 32,000 bytes: one second at 16 kHz
    with wave.open(io.BytesIO(wav_of(pcm))) as played:
        assert (played.getnchannels(), played.getsampwidth(), played.getframerate()) == (
            1, 2, PIPELINE_RATE)
        assert played.getnframes() == PIPELINE_RATE
        assert played.readframes(PIPELINE_RATE) == pcm


def test_times_are_in_the_caregivers_zone() -> None:
    assert when(NOON, ZoneInfo("Pacific/Auckland")) == "Wed 2 Dec 01:00"


def _target(target_id: str, app: str, name: str, hits: int = 0, misses: int = 0,
            by: str = "voice turn 0123456789abcdef") -> TaughtTarget:
    return TaughtTarget(id=target_id, app=app, window="Main", name=name, offset=(1, 1, 10, 10),
                        text="", fingerprint="0" * 16, by=by, hits=hits,
                        misses_since_hit=misses)


def test_taught_names_read_by_application_with_how_they_have_worked() -> None:
    at = datetime.fromtimestamp(NOON, UTC)
    apps = taught_by_app([
        _target("a1", "tkform", "Save", hits=3, misses=2), _target("b2", "Galculator", "Equals"),
        _target("c3", "tkform", "Print", misses=1, by="switch turn fedcba9876543210"),
        _target("d4", "tkform", "Close", hits=1, by="")], {"a1": at, "c3": at}, UTC_ZONE)
    assert [app for app, _ in apps] == ["Galculator", "tkform"]
    save, printed, close = apps[1][1]
    assert (save.taught, save.turn) == ("Tue 1 Dec 12:00, by voice", "01234567")
    assert save.used == "Worked 3 times; missed twice since it last worked"
    assert (printed.taught, printed.turn) == ("Tue 1 Dec 12:00, with the switch", "fedcba98")
    assert printed.used == "Not worked yet; missed once so far"
    assert (close.taught, close.turn, close.used) == ("not known", "", "Worked once")
    assert apps[0][1][0].taught == "by voice"


def test_a_taught_target_removed_by_a_caregiver_is_journaled_with_their_name(
        tmp_path: Path) -> None:
    journal = Journal(str(tmp_path / "journal.sqlite"))
    journal.teach_target(_target("a1", "tkform", "Save"))
    journal.teach_target(_target("b2", "tkform", "Print"))
    assert set(journal.taught_at()) == {"a1", "b2"}
    assert journal.forget_target("a1", by="Carol")
    assert not journal.forget_target("a1", by="Carol")  # already gone: nothing journaled
    assert not journal.forget_target("zz", by="Carol")
    assert [t.id for t in Journal(str(tmp_path / "journal.sqlite")).taught_targets()] == ["b2"]
    forgotten = [(type(e).__name__, e.target, e.by) for _, e in journal.domain_events()
                 if type(e).__name__ == "TargetForgotten"]
    assert forgotten == [("TargetForgotten", "a1", "Carol")]


def test_names_given_to_elements_read_by_application() -> None:
    from appliance.journal.alias_log import Alias

    at = datetime.fromtimestamp(NOON, UTC)
    apps = aliases_by_app([
        Alias(id="a1", app="Contacts", element="Doctor Patel", name="my doctor", by="voice",
              turn="0123456789abcdef" * 2, at=at),
        Alias(id="b2", app="Contacts", element="Anna Smith", name="my daughter", by="Carol"),
        Alias(id="c3", app="Calls", element="Dial", name="ring", by="switch", at=at)], UTC_ZONE)
    assert [app for app, _ in apps] == ["Calls", "Contacts"]
    doctor, daughter = apps[1][1]
    assert (doctor.taught, doctor.turn) == ("Tue 1 Dec 12:00, by voice", "01234567")
    assert (daughter.taught, daughter.turn) == ("by Carol", "")
    assert apps[0][1][0].taught == "Tue 1 Dec 12:00, with the switch"
