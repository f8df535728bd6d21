"""The audio clock the feeder keeps, and the wake-up the feeder waits on."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

from appliance.voice.audio.pcm import PIPELINE_RATE


class AudioClock:
    """How much audio has been read, and when; only the feeder advances it."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.samples = 0
        # (audio clock at the end of a chunk, monotonic time it was read): maps speech in the
        # audio to the moments a switch is pressed in. A few minutes back is plenty.
        self._read_at: deque[tuple[float, float]] = deque(maxlen=10_000)

    def ms(self) -> float:
        """Wall-clock ms since the run began."""
        return (time.monotonic() - self.t0) * 1000

    @property
    def clock_s(self) -> float:
        return self.samples / PIPELINE_RATE

    def advance(self, samples: int) -> None:
        self.samples += samples
        self._read_at.append((self.clock_s, time.monotonic()))

    def monotonic_at(self, clock_s: float) -> float:
        """When the audio at `clock_s` was read (the first chunk ending at or after it)."""
        for end_s, t in self._read_at:
            if end_s >= clock_s:
                return t
        return time.monotonic()


class Wakeup:
    """Processors `notify` when what they own changes; the feeder waits for a condition."""

    def __init__(self) -> None:
        self._changed = asyncio.Event()

    def notify(self) -> None:
        self._changed.set()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float | None = None) -> bool:
        async def loop() -> None:
            while not predicate():
                self._changed.clear()
                if predicate():
                    return
                await self._changed.wait()

        try:
            await asyncio.wait_for(loop(), timeout)
        except TimeoutError:
            return False
        return True
