"""The Vosk engine: streaming partials and finals, vocabulary-biased with a runtime grammar."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from pipecat.frames.frames import (
    Frame,
    InterimTranscriptionFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.settings import STTSettings
from pipecat.services.stt_service import STTService
from pipecat.utils.time import time_now_iso8601

from appliance.voice.errors import VoiceError

log = logging.getLogger(__name__)

RATE = 16_000
UNKNOWN = "[unk]"
WAKE_WINDOW_S = 2.5  # the wake phrase is at the start of a segment


def load_vosk_model(path: Path) -> Any:
    """Load a Vosk model directory; a missing or broken one is a VoiceError, not a crash."""
    import vosk  # type: ignore[import-untyped]

    vosk.SetLogLevel(-1)
    if not (path / "am" / "final.mdl").is_file():
        raise VoiceError(f"No Vosk model at {path}.")
    try:
        return vosk.Model(str(path))
    except Exception:
        raise VoiceError(f"The Vosk model at {path} could not be loaded.") from None


class VoskRecognizer:
    """One utterance at a time; `grammar` (list of phrases) constrains what can be heard."""

    def __init__(self, model: Any, grammar: list[str] | None = None) -> None:
        self.model = model
        self._grammar: list[str] | None = None
        self._rec: Any = None
        self.set_grammar(grammar)

    def known(self, phrase: str) -> bool:
        return all(self.model.vosk_model_find_word(w) >= 0 for w in phrase.split())

    def set_grammar(self, grammar: list[str] | None) -> list[str] | None:
        """Switch grammar (None = the model's full vocabulary); unknown words are left out."""
        import vosk

        if grammar is not None:
            phrases = dict.fromkeys(g.lower().strip() for g in grammar)
            grammar = [p for p in phrases if p and self.known(p)]
            if self.model.vosk_model_find_word(UNKNOWN) >= 0:
                grammar.append(UNKNOWN)
            spec = json.dumps(grammar, ensure_ascii=False)
            self._rec = vosk.KaldiRecognizer(self.model, RATE, spec)
        else:
            self._rec = vosk.KaldiRecognizer(self.model, RATE)
        self._rec.SetWords(True)
        self._grammar = grammar
        return grammar

    @property
    def grammar(self) -> list[str] | None:
        return self._grammar

    def accept(self, pcm: bytes) -> tuple[bool, str]:
        """Feed audio; returns (Vosk found an endpoint, partial or final text so far)."""
        if self._rec.AcceptWaveform(pcm):
            return True, str(json.loads(self._rec.Result()).get("text", ""))
        return False, str(json.loads(self._rec.PartialResult()).get("partial", ""))

    def finish(self) -> tuple[str, float | None]:
        """The final text of the utterance and its mean word confidence; resets for the next."""
        result = json.loads(self._rec.FinalResult())
        self._rec.Reset()
        text = str(result.get("text", "")).replace(UNKNOWN, "").strip()
        confs = [float(w["conf"]) for w in result.get("result", []) if w.get("word") != UNKNOWN]
        return " ".join(text.split()), (sum(confs) / len(confs) if confs else None)


class VoskSTTService(STTService):
    """Streams audio to Vosk while the VAD says the user speaks: interim frames, then one final."""

    def __init__(
        self,
        model: Any,
        vocabulary: Callable[[], list[str]] | None = None,
        wake_phrase: str = "",
        partial_every: int = 5,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            settings=STTSettings(model="vosk", language=None), ttfs_p99_latency=0.3, **kwargs
        )
        self._model = model
        self._vocabulary = vocabulary
        self.recognizer = VoskRecognizer(model)
        self._speaking = False
        self._chunks = 0
        self._preroll = bytearray()
        self._texts: list[str] = []
        self._audio_bytes = 0
        self._stt_s = 0.0
        self._partial_every = partial_every
        self._segment = bytearray()
        self.spotter: VoskWakeSpotter | None = None
        if wake_phrase:
            try:
                self.spotter = VoskWakeSpotter(model, wake_phrase)
            except VoiceError as e:
                log.info("wake phrase by transcript match: %s", e)

    def can_generate_metrics(self) -> bool:
        return False

    def _bias(self) -> None:
        if self._vocabulary is not None:
            self.recognizer.set_grammar(self._vocabulary())

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._speaking = True
            self._chunks = 0
            self._texts = []
            self._stt_s = 0.0
            self._bias()
            pre = bytes(self._preroll)
            self._audio_bytes = len(pre)
            self._segment = bytearray(pre)
            self._feed(pre)
            self._preroll.clear()
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            # The final must be pushed before the stop frame is forwarded, so downstream sees
            # (stopped, transcript) pairs in order.
            await self.push_frame(self._final())
            self._speaking = False
        await super().process_frame(frame, direction)

    def _feed(self, pcm: bytes) -> str:
        start = time.monotonic()
        final, text = self.recognizer.accept(pcm)
        self._stt_s += time.monotonic() - start
        if final and text:
            self._texts.append(text)
            return ""
        return text

    def _final(self) -> TranscriptionFrame:
        start = time.monotonic()
        text, conf = self.recognizer.finish()
        self._stt_s += time.monotonic() - start
        full = " ".join([*self._texts, text]).replace(UNKNOWN, "").split()
        result: dict[str, Any] = {
            "engine": "vosk", "confidence": conf, "stt_ms": self._stt_s * 1000,
            "audio_s": self._audio_bytes / 2 / RATE,
        }
        if self.spotter is not None:
            start = time.monotonic()
            result["wake"] = self.spotter.spotted(bytes(self._segment))
            result["stt_ms"] += (time.monotonic() - start) * 1000
        return TranscriptionFrame(" ".join(full), "", time_now_iso8601(), result=result)

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame | None, None]:
        if not self._speaking:
            # Keep 0.3 s before the VAD's decision: the start of the first word.
            self._preroll += audio
            del self._preroll[: max(0, len(self._preroll) - int(0.3 * RATE * 2))]
            yield None
            return
        self._audio_bytes += len(audio)
        if len(self._segment) < WAKE_WINDOW_S * RATE * 2:
            self._segment += audio
        partial = self._feed(audio)
        self._chunks += 1
        if partial and self._chunks % self._partial_every == 0:
            yield InterimTranscriptionFrame(partial, "", time_now_iso8601())
        else:
            yield None


class VoskWakeSpotter:
    """A grammar-constrained recognizer that only knows the wake phrase (and "[unk]")."""

    def __init__(self, model: Any, phrase: str) -> None:
        self.phrase = " ".join(phrase.lower().split())
        # Without a garbage word every sound is forced onto the phrase: nothing could be rejected.
        if model.vosk_model_find_word(UNKNOWN) < 0:
            raise VoiceError("This Vosk model has no [unk] word, so it cannot spot a wake phrase.")
        self.recognizer = VoskRecognizer(model, [self.phrase])
        if self.recognizer.grammar == [UNKNOWN]:
            raise VoiceError(f"The Vosk model does not know the words of '{phrase}'.")

    def spotted(self, pcm: bytes) -> bool:
        self.recognizer.accept(pcm)
        text, _conf = self.recognizer.finish()
        return self.phrase in text
