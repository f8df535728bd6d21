"""The offline voices the spoken corpus is said with: espeak-ng, festival, flite and Piper."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from appliance.voice.audio.pcm import PIPELINE_RATE, load_wav, resample_pcm16

Engine = Literal["espeak", "festival", "flite", "piper"]


class Voice(BaseModel):
    """One voice: an engine, its voice name, and (espeak-ng) words per minute and pitch."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: Engine
    name: str
    rate: int | None = None
    pitch: int | None = None

    @property
    def label(self) -> str:
        extra = f"@{self.rate}/{self.pitch}" if self.rate is not None else ""
        return f"{self.engine}:{self.name}{extra}"


class SynthesisError(Exception):
    """A TTS engine failed or is not installed."""


def _run(cmd: list[str], stdin: str | None = None) -> None:
    try:
        subprocess.run(cmd, input=stdin, check=True, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise SynthesisError(f"{cmd[0]} is not installed (scripts/setup.sh installs it)") from None
    except subprocess.CalledProcessError as e:
        raise SynthesisError(f"{cmd[0]} failed: {e.stderr.strip()[-200:]}") from None


def synthesize(voice: Voice, text: str) -> bytes:
    """`text` said by `voice`, as 16 kHz mono PCM16."""
    if voice.engine == "piper":
        from appliance.voice.commands import engines

        speaker = engines("whisper", progress=False).speaker
        spoken = speaker.synthesize(text, steady=True)
        return resample_pcm16(spoken.data, spoken.rate, PIPELINE_RATE)
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "s.wav"
        if voice.engine == "espeak":
            _run(["espeak-ng", "-v", voice.name, "-s", str(voice.rate or 160),
                  "-p", str(voice.pitch or 50), "-w", str(wav), text])
        elif voice.engine == "flite":
            _run(["flite", "-voice", voice.name, "-t", text, "-o", str(wav)])
        else:
            # text2wave reads the text from stdin; the voice is chosen by its Scheme function.
            _run(["text2wave", "-eval", f"(voice_{voice.name})", "-o", str(wav)], stdin=text)
        if not wav.exists():
            # text2wave exits 0 on an unknown voice ("SIOD ERROR: unbound variable").
            raise SynthesisError(f"{voice.engine} has no voice {voice.name!r} installed "
                                 "(scripts/setup.sh installs the corpus's voices)")
        return load_wav(wav).data
