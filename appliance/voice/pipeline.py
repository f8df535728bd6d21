"""The pipecat pipeline: source -> webrtcvad -> STT -> wake gate + turn -> Piper -> speaker/WAV.

The feeder pushes microphone-side audio into a PipelineWorker run by a WorkerRunner. A file is
fed as fast as the VAD consumes it, but like a polite user it waits while the appliance is
still working on (or answering) what it just heard; a live microphone keeps running and is
muted while the appliance speaks, so the appliance never hears itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pipecat.frames.frames import (
    ControlFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InterimTranscriptionFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSSpeakFrame,
    TTSStoppedFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.workers.runner import WorkerRunner

from appliance.voice.audio_file import PIPELINE_RATE, resample_pcm16
from appliance.voice.sink import Reply, TurnSink, Utterance
from appliance.voice.sources import CHUNK_SAMPLES, AudioSource
from appliance.voice.stt_whisper import SpeculateFrame
from appliance.voice.vad import FRAME_MS, VadSettings, WebRTCVADAnalyzer
from appliance.voice.wake import WakeGate

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


class TalkHook(Protocol):
    """Push-to-talk: a sink may carry one as `talk` (appliance/switch/talk.py).

    Times are `time.monotonic()` seconds of when the speech was heard, like switch presses.
    """

    def claims(self, start_t: float, end_t: float) -> bool:
        """True if the switch makes this speech a command without the wake phrase."""
        ...


@dataclass
class ReplyDoneFrame(ControlFrame):
    """Follows a reply's TTSSpeakFrame; pipecat's TTS queues it behind all of that reply's audio.

    The reply ends here, not at a TTSStoppedFrame: pipecat also sends one when synthesis goes
    quiet for a while, which a loaded CPU can cause in the middle of a reply.
    """

    turn_id: str = ""


@dataclass
class Segment:
    start_ms: float
    end_ms: float
    start_s: float  # audio clock
    end_s: float


@dataclass
class Spoken:
    reply: Reply
    timings: dict[str, float]
    pcm: bytearray = field(default_factory=bytearray)
    first_audio_s: float | None = None


@dataclass
class VoiceStats:
    """Counters for a run: what was heard, ignored, muted, and where time went."""

    segments: int = 0
    ignored: int = 0
    wake_only: int = 0
    commands: int = 0
    muted_chunks: int = 0
    faults: int = 0
    heard: list[dict[str, Any]] = field(default_factory=list)


class VoiceState:
    """Shared between the feeder and the processors (all on one event loop)."""

    def __init__(self, live: bool, mute_while_speaking: bool = True) -> None:
        self.t0 = time.monotonic()
        self.live = live
        self.mute_while_speaking = mute_while_speaking
        self.samples = 0
        self.speaking = False
        self.mute_until_s = 0.0
        self.pending = 0
        self.vad_frames = 0
        self.segments: deque[Segment] = deque()
        self.open_start: tuple[float, float] | None = None
        self.replies: deque[Spoken] = deque()
        # (audio clock at the end of a chunk, monotonic time it was read): maps speech in the
        # audio to the moments a switch is pressed in. A few minutes back is plenty.
        self.read_at: deque[tuple[float, float]] = deque(maxlen=10_000)
        self.changed = asyncio.Event()
        self.stats = VoiceStats()

    def ms(self) -> float:
        return (time.monotonic() - self.t0) * 1000

    @property
    def clock_s(self) -> float:
        return self.samples / PIPELINE_RATE

    def stamp(self) -> None:
        self.read_at.append((self.clock_s, time.monotonic()))

    def monotonic_at(self, clock_s: float) -> float:
        """When the audio at `clock_s` was read (the first chunk ending at or after it)."""
        for end_s, t in self.read_at:
            if end_s >= clock_s:
                return t
        return time.monotonic()

    def muted(self) -> bool:
        if not self.mute_while_speaking:
            return False
        return self.speaking or self.clock_s < self.mute_until_s

    def idle(self) -> bool:
        return self.pending == 0 and not self.speaking

    def notify(self) -> None:
        self.changed.set()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float | None = None) -> bool:
        async def loop() -> None:
            while not predicate():
                self.changed.clear()
                if predicate():
                    return
                await self.changed.wait()

        try:
            await asyncio.wait_for(loop(), timeout)
        except TimeoutError:
            return False
        return True

    def settle(self) -> None:
        self.pending = max(0, self.pending - 1)
        self.notify()


class TrackedVADProcessor(VADProcessor):
    """pipecat's VADProcessor, also recording segment times and how far it has read."""

    def __init__(self, state: VoiceState, settings: VadSettings) -> None:
        self._analyzer = WebRTCVADAnalyzer(settings)
        super().__init__(vad_analyzer=self._analyzer, audio_idle_timeout=0)
        self._state = state
        self._settings = settings
        self._speculating = False
        self._speculate_frames = round(settings.speculate_secs * 1000 / FRAME_MS)

        async def _started(_c: Any) -> None:
            # The VAD decides `start_secs` after the speech began.
            # The wall clock says when the VAD knew; the audio clock where speech began.
            state.open_start = (state.ms(), max(0.0, state.clock_s - settings.start_secs))

        async def _stopped(_c: Any) -> None:
            start_ms, start_s = state.open_start or (state.ms(), state.clock_s)
            state.open_start = None
            state.segments.append(Segment(start_ms, state.ms(), start_s, state.clock_s))
            state.pending += 1
            state.stats.segments += 1
            state.notify()

        self._vad_controller.add_event_handler("on_speech_started", _started)
        self._vad_controller.add_event_handler("on_speech_stopped", _stopped)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            await self._speculate()
            self._state.vad_frames += 1
            self._state.notify()

    async def _speculate(self) -> None:
        """Tell the STT when the user pauses mid-segment, and when they go on speaking."""
        if self._state.open_start is None or self._speculate_frames <= 0:
            self._speculating = False
            return
        silent = self._analyzer.trailing_unvoiced
        if not self._speculating and silent >= self._speculate_frames:
            self._speculating = True
            await self.push_frame(SpeculateFrame())
        elif self._speculating and silent == 0:
            self._speculating = False
            await self.push_frame(SpeculateFrame(cancel=True))


class CommandProcessor(FrameProcessor):
    """Wake gate and turn: a transcript becomes an Utterance for the sink, its reply a TTS frame."""

    def __init__(
        self,
        state: VoiceState,
        sink: TurnSink,
        gate: WakeGate,
        vad: VadSettings,
        on_event: Callable[[Reply], None] | None = None,
    ) -> None:
        super().__init__()
        self._state = state
        self._sink = sink
        self._gate = gate
        self._vad = vad
        self._on_event = on_event

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TranscriptionFrame):
            try:
                await self._transcript(frame)
            except Exception:
                # A failing turn must not leave the microphone muted or the file on hold.
                log.exception("turn failed")
                self._state.speaking = False
                self._state.settle()
        elif isinstance(frame, (InputAudioRawFrame, InterimTranscriptionFrame)):
            return  # nothing after this point needs the microphone audio
        else:
            await self.push_frame(frame, direction)

    async def _transcript(self, frame: TranscriptionFrame) -> None:
        state = self._state
        ready = state.ms()
        seg = state.segments.popleft() if state.segments else Segment(ready, ready, 0, 0)
        result: dict[str, Any] = frame.result if isinstance(frame.result, dict) else {}
        text = frame.text.strip()
        speech_s = seg.end_s - seg.start_s - self._vad.stop_secs
        timings = {
            "speech_start": round(seg.start_ms, 1),
            "speech_end": round(seg.end_ms, 1),
            "transcript_ready": round(ready, 1),
            "stt_ms": round(float(result.get("stt_ms", ready - seg.end_ms)), 1),
            "vad_ms": round(self._vad.stop_secs * 1000, 1),
            # Where the speech is in the input, in seconds (meaningful for a file too).
            "audio_start_s": round(seg.start_s, 2),
            "audio_end_s": round(seg.end_s - self._vad.stop_secs, 2),
        }
        heard: dict[str, Any] = {"text": text, "engine": result.get("engine", "?"),
                                 "confidence": result.get("confidence"), "timings": timings,
                                 "speculative": bool(result.get("speculative"))}
        state.stats.heard.append(heard)
        if not text or speech_s < self._vad.min_speech_secs:
            heard["decision"] = "too short" if text else "nothing heard"
            state.settle()
            return
        talk: TalkHook | None = getattr(self._sink, "talk", None)
        talking = talk is not None and talk.claims(
            state.monotonic_at(seg.start_s), state.monotonic_at(seg.end_s - self._vad.stop_secs)
        )
        decision = self._gate.decide(text, seg.start_s, result.get("wake"), talking)
        heard["decision"] = decision.kind
        heard["via"] = decision.via
        if decision.kind == "ignored":
            state.stats.ignored += 1
            state.settle()
            return
        if decision.kind == "wake_only":
            state.stats.wake_only += 1
            state.settle()
            return
        state.stats.commands += 1
        utterance = Utterance(
            decision.text, str(result.get("engine", "whisper")), result.get("confidence"), timings
        )
        state.speaking = True  # from here the appliance is answering: the mic is not listening
        reply = await asyncio.to_thread(self._sink.handle, utterance)
        timings = {**timings, "action_done": round(state.ms(), 1)}
        heard["turn_id"] = reply.turn_id
        if self._on_event is not None:
            self._on_event(reply)
        if reply.spoken.strip():
            state.replies.append(Spoken(reply, timings))
            await self.push_frame(TTSSpeakFrame(reply.spoken))
            await self.push_frame(ReplyDoneFrame(turn_id=reply.turn_id))
            return
        state.speaking = False
        if reply.expects_answer:
            self._gate.open_window(state.clock_s)
        await asyncio.to_thread(self._sink.spoke, reply.turn_id, "", timings)
        state.settle()

    async def announce(self, text: str) -> None:
        """Speak words that come from elsewhere (the switch: scan items, its turns' replies) the
        way a reply is spoken: queued behind any reply, with the microphone muted meanwhile."""
        if not text.strip():
            return
        self._state.speaking = True
        self._state.replies.append(Spoken(Reply("", text, False), {}))
        await self.push_frame(TTSSpeakFrame(text))
        await self.push_frame(ReplyDoneFrame(turn_id=""))


class SpeechOutput(FrameProcessor):
    """Plays (or records) the reply audio, then unmutes the mic and reports `spoke` to the sink."""

    def __init__(
        self, state: VoiceState, sink: TurnSink, gate: WakeGate, speaker: SpeechSink | None
    ) -> None:
        super().__init__()
        self._state = state
        self._sink = sink
        self._gate = gate
        self._speaker = speaker

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        state = self._state
        if isinstance(frame, TTSAudioRawFrame):
            if not state.replies:
                return
            spoken = state.replies[0]
            if spoken.first_audio_s is None:
                spoken.first_audio_s = state.clock_s
                spoken.timings["first_audio"] = round(state.ms(), 1)
            pcm = resample_pcm16(frame.audio, frame.sample_rate, PIPELINE_RATE)
            spoken.pcm += pcm
            if self._speaker is not None:
                await asyncio.to_thread(self._speaker.play, pcm, PIPELINE_RATE)
        elif isinstance(frame, ReplyDoneFrame):
            if state.replies:
                await self._finish(state.replies.popleft())
        elif isinstance(frame, TTSStoppedFrame):
            return  # not the end of the reply (see ReplyDoneFrame)
        else:
            await self.push_frame(frame, direction)

    async def _finish(self, spoken: Spoken) -> None:
        try:
            await self._finish_reply(spoken)
        finally:
            # Even if recording `spoke` fails, the mic must unmute and the file go on.
            self._state.speaking = False
            self._state.settle()

    async def _finish_reply(self, spoken: Spoken) -> None:
        state = self._state
        duration = len(spoken.pcm) / 2 / PIPELINE_RATE
        started = spoken.first_audio_s if spoken.first_audio_s is not None else state.clock_s
        ends = max(started + duration, state.clock_s)
        state.mute_until_s = ends + MUTE_TAIL_S
        timings = {
            **spoken.timings, "spoken_s": round(duration, 3), "spoke_done": round(state.ms(), 1)
        }
        if self._speaker is not None:
            self._speaker.reply_done()
        state.speaking = False
        if spoken.reply.expects_answer:
            self._gate.open_window(state.mute_until_s)
        reply = spoken.reply
        await asyncio.to_thread(self._sink.spoke, reply.turn_id, reply.spoken, timings)


async def wait_until_idle(state: VoiceState) -> None:
    """Wait for every heard segment to be answered; a file's next audio must not go in before."""
    waited = 0.0
    while not await state.wait_for(state.idle, timeout=STALL_S):
        waited += STALL_S
        if waited >= STALL_LIMIT_S:
            log.warning("the pipeline did not settle in %.0f s; going on", waited)
            state.speaking, state.pending = False, 0
            return
        log.warning("still waiting for a turn and its reply (%.0f s so far)", waited)


async def feed(
    worker: PipelineWorker, source: AudioSource, state: VoiceState, started: asyncio.Event,
    pace: float | None = None,
) -> None:
    """Push the source into the pipeline; at the end of a file, drain and end the worker.

    A file goes as fast as the VAD reads it, or at `pace` times real time (the benchmark uses
    1.0 so that "end of speech" is a moment in real time).
    """
    await started.wait()
    silence = bytes(CHUNK_SAMPLES * 2)
    trailing = int(1.0 * PIPELINE_RATE / CHUNK_SAMPLES)  # closes a segment still open at EOF
    sent = 0
    due = time.monotonic()
    while True:
        if not state.live and not state.idle():
            await wait_until_idle(state)
            due = time.monotonic()
        if pace and not state.live:
            due += CHUNK_SAMPLES / PIPELINE_RATE / pace
            await asyncio.sleep(max(0.0, due - time.monotonic()))
        chunk = await asyncio.to_thread(source.read, CHUNK_SAMPLES) if state.live else source.read(
            CHUNK_SAMPLES
        )
        if chunk is None:
            if trailing <= 0:
                break
            trailing -= 1
            chunk = silence
        if len(chunk) % 2:
            chunk = chunk[:-1]
        state.samples += len(chunk) // 2
        state.stamp()
        if state.live and state.muted():
            state.stats.muted_chunks += 1
            continue
        await worker.queue_frame(InputAudioRawFrame(chunk, PIPELINE_RATE, 1))
        sent += 1
        if not state.live:
            # Faster than real time, but never ahead of the VAD: segment ends are then known
            # before the next chunk goes in.
            await state.wait_for(lambda n=sent: state.vad_frames >= n)  # type: ignore[misc]
    await wait_until_idle(state)
    await worker.queue_frame(EndFrame())


async def run_pipeline(
    source: AudioSource,
    processors: list[FrameProcessor],
    state: VoiceState,
    out_rate: int,
    pace: float | None = None,
) -> None:
    """Run [VAD, STT, commands, TTS, output] on a PipelineWorker under a WorkerRunner."""
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

    runner = WorkerRunner(handle_sigint=state.live, check_dangling_tasks=False)
    await runner.add_workers(worker)
    feeder = asyncio.create_task(feed(worker, source, state, started, pace))
    try:
        await runner.run()
    finally:
        if not feeder.done():
            feeder.cancel()
    if feeder.done() and not feeder.cancelled() and feeder.exception() is not None:
        raise feeder.exception()  # type: ignore[misc]
