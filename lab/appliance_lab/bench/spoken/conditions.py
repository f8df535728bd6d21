"""What an utterance is heard through: clean, noise at an SNR, or a reverberant room (sox)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from appliance.voice.audio.pcm import (
    PIPELINE_RATE,
    Pcm,
    float_to_pcm16,
    load_wav,
    pcm16_to_float,
    write_wav,
)

NoiseKind = Literal["pink", "brown", "babble"]
PAD_S = 0.3
"""Noise (or room) before and after the words, so the VAD hears the words start in it."""


class Condition(BaseModel):
    """`snr_db` with `noise`; `reverb` alone is the room (sox's reverberance, 0-100)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    noise: NoiseKind | None = None
    snr_db: float | None = None
    reverb: int | None = None


CONDITIONS = (
    Condition(name="clean"),
    Condition(name="snr20", snr_db=20),
    Condition(name="snr10", snr_db=10),
    Condition(name="snr5", snr_db=5),
    Condition(name="reverb", reverb=70),
)
NOISES: tuple[NoiseKind, ...] = ("pink", "brown", "babble")


def trim_silence(pcm: bytes, floor: float = 0.01) -> bytes:
    """The TTS output without its leading and trailing silence (engines pad differently)."""
    x = pcm16_to_float(pcm)
    loud = np.flatnonzero(np.abs(x) > floor * max(float(np.abs(x).max(initial=0.0)), 1e-9))
    if loud.size == 0:
        return pcm
    return pcm[int(loud[0]) * 2 : (int(loud[-1]) + 1) * 2]


def power(x: np.ndarray) -> float:
    return float(np.mean(np.square(x.astype(np.float64)))) if x.size else 0.0


def snr_db(speech: np.ndarray, noise: np.ndarray) -> float:
    """SNR as the corpus defines it: speech power over the words (padding excluded) against
    the noise's power over the same samples."""
    return 10.0 * float(np.log10(power(speech) / max(power(noise), 1e-20)))


def sox(*args: str) -> None:
    """Run sox repeatably (-R): its dither is otherwise drawn anew each run, and a clip made
    again would not equal its cached copy."""
    subprocess.run(["sox", "-R", *args], check=True, capture_output=True)


def sox_noise(kind: Literal["pink", "brown"], seconds: float, seed: int) -> np.ndarray:
    """sox-synthesized coloured noise; the seed picks an offset."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "n.wav"
        total = seconds + 1.0 + (seed % 97) / 10
        sox("-n", "-r", str(PIPELINE_RATE), "-c", "1", "-b", "16", str(out), "synth",
            f"{total:.2f}", f"{kind}noise")
        x = pcm16_to_float(load_wav(out).data)
    start = int((seed % 97) / 10 * PIPELINE_RATE)
    return x[start : start + int(seconds * PIPELINE_RATE)]


def noise_seconds(speech: bytes) -> float:
    """How long a noise must be to lie under the words (PCM16) and PAD_S either side of them."""
    return len(speech) / 2 / PIPELINE_RATE + 2 * PAD_S


def babble_at(babble: np.ndarray, seconds: float, seed: int) -> np.ndarray:
    n = int(seconds * PIPELINE_RATE)
    reps = int(np.ceil((n + 1) / max(len(babble), 1))) + 1
    tiled = np.tile(babble, reps)
    start = seed % max(len(babble), 1)
    return tiled[start : start + n]


def make_babble(streams: list[bytes]) -> np.ndarray:
    """Several voices talking at once: the streams summed, each at the same power."""
    xs = [pcm16_to_float(s) for s in streams if s]
    n = max(len(x) for x in xs)
    out = np.zeros(n, dtype=np.float32)
    for x in xs:
        out[: len(x)] += x / np.sqrt(max(power(x), 1e-12))
    return out


def mix_at_snr(speech: bytes, noise: np.ndarray, target_db: float) -> bytes:
    """PAD_S of noise, the words with the noise scaled to `target_db` under them, PAD_S more."""
    s = pcm16_to_float(speech)
    pad = int(PAD_S * PIPELINE_RATE)
    need = len(s) + 2 * pad
    # np.resize repeats a noise a sample or two short (the caller's rounding of seconds).
    n = np.resize(noise, need).astype(np.float64) if len(noise) < need else noise[:need]
    n = n.astype(np.float64)
    n = n * np.sqrt(power(s) / max(power(n[pad : pad + len(s)]), 1e-20) / 10 ** (target_db / 10))
    padded = np.concatenate([np.zeros(pad), s, np.zeros(pad)])
    mixed = padded + n
    peak = float(np.abs(mixed).max(initial=0.0))
    if peak > 0.99:  # scale both alike, so the SNR stays what was asked
        mixed = mixed * (0.99 / peak)
    return float_to_pcm16(mixed.astype(np.float32))


def through_sox(pcm: bytes, *effects: str) -> bytes:
    """The audio (PCM16 at the pipeline's rate) through sox's `effects`."""
    if not effects:
        return pcm
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.wav", Path(tmp) / "out.wav"
        write_wav(src, Pcm(pcm, PIPELINE_RATE))
        sox(str(src), str(out), *effects)
        return load_wav(out).data


def reverberate(speech: bytes, reverberance: int) -> bytes:
    """The words in a room: sox `reverb` (wet and dry), padded so the tail is heard."""
    pad = bytes(int(PAD_S * PIPELINE_RATE) * 2)
    # reverberance %, HF damping %, room scale %, stereo depth, pre-delay ms, wet gain dB
    return through_sox(pad + speech + pad, "reverb", str(reverberance), "50", "100", "100",
                       "10", "0", "gain", "-n", "-1")
