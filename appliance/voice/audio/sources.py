"""Where microphone-side audio comes from: a WAV file, a pyaudio microphone, and a supervisor
that keeps a failing device retried with back-off instead of ending the process."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, load_wav
from appliance.voice.errors import VoiceError

log = logging.getLogger(__name__)

CHUNK_SAMPLES = 320  # 20 ms at 16 kHz: a whole number of webrtcvad frames
CAPTURE_SAMPLES = 1600  # 100 ms: what the device hands PortAudio's thread at a time


class AudioSource(Protocol):
    """16 kHz mono 16-bit PCM in chunks. `live` sources run in real time (a microphone)."""

    live: bool

    def open(self) -> None: ...

    def read(self, samples: int) -> bytes | None:
        """Up to `samples` samples; None at the end of the stream; OSError on a fault."""
        ...

    def close(self) -> None: ...


class WavSource:
    """A recording of the user's side; the pipeline may pace it faster than real time."""

    live = False

    def __init__(self, path: Path | None = None, pcm: Pcm | None = None) -> None:
        if pcm is None:
            if path is None:
                raise ValueError("WavSource needs a path or PCM")
            pcm = load_wav(path)
        self.pcm = pcm
        self._pos = 0

    def open(self) -> None:
        self._pos = 0

    def read(self, samples: int) -> bytes | None:
        data = self.pcm.data
        if self._pos >= len(data):
            return None
        chunk = data[self._pos : self._pos + samples * 2]
        self._pos += len(chunk)
        return chunk

    def close(self) -> None:
        pass


@contextmanager
def native_stderr_silenced() -> Iterator[None]:
    """ALSA and JACK print dozens of lines from C while PortAudio probes devices; the user gets
    our one-line message instead. Python's own sys.stderr is untouched."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


class MicSource:
    """The default input device through pyaudio, opened at 16 kHz mono.

    PortAudio's own thread queues what the device captures and `read` takes from the queue: a
    blocking read from the pipeline's loop lost audio whenever the loop was held up for longer
    than the device's small buffer (a transcription on a slow device: "open notes" heard as
    "don't" in the booted image). The device's periods are longer than the pipeline's chunks:
    with 20 ms ones a busy device overran and the speech arrived in pieces
    (docs/measurements/device-vm.md). What is lost all the same is counted and logged."""

    live = True

    def __init__(self, max_queued_s: float = 30.0, stall_s: float = 5.0) -> None:
        self._pa: Any = None
        self._stream: Any = None
        self._queued = bytearray()
        self._ready = threading.Condition()
        self._max_queued = int(max_queued_s * PIPELINE_RATE) * 2
        self._stall_s = stall_s
        self.overflows = 0  # the device's buffer overran before PortAudio's thread could run
        self.dropped_s = 0.0  # the oldest audio dropped: the pipeline was behind by max_queued_s
        self._told, self._told_at = (0, 0.0), -30.0

    def open(self) -> None:
        import pyaudio  # type: ignore[import-untyped]

        with native_stderr_silenced():
            pa = pyaudio.PyAudio()
            try:
                pa.get_default_input_device_info()
                stream = pa.open(
                    format=pyaudio.paInt16, channels=1, rate=PIPELINE_RATE, input=True,
                    frames_per_buffer=CAPTURE_SAMPLES, stream_callback=self._captured,
                )
            except (OSError, ValueError):
                pa.terminate()
                raise VoiceError("No microphone found.") from None
        with self._ready:
            self._queued.clear()
        self._pa, self._stream = pa, stream

    @property
    def device_latency_s(self) -> float:
        """How much audio the open device holds for PortAudio's thread, in seconds."""
        if self._stream is None:
            raise OSError("microphone is not open")
        return float(self._stream.get_input_latency())

    def _captured(self, data: bytes | None, _frames: int, _time: Any, status: int) -> Any:
        import pyaudio

        with self._ready:
            if status & pyaudio.paInputOverflow:
                self.overflows += 1
            self._queued += data or b""
            excess = len(self._queued) - self._max_queued
            if excess > 0:
                del self._queued[:excess]
                self.dropped_s += excess / 2 / PIPELINE_RATE
            self._ready.notify()
        return None, pyaudio.paContinue

    def read(self, samples: int) -> bytes | None:
        if self._stream is None:
            raise OSError("microphone is not open")
        size = samples * 2
        with self._ready:
            if not self._ready.wait_for(lambda: len(self._queued) >= size, self._stall_s):
                # An unplugged device stops the stream's callbacks: ResilientSource reopens it.
                raise OSError(f"no audio from the microphone for {self._stall_s:.0f} s")
            chunk = bytes(self._queued[:size])
            del self._queued[:size]
        self._tell_losses()
        return chunk

    def _tell_losses(self) -> None:
        """A warning when audio was lost since the last one, at most every 30 s."""
        lost = (self.overflows, round(self.dropped_s, 1))
        now = time.monotonic()
        if lost != self._told and now >= self._told_at + 30:
            self._told, self._told_at = lost, now
            log.warning("the microphone lost audio: %d overruns of the device's buffer, %.1f s "
                        "dropped from the queue so far (the device is too busy)", *lost)

    def close(self) -> None:
        stream, pa, self._stream, self._pa = self._stream, self._pa, None, None
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
        if pa is not None:
            pa.terminate()


class ResilientSource:
    """Wraps a live source: a read error is reported, the device reopened with back-off."""

    def __init__(
        self,
        inner: AudioSource,
        on_fault: Callable[[str], None] | None = None,
        first_delay_s: float = 0.5,
        max_delay_s: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.inner = inner
        self.live = inner.live
        self.on_fault = on_fault
        self._first = first_delay_s
        self._max = max_delay_s
        self._sleep = sleep
        self.faults = 0
        self._stopped = False

    def open(self) -> None:
        self.inner.open()  # the first open fails loudly: no device at all is the user's to fix

    def stop(self) -> None:
        self._stopped = True

    def read(self, samples: int) -> bytes | None:
        delay = self._first
        while True:
            try:
                return self.inner.read(samples)
            except (OSError, VoiceError) as e:
                if self._stopped:
                    return None
                self.faults += 1
                message = f"Microphone lost ({e}); retrying in {delay:.1f} s."
                log.warning(message)
                if self.on_fault is not None:
                    self.on_fault(message)
                self._reopen(delay)
                delay = min(delay * 2, self._max)

    def _reopen(self, delay: float) -> None:
        with contextlib.suppress(OSError):
            self.inner.close()
        self._sleep(delay)
        try:
            self.inner.open()
        except (OSError, VoiceError) as e:
            log.warning("Microphone still unavailable: %s", e)

    def close(self) -> None:
        self.inner.close()
