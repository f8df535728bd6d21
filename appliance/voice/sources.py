"""Where microphone-side audio comes from: a WAV file, a pyaudio microphone, and a supervisor
that keeps a failing device retried with back-off instead of ending the process."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from appliance.voice.audio_file import PIPELINE_RATE, Pcm, load_wav
from appliance.voice.errors import VoiceError

log = logging.getLogger(__name__)

CHUNK_SAMPLES = 320  # 20 ms at 16 kHz: a whole number of webrtcvad frames


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
    """The default input device through pyaudio, opened at 16 kHz mono."""

    live = True

    def __init__(self) -> None:
        self._pa: Any = None
        self._stream: Any = None

    def open(self) -> None:
        import pyaudio  # type: ignore[import-untyped]

        with native_stderr_silenced():
            pa = pyaudio.PyAudio()
            try:
                pa.get_default_input_device_info()
                stream = pa.open(
                    format=pyaudio.paInt16, channels=1, rate=PIPELINE_RATE, input=True,
                    frames_per_buffer=CHUNK_SAMPLES,
                )
            except (OSError, ValueError):
                pa.terminate()
                raise VoiceError("No microphone found.") from None
        self._pa, self._stream = pa, stream

    def read(self, samples: int) -> bytes | None:
        if self._stream is None:
            raise OSError("microphone is not open")
        data: bytes = self._stream.read(samples, exception_on_overflow=False)
        return data

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
