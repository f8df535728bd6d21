"""The running kiosk's heartbeat: a small file beside the journal, rewritten every few seconds,
saying whether it hears the microphone now. The caregiver page reads it ("Listening now").

It holds only times, a sound level, a state and a process id: never words, never the journal's
content. Written atomically (a new file renamed over the old one), mode 0600."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Literal, get_args

from appliance.health.audio import SILENT_SHARE, zero_share

log = logging.getLogger(__name__)

FILE_NAME = "kiosk-heartbeat.json"
WRITE_EVERY_S = 5.0  # often enough to go stale quickly, rare enough for an SD card
STALE_S = 20.0  # no new beat for this long: the kiosk stopped or hangs
NO_SOUND_S = 10.0  # the kiosk beats but has read no audio for this long: the microphone is gone
STARTING_TOO_LONG_S = 300.0  # loading speech models takes seconds, not minutes
MEASURE_EVERY_S = 0.25  # one chunk's level in this long is measured: cheap on a file at speed
WINDOW = 8  # measured chunks the level and the silence are judged over (~2 s of a microphone)

Kind = Literal["starting", "listening", "muted", "stopped"]


def heartbeat_path(folder: Path) -> Path:
    """Where the kiosk whose journal is in `folder` keeps its heartbeat."""
    return folder / FILE_NAME


@dataclass(frozen=True)
class Beat:
    """One heartbeat as written: times are Unix seconds."""

    at: float  # when it was written
    state: Kind
    since: float  # when this state began
    heard_at: float | None  # when audio was last read from the microphone (or file)
    level_dbfs: float | None  # the recent sound level; None before any sound was measured
    pid: int


def read_beat(path: Path) -> Beat | None:
    """The heartbeat at `path`; None when there is none or it cannot be read as one."""
    try:
        data: Any = json.loads(path.read_text())
        state = data["state"]
        if state not in get_args(Kind):
            return None
        heard, level = data.get("heard_at"), data.get("level_dbfs")
        return Beat(at=float(data["at"]), state=state, since=float(data["since"]),
                    heard_at=None if heard is None else float(heard),
                    level_dbfs=None if level is None else float(level), pid=int(data["pid"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def write_beat(path: Path, beat: Beat) -> None:
    """Atomically: a reader sees the old beat or the new one, never half of one."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(asdict(beat), out)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


class HeartbeatWriter:
    """The kiosk's side: told of each chunk of audio read (`heard`, from the audio thread),
    it writes the heartbeat from a thread of its own, at once when the state changes."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time,
                 every_s: float = WRITE_EVERY_S) -> None:
        self.path = path
        self.clock = clock
        self.every_s = every_s
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        now = clock()
        self._state: Kind = "starting"
        self._since = now
        self._heard_at: float | None = None
        self._measured_at = -math.inf
        self._levels: deque[tuple[float, float]] = deque(maxlen=WINDOW)  # (mean square, zeros)
        self._told = False  # a failed write is logged once, not every few seconds

    def heard(self, chunk: bytes) -> None:
        """A chunk of 16-bit audio was read; only a few a second are measured."""
        now = self.clock()
        with self._lock:
            self._heard_at = now
            if now - self._measured_at < MEASURE_EVERY_S:
                return
            self._measured_at = now
            samples = array("h", chunk[: len(chunk) - len(chunk) % 2])
            if not samples:
                return
            square = sum(s * s for s in samples) / len(samples)
            self._levels.append((square, zero_share(samples)))
            zeros = sum(z for _, z in self._levels) / len(self._levels)
            state: Kind = "muted" if zeros >= SILENT_SHARE else "listening"
            changed = state != self._state
            if changed:
                self._state, self._since = state, now
        if changed:
            self._wake.set()  # written by the writer's thread: the audio thread never waits

    def beat(self) -> Beat:
        with self._lock:
            level = None
            if self._levels:
                square = sum(s for s, _ in self._levels) / len(self._levels)
                level = round(20 * math.log10(math.sqrt(square) / 32768), 1) if square else None
            return Beat(at=self.clock(), state=self._state, since=self._since,
                        heard_at=self._heard_at, level_dbfs=level, pid=os.getpid())

    def write(self) -> None:
        try:
            write_beat(self.path, self.beat())
        except OSError as e:  # a full or read-only disk must not stop the kiosk
            if not self._told:
                self._told = True
                log.warning("cannot write the heartbeat %s: %s", self.path, e)

    def start(self) -> None:
        self.write()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """The kiosk is closing: said in the file at once, so the page need not wait to see."""
        with self._lock:
            self._stopping = True
            self._state, self._since = "stopped", self.clock()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.write()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.every_s)
            self._wake.clear()
            if self._stopping:
                return
            self.write()


class Metered:
    """An audio source that tells the heartbeat of each chunk it reads, and changes nothing."""

    def __init__(self, inner: Any, heard: Callable[[bytes], None]) -> None:
        self.inner = inner
        self.live: bool = inner.live
        self._heard = heard

    def open(self) -> None:
        self.inner.open()

    def read(self, samples: int) -> bytes | None:
        chunk: bytes | None = self.inner.read(samples)
        if chunk:
            self._heard(chunk)
        return chunk

    def close(self) -> None:
        self.inner.close()


# -- the page's side ------------------------------------------------------------------------


@dataclass(frozen=True)
class Liveness:
    """Whether the kiosk is listening now, in a caregiver's words."""

    kind: Literal["never", "stopped", "gone", "starting", "silent", "muted", "listening"]
    headline: str  # "Listening now", "Not listening since 14:02"
    words: str  # one or two plain sentences: what is known, what is not, what to do
    technical: str  # the times and numbers behind it, for the folded detail

    @property
    def key(self) -> str:
        """Changes when the state changes, not with the sound level: a live region that said
        "quiet room", then "talking nearby", every few seconds would be read out each time."""
        return f"{self.kind}|{self.headline}"

    @property
    def tag(self) -> str:
        """`key` in a few letters, for the address the page polls with."""
        return hashlib.sha256(self.key.encode()).hexdigest()[:12]

    @property
    def ok(self) -> bool:
        """Nothing a caregiver need do."""
        return self.kind == "listening"


def _clock(at: float, now: float, zone: tzinfo) -> str:
    """"14:02", or "Monday 14:02" when it was not today."""
    moment, today = datetime.fromtimestamp(at, zone), datetime.fromtimestamp(now, zone)
    if moment.date() == today.date():
        return moment.strftime("%H:%M")
    return f"{moment:%A} {moment.day} {moment:%B} {moment:%H:%M}"


def loudness(level: float | None) -> str:
    """A sound level as a person hears it."""
    if level is None or level < -70:
        return "almost silence"
    if level < -50:
        return "a quiet room"
    if level < -30:
        return "some sound, such as talking nearby"
    return "loud sound"


def liveness(beat: Beat | None, now: float, zone: tzinfo) -> Liveness:
    """What the heartbeat says at `now` (Unix seconds, injected so tests need not wait)."""
    if beat is None:
        return Liveness("never", "Not known if it is listening", (
            "The kiosk has not reported to this page: it is not running, or has not run since "
            "this page was set up. It starts by itself when the device starts."),
            "no heartbeat file")
    tech = (f"heartbeat from process {beat.pid} at {_clock(beat.at, now, zone)} "
            f"({now - beat.at:.0f} s ago); state {beat.state} since "
            f"{_clock(beat.since, now, zone)}" + (
                f"; audio last read {now - beat.heard_at:.0f} s ago" if beat.heard_at else "")
            + (f"; level {beat.level_dbfs:.0f} dBFS" if beat.level_dbfs is not None else ""))
    last = beat.heard_at or beat.since
    if beat.state == "stopped":
        return Liveness("stopped", f"Not listening since {_clock(beat.since, now, zone)}", (
            "The kiosk was closed (switched off, restarted or stopped by hand). On the device "
            "it starts again by itself; if this stays, restart the device."), tech)
    if now - beat.at > STALE_S:
        return Liveness("gone", f"Not listening since {_clock(min(last, beat.at), now, zone)}", (
            f"The kiosk stopped answering at {_clock(beat.at, now, zone)}: it may have crashed "
            "or the device may be off. It restarts by itself after a crash; if this stays, "
            "restart the device."), tech)
    if beat.state == "starting":
        if now - beat.since > STARTING_TOO_LONG_S:
            return Liveness("gone", "Not listening: still starting", (
                f"The kiosk has been starting since {_clock(beat.since, now, zone)} and has "
                "not heard the microphone yet. Restart the device; if it happens again, the "
                "microphone may be missing."), tech)
        return Liveness("starting", "Starting: not listening yet", (
            f"The kiosk started at {_clock(beat.since, now, zone)} and is getting ready to "
            "hear. This takes a few seconds."), tech)
    if beat.heard_at is None or now - beat.heard_at > NO_SOUND_S:
        return Liveness("silent", f"Not hearing the microphone since {_clock(last, now, zone)}", (
            "The kiosk is running, but no sound comes from the microphone: check that it is "
            "plugged in. The kiosk keeps trying it."), tech)
    if beat.state == "muted":
        since = _clock(beat.since, now, zone)
        return Liveness("muted", f"The microphone is muted (since {since})", (
            "The kiosk hears only silence: the microphone's sound is switched off or turned "
            "right down. Check its mute switch, or turn its volume up."), tech)
    return Liveness("listening", "Listening now", (
        f"The kiosk hears the microphone: {loudness(beat.level_dbfs)} at the moment."), tech)
