"""Reading user-supplied WAV files into 16 kHz mono PCM, and writing PCM back out."""

from __future__ import annotations

import struct
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soxr  # type: ignore[import-untyped]

from appliance.voice.audio.rate import PIPELINE_RATE as PIPELINE_RATE  # re-exported
from appliance.voice.errors import VoiceError

MIN_RATE = 8_000
MAX_RATE = 96_000


@dataclass(frozen=True)
class Pcm:
    """Signed 16-bit little-endian mono samples at `rate` Hz."""

    data: bytes
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.data) / 2 / self.rate


def _to_float(raw: bytes, width: int, channels: int) -> np.ndarray:
    if width == 1:  # 8-bit WAV is unsigned
        samples = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        samples = pcm16_to_float(raw)
    elif width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        ints = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        ints = np.where(ints >= 1 << 23, ints - (1 << 24), ints)
        samples = ints.astype(np.float32) / float(1 << 23)
    else:
        samples = np.frombuffer(raw, dtype="<i4").astype(np.float32) / float(1 << 31)
    mono: np.ndarray = samples.reshape(-1, channels).mean(axis=1)
    return mono


def pcm16_to_float(data: bytes) -> np.ndarray:
    """Signed 16-bit little-endian samples as float32 in [-1, 1)."""
    return np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0


def float_to_pcm16(samples: np.ndarray) -> bytes:
    clipped = np.clip(samples, -1.0, 1.0)
    return bytes((clipped * 32767.0).astype("<i2").tobytes())


def resample_pcm16(data: bytes, rate_in: int, rate_out: int) -> bytes:
    if rate_in == rate_out or not data:
        return data
    return float_to_pcm16(soxr.resample(pcm16_to_float(data), rate_in, rate_out))


def _starts_like_wav(path: Path) -> bool:
    with path.open("rb") as f:
        head = f.read(12)
    return head[:4] == b"RIFF" and head[8:12] == b"WAVE"


def load_wav(path: Path, rate: int = PIPELINE_RATE) -> Pcm:
    """Read a PCM WAV file as mono at `rate`; a bad file raises one clear VoiceError."""
    name = path.name
    if not path.is_file():
        raise VoiceError(f"Audio file not found: {path}")
    if path.stat().st_size == 0:
        raise VoiceError(f"{name} is empty.")
    try:
        with wave.open(str(path), "rb") as w:
            channels, width, src_rate, frames = (
                w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes(),
            )
            raw = w.readframes(frames)
    except wave.Error as e:
        if "unknown format" in str(e):
            raise VoiceError(f"{name} is not PCM audio; use 16-bit PCM WAV.") from None
        if _starts_like_wav(path):
            raise VoiceError(f"{name} is truncated or damaged.") from None
        raise VoiceError(f"{name} is not a WAV file.") from None
    except (EOFError, ValueError, struct.error):
        if _starts_like_wav(path):
            raise VoiceError(f"{name} is truncated or damaged.") from None
        raise VoiceError(f"{name} is not a WAV file.") from None
    if not MIN_RATE <= src_rate <= MAX_RATE:
        raise VoiceError(
            f"{name} has sample rate {src_rate} Hz; use {MIN_RATE // 1000}-{MAX_RATE // 1000} kHz."
        )
    if width not in (1, 2, 3, 4) or channels < 1:
        raise VoiceError(f"{name} has an unsupported sample format.")
    if frames == 0:
        raise VoiceError(f"{name} contains no audio.")
    if len(raw) < frames * width * channels:
        raise VoiceError(f"{name} is truncated.")
    mono = _to_float(raw, width, channels)
    if src_rate != rate:
        mono = soxr.resample(mono, src_rate, rate)
    return Pcm(float_to_pcm16(mono), rate)


def write_wav(path: Path, pcm: Pcm) -> None:
    """Write `pcm` as a 16-bit mono WAV; a path that cannot be written is one VoiceError."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # The file is opened here, not by wave.open: a Wave_write whose own open failed prints
        # a traceback from its __del__ even when the error is caught.
        with path.open("wb") as f, wave.open(f, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(pcm.rate)
            w.writeframes(pcm.data)
    except OSError as e:
        raise VoiceError(f"cannot write {path}: {e.strerror or e}") from None
