"""The feeder: pushes microphone-side audio into the pipeline, keeping the audio clock, the mute
while the appliance speaks, and a file's pace."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from pipecat.frames.frames import EndFrame, InputAudioRawFrame
from pipecat.pipeline.worker import PipelineWorker

from appliance.voice.audio.clock import AudioClock, Wakeup
from appliance.voice.audio.echo import EchoCanceller
from appliance.voice.audio.pcm import PIPELINE_RATE
from appliance.voice.audio.playback import Playback
from appliance.voice.audio.sources import CHUNK_SAMPLES, AudioSource
from appliance.voice.pipeline.speech_output import SpeechOutput
from appliance.voice.pipeline.vad_step import TrackedVADProcessor

log = logging.getLogger(__name__)

# A file waits for each turn and its reply however slow the machine is (a local LLM on a
# loaded CPU can take minutes); it says so every STALL_S and gives up only after STALL_LIMIT_S,
# when something must be broken.
STALL_S = 60.0
STALL_LIMIT_S = 900.0


class Feeder:
    """Pushes the source into the pipeline, keeping the audio clock and the mute.

    A file goes as fast as the VAD reads it, or at `pace` times real time (the benchmark uses
    1.0 so that "end of speech" is a moment in real time), and waits while the appliance is
    still answering what it heard; a live microphone is muted while the appliance speaks.
    With a `playback` and an `echo` canceller (barge-in) nothing is muted: each chunk read plays
    the next chunk of the reply, which the canceller then takes out of what the mic heard, and a
    file goes on while the reply plays (a person may speak over it).
    """

    def __init__(
        self,
        source: AudioSource,
        clock: AudioClock,
        wakeup: Wakeup,
        vad: TrackedVADProcessor,
        output: SpeechOutput,
        pace: float | None = None,
        heartbeat: Callable[[], None] | None = None,
        playback: Playback | None = None,
        echo: EchoCanceller | None = None,
    ) -> None:
        self._source = source
        self._playback = playback
        self._echo = echo
        self._heartbeat = heartbeat
        self._clock = clock
        self._wakeup = wakeup
        self._vad = vad
        self._output = output
        self._pace = pace
        self.muted_chunks = 0

    def _idle(self) -> bool:
        return self._output.idle(self._vad.segments)

    def _may_feed(self) -> bool:
        """A file's next chunk may go in: all answered, or a reply is playing (barge-in); and,
        fed faster than real time, the STT has answered the last pause."""
        if self._pace is None and self._vad.awaiting is not None:
            return False
        return self._idle() or (self._playback is not None and self._output.replying)

    def _hear(self, chunk: bytes, far: bytes | None) -> bytes:
        """What the microphone heard, less the speaker's echo. Always through the canceller,
        played or not: it delays the audio a little (echo.GATE_LOOKAHEAD), which must not
        come and go."""
        if self._echo is None or far is None or len(chunk) % (2 * CHUNK_SAMPLES):
            return chunk  # (a file's last, partial chunk is not worth a canceller's frame)
        return self._echo.process(chunk, far[: len(chunk)])

    async def wait_until_idle(self, idle: Callable[[], bool] | None = None) -> None:
        """Wait for every heard segment to be answered; a file's next audio must not go in
        before."""
        waited = 0.0
        while not await self._wakeup.wait_for(idle or self._idle, timeout=STALL_S):
            waited += STALL_S
            if waited >= STALL_LIMIT_S:
                log.warning("the pipeline did not settle in %.0f s; going on", waited)
                self._output.give_up(self._vad.segments)
                return
            log.warning("still waiting for a turn and its reply (%.0f s so far)", waited)

    async def run(self, worker: PipelineWorker, started: asyncio.Event) -> None:
        """Feed until the source ends; at the end of a file, drain and end the worker."""
        await started.wait()
        source, live = self._source, self._source.live
        silence = bytes(CHUNK_SAMPLES * 2)
        trailing = int(1.0 * PIPELINE_RATE / CHUNK_SAMPLES)  # closes a segment still open at EOF
        sent = 0
        due = time.monotonic()
        while True:
            if not live and not self._may_feed():
                await self.wait_until_idle(self._may_feed)
                due = time.monotonic()
            if self._pace and not live:
                due += CHUNK_SAMPLES / PIPELINE_RATE / self._pace
                await asyncio.sleep(max(0.0, due - time.monotonic()))
            chunk = (
                await asyncio.to_thread(source.read, CHUNK_SAMPLES) if live
                else source.read(CHUNK_SAMPLES)
            )
            if self._heartbeat is not None:
                self._heartbeat()
            if chunk is None:
                if trailing <= 0 and (self._playback is None or self._idle()):
                    break
                # A reply still playing at the end of a file plays out (the room stays open).
                if self._playback is None or not self._output.replying:
                    trailing -= 1
                chunk = silence
            if len(chunk) % 2:
                chunk = chunk[:-1]
            if self._playback is not None:
                far = self._playback.tick(CHUNK_SAMPLES)
                chunk = self._hear(chunk, far)
            self._clock.advance(len(chunk) // 2)
            if live and self._output.muted():
                self.muted_chunks += 1
                continue
            await worker.queue_frame(InputAudioRawFrame(chunk, PIPELINE_RATE, 1))
            sent += 1
            if not live:
                # Faster than real time, but never ahead of the VAD: segment ends are then known
                # before the next chunk goes in.
                await self._wakeup.wait_for(lambda n=sent: self._vad.frames_read >= n)  # type: ignore[misc]
        await self.wait_until_idle()
        await worker.queue_frame(EndFrame())
