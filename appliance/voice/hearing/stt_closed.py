"""The closed-set path as a pipecat STT service: Whisper's segmenting and speculation, with each
segment heard against the sentences the current screen allows (closed_whisper.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any

from pipecat.frames.frames import Frame, VADUserStartedSpeakingFrame
from pipecat.processors.frame_processor import FrameDirection

from appliance.voice.hearing.closed_set import SentenceSet, closed_set
from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
from appliance.voice.hearing.stt_whisper import Transcript, WhisperSTTService
from appliance.voice.hearing.wake_spotter import HEARD_BYTES
from appliance.voice.sink import ScreenNames, TurnSink, names_reader, vocabulary_of

log = logging.getLogger(__name__)


def screen_reader(
    sink: TurnSink,
) -> tuple[Callable[[], ScreenNames], Callable[[ScreenNames], list[str]]]:
    """How one read of the sink's screen gives both the sentences and the prompt's words: its
    names, and the words for them (a vocabulary-only sink's are its vocabulary)."""
    if callable(getattr(sink, "screen_names", None)):
        return names_reader(sink), vocabulary_of
    return names_reader(sink), lambda read: list(read.targets)


class ClosedSetSTTService(WhisperSTTService):
    """One transcript per VAD segment, closed-set first (`engine` "closed:whisper"), open
    Whisper under a fixed prompt second ("open:whisper"); `wake` said for every segment."""

    def __init__(
        self,
        recognizer: ClosedWhisperRecognizer,
        names: Callable[[], ScreenNames],
        words_of: Callable[[ScreenNames], list[str]],
        replying: Callable[[], bool] = lambda: False,
        **kwargs: Any,
    ) -> None:
        """`words_of`: the open path's prompt words for the names read (one read of the
        screen gives both, per segment); `replying`: whether the appliance is speaking."""
        super().__init__(
            recognizer.engine, lambda: words_of(names()), recognizer.wake_phrase, **kwargs
        )
        self.recognizer = recognizer
        self._names = names
        self._words_of = words_of
        self._spotted = False  # the wake spotter has scored this segment while it was spoken
        self._read: ScreenNames | None = None  # the screen as read when this segment began
        self._replying = replying
        self._over_reply = False  # this segment began while the appliance was speaking

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._spotted, self._read = False, None
            self._over_reply = self._replying()
            asyncio.get_running_loop().run_in_executor(self._hearing, self._prepare)
        await super().process_frame(frame, direction)

    def _prepare(self) -> None:
        """Read the screen and build its sentences while the person speaks, on the hearing
        thread: after an action the screen is new, and its set takes about 300 ms to build."""
        try:
            names = self._names()
            closed_set(*names).prepare()
        except Exception as e:  # then `_hear` reads it, and says what went wrong
            log.warning("reading the screen early failed: %s", e)
            return
        self._read = names

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame | None, None]:
        async for frame in super().run_stt(audio):
            yield frame
        spotter = self.recognizer.spotter
        if spotter is not None and self._speaking and not self._spotted and not self._over_reply:
            # The spotter reads only the first 2.2 s: scored now, on the hearing thread, its
            # 45 ms are not spent after the person stops.
            self._spotted = len(self._buffer) >= HEARD_BYTES
            if self._spotted:
                asyncio.get_running_loop().run_in_executor(
                    self._hearing, _quietly, spotter.score, bytes(self._buffer[:HEARD_BYTES]))

    def sentences(self) -> SentenceSet:
        return closed_set(*self._names())

    def _hear(self, pcm: bytes) -> Transcript:
        names = self._names() if self._read is None else self._read
        sentences = closed_set(*names)
        return self.recognizer.transcribe(pcm, sentences, self._words_of(names),
                                          self._over_reply)


def _quietly(score: Callable[[bytes], float], pcm: bytes) -> None:
    """An early score that fails is only not early: `hear` scores the utterance again."""
    try:
        score(pcm)
    except Exception as e:
        log.warning("the wake spotter failed early: %s", e)
