"""Choosing and loading the speech engines once per process."""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.voice.audio.tts import PiperSpeaker
from appliance.voice.errors import VoiceError
from appliance.voice.hearing.stt_whisper import WhisperEngine
from appliance.voice.models import VOSK_EN, model_path, spec

log = logging.getLogger(__name__)


@dataclass
class Engines:
    """Loaded models: exactly one of `whisper` / `vosk_model` is set."""

    engine: str  # "vosk" | "whisper"
    reason: str
    speaker: PiperSpeaker
    whisper: WhisperEngine | None = None
    vosk_model: Any = None
    load_s: float = 0.0


def _step(progress: bool, text: str) -> None:
    if progress:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def choose_engine(vosk_dir: Path | None = None) -> tuple[str, str, Path | None]:
    """("vosk" | "whisper", why, Vosk model dir). Vosk wins when an English model is installed."""
    if vosk_dir is not None:
        return "vosk", f"Vosk model given at {vosk_dir}", vosk_dir
    path = model_path(spec(VOSK_EN))
    if path is not None:
        return "vosk", f"English Vosk model installed at {path}", path
    why = f"no English Vosk model installed ({VOSK_EN}); using packaged Whisper tiny.en"
    return "whisper", why, None


def load_engines(
    engine: str | None = None, vosk_dir: Path | None = None, progress: bool = False
) -> Engines:
    start = time.monotonic()
    chosen, reason, path = choose_engine(vosk_dir)
    if engine == "whisper" and chosen != "whisper":
        chosen, reason = "whisper", "Whisper requested"
    elif engine == "vosk" and path is None:
        raise VoiceError(f"No Vosk model installed; run: appliance models install {VOSK_EN}")
    if chosen == "whisper":
        # The default recognizer (VoiceOptions.recognizer); run_voice logs the one it uses.
        reason += ("; the screen's sentences first (closed set), open Whisper second; the wake "
                   "phrase heard without the screen")
    log.info("speech engine: %s (%s)", chosen, reason)
    _step(progress, f"Speech engine: {chosen} ({reason})")
    whisper = vosk_model = None
    if chosen == "vosk" and path is not None:
        from appliance.voice.hearing.stt_vosk import load_vosk_model

        _step(progress, "Loading Vosk model...")
        vosk_model = load_vosk_model(path)
    else:
        _step(progress, "Loading Whisper tiny.en...")
        whisper = WhisperEngine()
    _step(progress, "Loading Piper voice...")
    speaker = PiperSpeaker()
    _step(progress, "Models ready.")
    return Engines(chosen, reason, speaker, whisper, vosk_model, time.monotonic() - start)
