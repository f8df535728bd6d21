"""What a take's audio holds: checked for being learnable, its pauses between words, copies in
noise (made-up noise, and the person's own room's once recorded), and its openWakeWord
embeddings as the profile stores them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from appliance.voice.audio.pcm import PIPELINE_RATE, float_to_pcm16, pcm16_to_float
from appliance.voice.errors import BadTake
from appliance.voice.hearing.templates import features, speech
from appliance.voice.hearing.wake_spotter import FEATURES

NOISY_SNR_DB = 10.0
"""Each take is also kept mixed with noise this far below it, so it is known in a noisy room."""
QUIETEST_PEAK = 0.02
"""A take whose loudest 20 ms is quieter than this (of full scale) holds nothing to learn."""
CLIPPED_SHARE = 0.01
"""A take with more of its samples than this at full scale is clipped: it is asked again."""
SHORTEST_S = 0.15
"""Speech shorter than this is a click or a breath, not a take."""
LONGEST_S = 8.0
"""A take longer than this is not one phrase."""
LONGEST_SPEECH_S = 30.0
"""The longest take of the person talking freely."""
SHORTEST_ROOM_S = 5.0
"""Less of the room's own sound than this is too little to know its noise by."""
LONGEST_ROOM_S = 60.0
"""The longest recording of the room's own sound kept."""


ROOM_FRAME = int(0.02 * PIPELINE_RATE)
"""The stretch of audio whose loudness is measured, to tell speech from the room's own sound."""


DIGITAL_SILENCE = 1e-6
"""A 20 ms stretch this quiet (RMS, full scale 1) is digital silence, never a microphone's."""


NOISY_ROOM_DB = 22.0
"""Speech less than this far above the room's own sound is heard in a noisy room."""


def heard_in_noise(pcm: bytes) -> bool:
    """Whether the utterance was said in a noisy room (NOISY_ROOM_DB)."""
    return signal_to_noise_db(pcm) < NOISY_ROOM_DB


def signal_to_noise_db(pcm: bytes) -> float:
    """How far an utterance's loud stretches stand above its quietest (the room between and
    around the words), in dB, digital silence around it left out; inf when the quietest are
    silent."""
    samples = pcm16_to_float(pcm)
    frames = len(samples) // ROOM_FRAME
    if frames < 2:
        return math.inf
    level = np.sqrt(np.mean(samples[: frames * ROOM_FRAME].reshape(frames, ROOM_FRAME) ** 2,
                            axis=1))
    # Digital silence around it (padding, an input muted before or after) is no room at all.
    sounding = np.flatnonzero(level > DIGITAL_SILENCE)
    if len(sounding) < 2:
        return math.inf
    level = level[sounding[0]: sounding[-1] + 1]
    quiet, loud = float(np.percentile(level, 10)), float(np.percentile(level, 90))
    return math.inf if quiet <= DIGITAL_SILENCE else 20 * math.log10(max(loud, quiet) / quiet)


def check_take(pcm: bytes, longest_s: float = LONGEST_S) -> bytes:
    """The take's speech, or BadTake saying in words what is wrong with it."""
    samples = pcm16_to_float(pcm)
    if len(samples) == 0 or float(np.abs(samples).max(initial=0.0)) < QUIETEST_PEAK:
        raise BadTake("nothing was heard in it (silence, or far too quiet)")
    if float(np.mean(np.abs(samples) >= 0.999)) > CLIPPED_SHARE:
        raise BadTake("it is clipped (too loud for the microphone)")
    said = speech(pcm)
    seconds = len(said) / 2 / PIPELINE_RATE
    if seconds < SHORTEST_S:
        raise BadTake("it is too short to hold a phrase")
    if seconds > longest_s:
        raise BadTake(f"it is longer than {longest_s:.0f} seconds: "
                      + ("one phrase at a time" if longest_s == LONGEST_S else "split it"))
    return said


def longest_pause(said: bytes) -> float:
    """The longest quiet stretch inside the speech, in seconds (the gaps between words)."""
    samples = pcm16_to_float(said)
    frame = PIPELINE_RATE // 50  # 20 ms
    count = len(samples) // frame
    if count < 3:
        return 0.0
    rms = np.sqrt(np.mean(np.square(samples[:count * frame].reshape(count, frame)), axis=1))
    quiet = rms < float(rms.max()) * 10 ** (-30 / 20)
    longest = run = 0
    for q in quiet:
        run = run + 1 if q else 0
        longest = max(longest, run)
    return longest * 0.02


def check_room(pcm: bytes) -> bytes:
    """The recording of the room's own sound, or BadTake saying in words what is wrong with it."""
    samples = pcm16_to_float(pcm)
    seconds = len(samples) / PIPELINE_RATE
    if seconds < SHORTEST_ROOM_S:
        raise BadTake(f"it is shorter than {SHORTEST_ROOM_S:.0f} seconds of the room")
    if seconds > LONGEST_ROOM_S:
        raise BadTake(f"it is longer than {LONGEST_ROOM_S:.0f} seconds: one is enough")
    if float(np.sqrt(np.mean(samples.astype(np.float64) ** 2))) <= DIGITAL_SILENCE:
        raise BadTake("it holds no sound at all (the microphone was off)")
    if float(np.mean(np.abs(samples) >= 0.999)) > CLIPPED_SHARE:
        raise BadTake("it is clipped (too loud for the microphone)")
    return pcm


def with_noise(said: bytes, snr_db: float = NOISY_SNR_DB, room: bytes | None = None) -> bytes:
    """The take mixed with noise `snr_db` below it: a stretch of the room's own sound when it
    was recorded, else pink noise (each chosen by the take: the same each run)."""
    x = pcm16_to_float(said).astype(np.float64)
    noise = _room_stretch(room, len(x)) if room else None
    if noise is None:
        rng = np.random.default_rng(len(said))
        spectrum = np.fft.rfft(rng.standard_normal(len(x)))
        spectrum /= np.maximum(np.sqrt(np.arange(len(spectrum))), 1.0)  # 1/f power: pink
        noise = np.fft.irfft(spectrum, n=len(x))
    level = np.sqrt(np.mean(x ** 2)) / max(float(np.sqrt(np.mean(noise ** 2))), 1e-12)
    mixed = x + noise * level / 10 ** (snr_db / 20)
    return float_to_pcm16(np.clip(mixed, -1.0, 1.0).astype(np.float32))


def _room_stretch(room: bytes, length: int) -> npt.NDArray[np.float64] | None:
    """`length` samples of the room's sound, starting where the take's length points (None:
    the recording is silent)."""
    sound = pcm16_to_float(room).astype(np.float64)
    if len(sound) == 0:
        return None
    sound -= float(np.mean(sound))
    start = length % len(sound)
    stretch = np.tile(sound, length // len(sound) + 2)[start: start + length]
    return None if float(np.sqrt(np.mean(stretch ** 2))) <= DIGITAL_SILENCE else stretch


def embeddings(blob: bytes, frames: int) -> npt.NDArray[np.float32]:
    """The embedding frames a take's blob holds."""
    return np.frombuffer(blob, dtype="<f4").reshape(frames, FEATURES).astype(np.float32)


@dataclass(frozen=True)
class LearnableTake:
    """A take's speech, how it sounds, and its embeddings clean and in noise, as stored."""

    said: bytes
    seconds: float
    longest_pause_s: float
    clean: bytes
    frames: int
    noisy: bytes
    noisy_frames: int
    in_room: bytes  # in the room's own sound (empty: not recorded)
    in_room_frames: int


def learnable(pcm: bytes, longest_s: float = LONGEST_S, room: bytes | None = None) -> LearnableTake:
    """The take ready to store (also in `room`'s sound, when it was recorded), or BadTake
    saying in words what is wrong with it."""
    said = check_take(pcm, longest_s)
    clean, noisy = features(said), features(with_noise(said))
    in_room = room_features(said, room) if room else np.zeros((0, FEATURES), np.float32)
    if len(clean) < 2:
        raise BadTake("it is too short to hold a phrase")
    return LearnableTake(said, len(said) / 2 / PIPELINE_RATE, longest_pause(said),
                         blob(clean), len(clean), blob(noisy), len(noisy), blob(in_room),
                         len(in_room))


def room_features(said: bytes, room: bytes) -> npt.NDArray[np.float32]:
    """The embeddings of the take's copy in the room's own sound, as the profile stores them."""
    return features(with_noise(said, room=room))


def blob(embedded: npt.NDArray[np.float32]) -> bytes:
    return np.ascontiguousarray(embedded, dtype="<f4").tobytes()
