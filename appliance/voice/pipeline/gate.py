"""The wake gate as a pipeline step: which transcripts are commands, and what was heard."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    TranscriptionFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from appliance.voice.audio.clock import AudioClock
from appliance.voice.hearing.barge_in import barge_in
from appliance.voice.hearing.personal import TEMPLATE_ENGINE
from appliance.voice.hearing.vad import VadSettings
from appliance.voice.hearing.wake import WakeGate
from appliance.voice.pipeline.frames import (
    CommandFrame,
    NotCaughtFrame,
    OpenWindowFrame,
    ResumeReplyFrame,
    Segment,
    SegmentFrame,
    SettledFrame,
)
from appliance.voice.sink import Utterance

log = logging.getLogger(__name__)


class TalkHook(Protocol):
    """Push-to-talk: a sink may carry one as `talk` (appliance/switch/talk.py).

    Times are `time.monotonic()` seconds of when the speech was heard, like switch presses.
    """

    def claims(self, start_t: float, end_t: float) -> bool:
        """True if the switch makes this speech a command without the wake phrase."""
        ...


class GateProcessor(FrameProcessor):
    """A transcript becomes a CommandFrame if the wake phrase, an open window or the switch
    says it is a command; anything else is settled here. Keeps the record of what was heard.

    With `replying` (barge-in: true while a reply plays), speech over the reply is only a stop
    word or the wake phrase, which interrupt it (pipecat's InterruptionFrame, downstream to the
    TTS and the speech output); everything else heard then is ignored.
    """

    def __init__(
        self,
        gate: WakeGate,
        vad: VadSettings,
        clock: AudioClock,
        talk: TalkHook | None = None,
        replying: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__()
        self._replying = replying
        self.interruptions = 0
        self._gate = gate
        self._vad = vad
        self._clock = clock
        self._talk = talk
        self._segments: deque[Segment] = deque()
        self.heard: list[dict[str, Any]] = []
        self.ignored = 0
        self.wake_only = 0
        self._asking = False  # the open window was opened by a question

    def awaiting_answer(self) -> bool:
        """Whether a question's listening window is open now: speech there is most likely its
        answer."""
        return self._asking and self._gate.window_open(self._clock.clock_s)

    def set_replying(self, replying: Callable[[], bool]) -> None:
        self._replying = replying

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, SegmentFrame):
            self._segments.append(frame.segment)
        elif isinstance(frame, OpenWindowFrame):
            self._gate.open_window(frame.at_s)
            self._asking = True
        elif isinstance(frame, TranscriptionFrame):
            try:
                await self._transcript(frame)
            except Exception:
                # The file must not wait for ever on a segment nobody settles.
                log.exception("wake gate failed")
                await self.push_frame(SettledFrame())
        elif isinstance(frame, (InputAudioRawFrame, InterimTranscriptionFrame)):
            return  # nothing after this point needs the microphone audio
        else:
            await self.push_frame(frame, direction)

    async def _transcript(self, frame: TranscriptionFrame) -> None:
        ready = self._clock.ms()
        seg = (self._segments.popleft() if self._segments
               else Segment(ready, ready, 0, 0, self._vad.stop_secs))
        result: dict[str, Any] = frame.result if isinstance(frame.result, dict) else {}
        text = frame.text.strip()
        stop_s = seg.silence_s  # the silence the VAD waited before it ended the segment
        timings = {
            "speech_start": round(seg.start_ms, 1),
            "speech_end": round(seg.end_ms, 1),
            "transcript_ready": round(ready, 1),
            "stt_ms": round(float(result.get("stt_ms", ready - seg.end_ms)), 1),
            "vad_ms": round(stop_s * 1000, 1),
            # Where the speech is in the input, in seconds (meaningful for a file too).
            "audio_start_s": round(seg.start_s, 2),
            "audio_end_s": round(seg.end_s - stop_s, 2),
        }
        heard: dict[str, Any] = {"text": text, "engine": result.get("engine", "?"),
                                 "confidence": result.get("confidence"), "timings": timings,
                                 "speculative": bool(result.get("speculative")),
                                 "ended_early": seg.early}
        self.heard.append(heard)
        if self._replying is not None and self._replying():
            # Before the length check: a "stop" said over a reply is short, and that is fine.
            kind = barge_in(text, self._gate) if text else None
            heard["over_reply"] = True
            if kind is None:
                # As if muted: not counted as ignored speech (it is mostly the appliance itself).
                heard["decision"] = "over reply"
                await self.push_frame(ResumeReplyFrame())
                await self.push_frame(SettledFrame())
                return
            # Downstream only: the TTS and the speech output hold the reply; upstream there is
            # only the microphone's audio, which must go on.
            self.interruptions += 1
            await self.push_frame(InterruptionFrame())
            if kind == "stop":
                heard["decision"] = heard["via"] = "interrupt"
                await self.push_frame(SettledFrame())
                return
        # A click or a cough can come out of Whisper as a word; what the person's own takes
        # heard whole is speech, however quickly said (a "no" can last under 0.3 s).
        short = (seg.end_s - seg.start_s - stop_s < self._vad.min_speech_secs
                 and result.get("engine") != TEMPLATE_ENGINE)
        if not text or short:
            heard["decision"] = "too short" if text else "nothing heard"
            await self.push_frame(SettledFrame())
            return
        talking = self._talk is not None and self._talk.claims(
            self._clock.monotonic_at(seg.start_s), self._clock.monotonic_at(seg.end_s - stop_s)
        )
        decision = self._gate.decide(text, seg.start_s, result.get("wake"), talking)
        heard["decision"] = decision.kind
        heard["via"] = decision.via
        if decision.kind != "ignored":  # the question's window is used up, or a wake opened one
            self._asking = False
        # Words in the room that were not a command stay out of the log: only their count.
        log.info("heard %d words in %.0f ms: %s (via %s)", len(text.split()),
                 timings["stt_ms"], decision.kind, decision.via)
        if decision.kind == "command":
            engine = str(result.get("engine", "whisper"))
            utterance = Utterance(decision.text, engine, result.get("confidence"), timings,
                                  doubt=str(result.get("doubt", "")))
            await self.push_frame(CommandFrame(utterance=utterance))
            return
        if decision.kind == "ignored":
            self.ignored += 1
        else:
            self.wake_only += 1
            if result.get("not_caught"):
                # A command followed the wake phrase but was lost: silence would leave the
                # person waiting for an answer that is not coming.
                heard["decision"] = "not caught"
                await self.push_frame(NotCaughtFrame())
                return
        await self.push_frame(SettledFrame())
