"""The caregiver page's Health in plain words (issue 45): the kiosk's heartbeat, judged at an
injected "now" so nothing here waits, the heartbeat file as the kiosk writes it, and the
language model said as what Settings ask for and what the device has."""

from __future__ import annotations

import json
import os
from array import array
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from appliance.health.heartbeat import (
    NO_SOUND_S,
    STALE_S,
    STARTING_TOO_LONG_S,
    Beat,
    HeartbeatWriter,
    Metered,
    heartbeat_path,
    liveness,
    read_beat,
)
from appliance.settings import Settings

UTC = ZoneInfo("UTC")
NOON = 1_796_212_800.0  # Wednesday 2 December 2026, 12:00 UTC


def _beat(state: str = "listening", at: float = NOON, heard: float | None = NOON,
          since: float = NOON - 600, level: float | None = -55.0) -> Beat:
    return Beat(at=at, state=state, since=since, heard_at=heard, level_dbfs=level,  # type: ignore[arg-type]
                pid=4242)


class Clock:
    """Time that moves only when told."""

    def __init__(self, now: float = NOON) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _noise(samples: int = 320) -> bytes:
    return array("h", [(-1) ** i * (30 + i % 7) for i in range(samples)]).tobytes()


def test_a_fresh_beat_is_listening_and_goes_stale_without_anyone_waiting() -> None:
    now = liveness(_beat(), NOON + 2, UTC)
    assert now.ok and now.headline == "Listening now"
    assert "a quiet room" in now.words
    later = liveness(_beat(heard=NOON), NOON + STALE_S + 1, UTC)
    assert not later.ok and later.kind == "gone"
    assert later.headline == "Not listening since 12:00"
    assert "stopped answering at 12:00" in later.words
    assert "4242" in later.technical and "4242" not in later.words  # no process ids up front


def test_each_state_is_said_as_what_is_known_and_what_to_do() -> None:
    assert liveness(None, NOON, UTC).headline == "Not known if it is listening"
    stopped = liveness(_beat("stopped", since=NOON - 60), NOON, UTC)
    assert stopped.kind == "stopped" and stopped.headline == "Not listening since 11:59"
    muted = liveness(_beat("muted", since=NOON - 120), NOON + 1, UTC)
    assert muted.kind == "muted" and "mute switch" in muted.words
    silent = liveness(_beat(heard=NOON - NO_SOUND_S - 5), NOON, UTC)
    assert silent.kind == "silent" and "plugged in" in silent.words
    starting = liveness(_beat("starting", heard=None, since=NOON - 5), NOON, UTC)
    assert starting.kind == "starting" and not starting.ok
    stuck = liveness(_beat("starting", heard=None, since=NOON - STARTING_TOO_LONG_S - 1),
                     NOON, UTC)
    assert stuck.kind == "gone"
    yesterday = liveness(_beat("stopped", since=NOON - 86_400), NOON, UTC)
    assert yesterday.headline == "Not listening since Tuesday 1 December 12:00"
    for said in (stopped, muted, silent, starting, stuck):
        assert "dBFS" not in said.words and "heartbeat" not in said.words


def test_the_live_region_changes_with_the_state_not_with_the_sound_level() -> None:
    quiet, loud = liveness(_beat(level=-60), NOON, UTC), liveness(_beat(level=-20), NOON, UTC)
    assert quiet.words != loud.words and quiet.tag == loud.tag
    assert liveness(_beat("muted"), NOON, UTC).tag != quiet.tag


def test_the_kiosk_writes_its_heartbeat_atomically_privately_and_without_words(
        tmp_path: Path) -> None:
    clock = Clock()
    path = heartbeat_path(tmp_path)
    writer = HeartbeatWriter(path, clock=clock)
    writer.write()
    assert read_beat(path) == Beat(at=NOON, state="starting", since=NOON, heard_at=None,
                                   level_dbfs=None, pid=os.getpid())
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    source = Metered(_ListOfChunks([_noise()] * 3), writer.heard)
    clock.now += 1
    while source.read(320) is not None:
        clock.now += 0.3  # each chunk a measured one
    writer.write()
    beat = read_beat(path)
    assert beat is not None and beat.state == "listening" and beat.heard_at == NOON + 1.6
    assert beat.level_dbfs is not None and -70 < beat.level_dbfs < -50
    assert set(json.loads(path.read_text())) == {"at", "state", "since", "heard_at",
                                                 "level_dbfs", "pid"}
    for _ in range(10):  # a muted capture: exactly zero
        clock.now += 0.3
        writer.heard(bytes(640))
    writer.write()
    assert read_beat(path).state == "muted"  # type: ignore[union-attr]
    writer.start()
    writer.stop()
    assert read_beat(path).state == "stopped"  # type: ignore[union-attr]
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_a_damaged_heartbeat_reads_as_none(tmp_path: Path) -> None:
    path = heartbeat_path(tmp_path)
    for text in ("", "{", '{"state": "dancing", "at": 1, "since": 1, "pid": 1}', "[]"):
        path.write_text(text)
        assert read_beat(path) is None, text


class _ListOfChunks:
    live = False

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)

    def open(self) -> None:
        pass

    def read(self, samples: int) -> bytes | None:
        return self.chunks.pop(0) if self.chunks else None

    def close(self) -> None:
        pass


def test_health_and_settings_say_what_is_asked_and_what_is_used(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import appliance.intents.llm_default as llm_default
    from appliance.health.language_model import in_words

    monkeypatch.setattr(llm_default, "installed_llm", lambda settings: "off")
    default = in_words(Settings(), frozenset())
    assert default.state == "ok" and default.used == "off"
    assert default.words.startswith("Settings ask for Ollama")
    assert "this device has none" in default.words and "appliance" not in default.words
    chosen_off = in_words(Settings(llm="off"), frozenset({"llm"}))
    assert chosen_off.words.startswith("Settings ask for none (a caregiver chose)")
