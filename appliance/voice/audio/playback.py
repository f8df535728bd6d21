"""The reply audio on its way to the speaker, 20 ms at a time, so that it can be stopped at
once (barge-in) and so that the echo canceller knows what the speaker played when.

Clocked by the microphone: each chunk the feeder reads, `tick` plays the next chunk of the
reply. With a file that is the only clock there is; with a live microphone and a sound card
both run at 16 kHz in real time, and the speaker's write is given its own thread so that a
full output buffer never holds up the microphone.
"""

from __future__ import annotations

import queue
import threading
from typing import Protocol

from appliance.voice.audio.pcm import PIPELINE_RATE


class Speaker(Protocol):
    def play(self, pcm: bytes, rate: int) -> None: ...

    def reply_done(self) -> None: ...


class Playback:
    """Queued reply audio; `tick` plays one chunk and returns it (silence when idle)."""

    def __init__(self, speaker: Speaker | None, live: bool = False) -> None:
        self._speaker = speaker
        self._pending = bytearray()
        self._lock = threading.Lock()
        self.played_samples = 0  # of the reply being spoken
        self.paused = False
        self._writer: queue.Queue[bytes | None] | None = None
        if live and speaker is not None:
            self._writer = queue.Queue()
            threading.Thread(target=self._write, name="speaker", daemon=True).start()

    @property
    def playing(self) -> bool:
        return bool(self._pending)

    def queue(self, pcm: bytes) -> None:
        with self._lock:
            self._pending += pcm

    def pause(self) -> None:
        """Hold the reply (someone may be saying "stop"); `resume` or `stop` follows."""
        self.paused = True

    def resume(self) -> None:
        self.paused = False

    def tick(self, samples: int) -> bytes:
        """The next `samples` of the reply, now on their way to the speaker (silence if none)."""
        if self.paused:
            return bytes(samples * 2)
        with self._lock:
            chunk = bytes(self._pending[: samples * 2])
            del self._pending[: samples * 2]
        if not chunk:
            return bytes(samples * 2)
        self.played_samples += len(chunk) // 2
        if self._writer is not None:
            self._writer.put(chunk)
        elif self._speaker is not None:
            self._speaker.play(chunk, PIPELINE_RATE)
        return chunk + bytes(samples * 2 - len(chunk))

    def stop(self) -> int:
        """Silence the speaker now: drop what is queued; returns the samples dropped."""
        with self._lock:
            dropped = len(self._pending) // 2
            self._pending.clear()
        self.paused = False
        if self._writer is not None:
            while not self._writer.empty():
                try:
                    self._writer.get_nowait()
                except queue.Empty:
                    break
        return dropped

    def reply_done(self) -> float:
        """The reply is over: seconds of it that were played."""
        played, self.played_samples = self.played_samples, 0
        if self._speaker is not None:
            self._speaker.reply_done()
        return played / PIPELINE_RATE

    def close(self) -> None:
        if self._writer is not None:
            self._writer.put(None)

    def _write(self) -> None:
        assert self._writer is not None and self._speaker is not None
        while (chunk := self._writer.get()) is not None:
            self._speaker.play(chunk, PIPELINE_RATE)
