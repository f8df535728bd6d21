"""Where the appliance's own voice goes: a sound card through pyaudio, or a WAV recording."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, write_wav

log = logging.getLogger(__name__)


class WavRecorder:
    """Keeps everything spoken, with a short pause between replies; `save` writes one WAV."""

    def __init__(self, path: Path, gap_s: float = 0.4) -> None:
        self.path = path
        self._pcm = bytearray()
        self._gap = bytes(int(gap_s * PIPELINE_RATE) * 2)

    def play(self, pcm: bytes, rate: int) -> None:
        assert rate == PIPELINE_RATE
        self._pcm += pcm

    def reply_done(self) -> None:
        self._pcm += self._gap

    def save(self) -> Path:
        write_wav(self.path, Pcm(bytes(self._pcm), PIPELINE_RATE))
        return self.path


class PyAudioSpeaker:
    """The default output device; `play` blocks while the audio sounds."""

    def __init__(self) -> None:
        import pyaudio  # type: ignore[import-untyped]

        self._pa: Any = pyaudio.PyAudio()
        try:
            self._stream: Any = self._pa.open(
                format=pyaudio.paInt16, channels=1, rate=PIPELINE_RATE, output=True
            )
        except OSError:
            self._pa.terminate()
            raise

    def play(self, pcm: bytes, rate: int) -> None:
        self._stream.write(pcm)

    def reply_done(self) -> None:
        pass

    def close(self) -> None:
        self._stream.close()
        self._pa.terminate()


def open_speaker() -> PyAudioSpeaker | None:
    """A speaker if there is one; a kiosk without one still works (and journals what it said)."""
    try:
        return PyAudioSpeaker()
    except OSError as e:
        log.warning("No speaker found (%s); replies are journaled but not heard.", e)
        return None
