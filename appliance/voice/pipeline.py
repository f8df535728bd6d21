"""The pipecat pipeline: source -> webrtcvad -> STT -> wake gate -> turn -> Piper -> speaker/WAV.

Each step owns its state and tells the others through frames (appliance/voice/frames.py).
The feeder pushes microphone-side audio into a PipelineWorker run by a WorkerRunner. A file is
fed as fast as the VAD consumes it, but like a polite user it waits while the appliance is
still working on (or answering) what it just heard; a live microphone keeps running and is
muted while the appliance speaks, so the appliance never hears itself. With barge-in, the reply
plays 20 ms per microphone chunk (appliance/voice/playback.py) and the microphone stays open
through an echo canceller whose reference is that reply, so "stop" can cut it short.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pipecat.frames.frames import (
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    TTSAudioRawFrame,
    TTSStoppedFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.workers.runner import WorkerRunner

from appliance.voice.audio_file import PIPELINE_RATE, resample_pcm16
from appliance.voice.clock import AudioClock, Wakeup
from appliance.voice.echo import EchoCanceller
from appliance.voice.frames import (
    AnsweringFrame,
    OpenWindowFrame,
    ReplyDoneFrame,
    ResumeReplyFrame,
    Segment,
    SegmentFrame,
    SettledFrame,
)
from appliance.voice.playback import Playback
from appliance.voice.sink import TurnSink
from appliance.voice.sources import CHUNK_SAMPLES, AudioSource
from appliance.voice.stt_whisper import SpeculatedFrame, SpeculateFrame
from appliance.voice.vad import FRAME_MS, VadSettings, WebRTCVADAnalyzer

log = logging.getLogger(__name__)

MUTE_TAIL_S = 0.3  # room echo after the last sample played
# A file waits for each turn and its reply however slow the machine is (a local LLM on a
# loaded CPU can take minutes); it says so every STALL_S and gives up only after STALL_LIMIT_S,
# when something must be broken.
STALL_S = 60.0
STALL_LIMIT_S = 900.0


class SpeechSink(Protocol):
    """Where the appliance's voice goes: a speaker (play blocks while it sounds) or a WAV."""

    def play(self, pcm: bytes, rate: int) -> None: ...

    def reply_done(self) -> None: ...


@dataclass
class VoiceStats:
    """Counters for a run: what was heard, ignored, muted, and where time went."""

    segments: int = 0
    ignored: int = 0
    wake_only: int = 0
    muted_chunks: int = 0
    faults: int = 0
    interruptions: int = 0  # replies cut short by barge-in
    heard: list[dict[str, Any]] = field(default_factory=list)


class TrackedVADProcessor(VADProcessor):
    """pipecat's VADProcessor, also sending each segment's times and counting what it read.

    It tells the STT of each pause (SpeculateFrame); an STT that `answers` them
    (SpeculatedFrame) may end the segment there, when it heard a command said in full, and
    until it answers a file is not fed further (`awaiting`): what the file's pauses do then
    does not depend on how fast the machine hears.
    """

    def __init__(
        self, settings: VadSettings, clock: AudioClock, notify: Callable[[], None],
        answers: bool = False,
    ) -> None:
        self._analyzer = WebRTCVADAnalyzer(settings)
        super().__init__(vad_analyzer=self._analyzer, audio_idle_timeout=0)
        self._settings = settings
        self._clock = clock
        self._notify = notify
        self._answers = answers
        self._open_start: tuple[float, float] | None = None
        self._speculating = False
        self._speculate_frames = round(settings.speculate_secs * 1000 / FRAME_MS)
        self._stop_frames = round(settings.stop_secs * 1000 / FRAME_MS)
        self._pause = 0
        self.awaiting: int | None = None  # the pause whose early transcript is not in yet
        self.frames_read = 0
        self.segments = 0

    async def broadcast_frame(self, frame_cls: type[Frame], **kwargs: Any) -> None:
        clock = self._clock
        if frame_cls is VADUserStartedSpeakingFrame:
            # The VAD decides `start_secs` after the speech began.
            # The wall clock says when the VAD knew; the audio clock where speech began.
            self._open_start = (clock.ms(), max(0.0, clock.clock_s - self._settings.start_secs))
        elif frame_cls is VADUserStoppedSpeakingFrame:
            start_ms, start_s = self._open_start or (clock.ms(), clock.clock_s)
            self._open_start = None
            silent = self._analyzer.trailing_unvoiced
            segment = Segment(start_ms, clock.ms(), start_s, clock.clock_s,
                              silence_s=silent * FRAME_MS / 1000, early=silent < self._stop_frames)
            # Ahead of the stop frame, after which the STT sends this segment's transcript.
            await self.push_frame(SegmentFrame(segment=segment))
            self.segments += 1
            self._notify()
        await super().broadcast_frame(frame_cls, **kwargs)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, SpeculatedFrame):
            self._answered(frame)
            return
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            await self._speculate()
            self.frames_read += 1
            self._notify()

    def _answered(self, frame: SpeculatedFrame) -> None:
        """The STT's early transcript of a pause: a command said in full, in the pause still
        going on, ends the segment now."""
        if frame.pause == self.awaiting:
            self.awaiting = None
            self._notify()
        if (frame.said_in_full and frame.pause == self._pause and self._speculating
                and self._settings.end_when_said_in_full):
            self._analyzer.end_now()

    async def _speculate(self) -> None:
        """Tell the STT when the user pauses mid-segment, and when they go on speaking."""
        if self._open_start is None or self._speculate_frames <= 0:
            self._speculating = False
            return
        silent = self._analyzer.trailing_unvoiced
        if not self._speculating and silent >= self._speculate_frames:
            self._speculating = True
            self._pause += 1
            if self._answers:
                self.awaiting = self._pause
            await self.push_frame(SpeculateFrame(pause=self._pause))
        elif self._speculating and silent == 0:
            self._speculating = False
            await self.push_frame(SpeculateFrame(cancel=True, pause=self._pause))


class SpeechOutput(FrameProcessor):
    """Plays (or records) the reply audio, then unmutes the mic and reports `spoke` to the sink.

    The one owner of whether the appliance is answering and of how many heard segments are
    done with (settled), which the feeder reads to mute the mic and to pace a file. With a
    `playback` (barge-in), the reply is queued there instead: speech heard over it pauses it at
    once (the VAD's start), and the gate then stops it (InterruptionFrame) or resumes it.
    """

    def __init__(
        self,
        sink: TurnSink,
        speaker: SpeechSink | None,
        clock: AudioClock,
        notify: Callable[[], None],
        mute_while_speaking: bool = True,
        playback: Playback | None = None,
    ) -> None:
        super().__init__()
        self._sink = sink
        self._speaker = speaker
        self._clock = clock
        self._notify = notify
        self._mute_while_speaking = mute_while_speaking
        self._pcm = bytearray()  # the reply being spoken
        self._first_audio: tuple[float, float] | None = None  # (audio clock, ms)
        self._mute_until_s = 0.0
        self._playback = playback
        self._cut: tuple[float, float] | None = None  # (ms, audio clock) the reply was stopped
        self._silent_at: tuple[float, float] | None = None  # paused, and not resumed since
        self.speaking = False
        self.replying = False  # its audio is playing (or queued): barge-in may stop it
        self.settled = 0
        self.interruptions = 0
        self.resumed = 0  # replies paused for speech that was not "stop": how often

    def muted(self) -> bool:
        if not self._mute_while_speaking or self._playback is not None:
            return False
        return self.speaking or self._clock.clock_s < self._mute_until_s

    def idle(self, segments: int) -> bool:
        """Every one of the `segments` heard so far is answered, and nothing is being said."""
        return self.settled >= segments and not self.speaking

    def give_up(self, segments: int) -> None:
        """Take the `segments` heard so far as answered (a turn that never ended)."""
        self.speaking, self.settled = False, max(self.settled, segments)

    def _settle(self, segment: bool, answered: bool) -> None:
        if answered:
            self.speaking = False
        if segment:
            self.settled += 1
        self._notify()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, AnsweringFrame):
            self.speaking = True
        elif isinstance(frame, InterruptionFrame):
            self._interrupt()
            await self.push_frame(frame, direction)
        elif isinstance(frame, VADUserStartedSpeakingFrame) and self._playback is not None:
            if self.replying and self._cut is None and not self._playback.paused:
                self._playback.pause()
                self._silent_at = (self._clock.ms(), self._clock.clock_s)
            await self.push_frame(frame, direction)
        elif isinstance(frame, ResumeReplyFrame):
            if self._playback is not None and self._cut is None:
                self._playback.resume()
                self._silent_at = None
                self.resumed += 1
        elif isinstance(frame, SettledFrame):
            self._settle(frame.segment, frame.answered)
        elif isinstance(frame, TTSAudioRawFrame):
            if self._cut is not None:
                return  # the rest of a reply that was stopped
            if self._first_audio is None:
                self._first_audio = (self._clock.clock_s, self._clock.ms())
            pcm = resample_pcm16(frame.audio, frame.sample_rate, PIPELINE_RATE)
            self._pcm += pcm
            if self._playback is not None:
                self._playback.queue(pcm)
                if not self.replying:
                    self.replying = True
                    self._notify()  # a file waiting for the reply goes on while it plays
            elif self._speaker is not None:
                await asyncio.to_thread(self._speaker.play, pcm, PIPELINE_RATE)
        elif isinstance(frame, ReplyDoneFrame):
            if self._playback is not None:
                # The reply is queued, not yet heard: it is done when played out or stopped.
                playback = self._playback
                await self._wait(lambda: not playback.playing)
            duration = len(self._pcm) / 2 / PIPELINE_RATE
            first, self._pcm, self._first_audio = self._first_audio, bytearray(), None
            try:
                await self._finish(frame, duration, first)
            finally:
                # Even if recording `spoke` fails, the mic must unmute and the file go on.
                self._settle(frame.segment, answered=True)
        elif isinstance(frame, TTSStoppedFrame):
            return  # not the end of the reply (see ReplyDoneFrame)
        else:
            await self.push_frame(frame, direction)

    def _interrupt(self) -> None:
        """Barge-in: silence the speaker now; the reply ends when its ReplyDoneFrame comes."""
        if self._playback is None or not self.replying or self._cut is not None:
            return
        self._playback.stop()
        self._cut = (self._clock.ms(), self._clock.clock_s)
        self.interruptions += 1
        self._notify()

    async def _wait(self, done: Callable[[], bool]) -> None:
        # The playback drains as the feeder reads the microphone, in another task.
        while not done():
            await asyncio.sleep(0.005)

    async def _finish(
        self, done: ReplyDoneFrame, duration: float, first: tuple[float, float] | None
    ) -> None:
        clock = self._clock
        started = first[0] if first is not None else clock.clock_s
        ends = max(started + duration, clock.clock_s)
        self._mute_until_s = ends + MUTE_TAIL_S
        timings = dict(done.timings)
        if first is not None:
            timings["first_audio"] = round(first[1], 1)
        timings |= {"spoken_s": round(duration, 3), "spoke_done": round(clock.ms(), 1)}
        cut, self._cut = self._cut, None
        silent, self._silent_at = self._silent_at or cut, None
        if self._playback is not None:
            # What was heard, not what was synthesized: a reply cut short says where; the
            # speaker went silent when the speech began (paused), the cut came with its words.
            timings["spoken_s"] = round(self._playback.reply_done(), 3)
            if cut is not None and silent is not None:
                timings |= {"cut_short": 1.0, "stopped_at": round(silent[0], 1),
                            "stopped_at_s": round(silent[1], 3), "cut_at": round(cut[0], 1),
                            "cut_at_s": round(cut[1], 3), "synthesized_s": round(duration, 3)}
        elif self._speaker is not None:
            self._speaker.reply_done()
        self.speaking = self.replying = False
        # Its length only, as the gate logs only a count of words: a reply may read out a message.
        log.info("said %.1f s of speech", timings["spoken_s"])
        if done.reply.expects_answer:
            await self.push_frame(OpenWindowFrame(at_s=self._mute_until_s), FrameDirection.UPSTREAM)
        reply = done.reply
        await asyncio.to_thread(self._sink.spoke, reply.turn_id, reply.spoken, timings)


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


async def run_pipeline(
    feeder: Feeder, processors: list[FrameProcessor], live: bool, out_rate: int
) -> None:
    """Run [VAD, STT, gate, turn, TTS, output] on a PipelineWorker under a WorkerRunner."""
    pipeline = Pipeline(processors)
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=PIPELINE_RATE, audio_out_sample_rate=out_rate),
        idle_timeout_secs=None,
        cancel_on_idle_timeout=False,
        enable_rtvi=False,
        enable_turn_tracking=False,
        check_dangling_tasks=False,
    )
    started = asyncio.Event()

    async def _on_started(_worker: Any, _frame: Frame) -> None:
        started.set()

    worker.add_event_handler("on_pipeline_started", _on_started)

    runner = WorkerRunner(handle_sigint=live, check_dangling_tasks=False)
    await runner.add_workers(worker)
    feeding = asyncio.create_task(feeder.run(worker, started))
    try:
        await runner.run()
    finally:
        if not feeding.done():
            feeding.cancel()
    if feeding.done() and not feeding.cancelled() and feeding.exception() is not None:
        raise feeding.exception()  # type: ignore[misc]
