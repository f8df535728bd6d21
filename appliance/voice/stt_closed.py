"""The closed-set path as a pipecat STT service: Whisper's segmenting and speculation, with each
segment heard against the sentences the current screen allows (appliance/voice/closed_whisper.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from appliance.voice.closed_set import SentenceSet, closed_set
from appliance.voice.closed_whisper import ClosedWhisperRecognizer
from appliance.voice.sink import TurnSink
from appliance.voice.stt_whisper import Transcript, WhisperSTTService

ScreenNames = tuple[tuple[str, ...], tuple[str, ...]]
"""(names of the screen's elements, names of its applications)."""


class NamesSink(Protocol):
    def screen_names(self) -> ScreenNames: ...


def screen_names(sink: TurnSink) -> Callable[[], ScreenNames]:
    """The sink's element and app names; a sink that only has a vocabulary gives that."""
    names = getattr(sink, "screen_names", None)
    if callable(names):
        return names  # type: ignore[no-any-return]
    return lambda: (tuple(sink.vocabulary()), ())


class ClosedSetSTTService(WhisperSTTService):
    """One transcript per VAD segment, closed-set first (`engine` "closed:whisper"), open
    Whisper under a fixed prompt second ("open:whisper"); `wake` said for every segment."""

    def __init__(
        self,
        recognizer: ClosedWhisperRecognizer,
        names: Callable[[], ScreenNames],
        **kwargs: Any,
    ) -> None:
        super().__init__(recognizer.engine, lambda: [], recognizer.wake_phrase, **kwargs)
        self.recognizer = recognizer
        self._names = names

    def sentences(self) -> SentenceSet:
        targets, apps = self._names()
        return closed_set(tuple(targets), tuple(apps))

    def _hear(self, pcm: bytes) -> Transcript:
        return self.recognizer.transcribe(pcm, self.sentences())
