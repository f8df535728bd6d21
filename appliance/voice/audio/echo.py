"""Acoustic echo cancellation on the microphone path, with the appliance's own voice as the
reference: speexdsp's canceller (through `pyaec`), then a residual-echo gate.

speexdsp, not WebRTC's AEC3: AEC3's double-talk suppression eats the start of a word the person
says over the reply (docs/measurements/barge-in.md has the comparison).
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any, Protocol

import numpy as np

from appliance.voice.audio.pcm import PIPELINE_RATE

log = logging.getLogger(__name__)

FRAME_SAMPLES = PIPELINE_RATE // 100  # both cancellers work on 10 ms frames
FILTER_SAMPLES = 4000  # speexdsp's echo tail: 250 ms of the room
ENGINE = "speexdsp (pyaec) + residual gate"
# A canceller leaves the echo about 20 dB down, still enough for webrtcvad to hear speech in it.
# So a 10 ms frame of what is left is kept only if it is louder than GATE_RATIO x the loudest
# speaker frame of the last GATE_WINDOW frames: on Piper's voice in the simulated room, echo
# alone reached 0.15 of it once converged and 0.24 in the first 1.5 s; a person's "stop" was
# 0.33-0.8 of it at its core.
GATE_RATIO = 0.3
# A fresh canceller has not yet learnt the room and lets most of the echo through for a second
# or so: the gate's level is also RESIDUAL_MARGIN x what the canceller has lately been leaving of
# the echo (frames the gate shut), starting from RESIDUAL_START (nothing learnt) and following
# the canceller down as it converges (halving in about a second), and up only slowly (a person's
# soft first sounds, below the gate, must not raise it over their word).
RESIDUAL_START = 0.6
RESIDUAL_MARGIN = 1.5
RESIDUAL_DECAY = 0.993
RESIDUAL_RISE = 1.01
QUIET = 30.0  # rms of a 10 ms frame the speaker plays that is as good as silence
GATE_WINDOW = 40  # 400 ms: the room's reverberation outlasts the sound that made it
# ... but dies away: a frame played k frames ago counts GATE_FADE**k (-0.3 dB per 10 ms, a
# reverberation time of 2 s, longer than a living room's), so a person who spoke when the reply
# paused is not held to the level of what was played before.
GATE_FADE = 10 ** (-0.3 / 20)
GATE_HOLD = 30  # once a person is heard, 300 ms more go through: the soft end of a word
# ... and 100 ms before: the soft start ("s" of "stop") is quieter than the echo limit, so what
# the microphone heard goes on this much late, for the gate to open before the word does.
GATE_LOOKAHEAD = 10


class Canceller(Protocol):
    def cancel(self, mic: bytes, far: bytes) -> bytes:
        """One 10 ms frame of the microphone, less the echo of the same frame of the speaker."""
        ...


class SpeexCanceller:
    """speexdsp's echo canceller and preprocessor (residual echo suppression)."""

    name = "speexdsp (pyaec)"

    def __init__(self) -> None:
        import pyaec  # type: ignore[import-untyped]

        self._aec: Any = pyaec.Aec(FRAME_SAMPLES, FILTER_SAMPLES, PIPELINE_RATE, True)

    def cancel(self, mic: bytes, far: bytes) -> bytes:
        out = self._aec.cancel_echo(
            np.frombuffer(mic, dtype="<i2").tolist(), np.frombuffer(far, dtype="<i2").tolist()
        )
        return np.asarray(out, dtype="<i2").tobytes()


class WebRTCCanceller:
    """WebRTC's AEC3 through LiveKit (not a dependency: measured for comparison)."""

    name = "webrtc-aec3 (livekit)"

    def __init__(self) -> None:
        from livekit import rtc  # type: ignore[import-not-found,import-untyped,unused-ignore]

        self._rtc: Any = rtc
        self._apm: Any = rtc.AudioProcessingModule(echo_cancellation=True, high_pass_filter=True)

    def cancel(self, mic: bytes, far: bytes) -> bytes:
        rtc = self._rtc
        self._apm.process_reverse_stream(rtc.AudioFrame(far, PIPELINE_RATE, 1, FRAME_SAMPLES))
        near = rtc.AudioFrame(bytearray(mic), PIPELINE_RATE, 1, FRAME_SAMPLES)
        self._apm.set_stream_delay_ms(0)  # the room's own delay is AEC3's to find
        self._apm.process_stream(near)
        return bytes(near.data)


class EchoCanceller:
    """Removes what the speaker played (`far`) from what the microphone heard (`mic`).

    Both are 16 kHz mono 16-bit PCM of the same length, a whole number of 10 ms frames, given in
    the order they happened: `far` is what went to the speaker while `mic` was being recorded.
    What comes out is GATE_LOOKAHEAD frames late (see above).
    """

    def __init__(self, canceller: Canceller | None = None, gate: bool = True) -> None:
        self.canceller = canceller or SpeexCanceller()
        self._gate = gate
        self._far_levels: deque[float] = deque(maxlen=GATE_WINDOW)
        self._late: deque[bytes] = deque([bytes(FRAME_SAMPLES * 2)] * GATE_LOOKAHEAD)
        self._hold = 0
        self._residual = RESIDUAL_START

    def process(self, mic: bytes, far: bytes) -> bytes:
        step = FRAME_SAMPLES * 2
        if len(mic) != len(far) or len(mic) % step:
            raise ValueError("mic and far must be the same whole number of 10 ms frames")
        out = bytearray()
        for i in range(0, len(mic), step):
            cancelled = self.canceller.cancel(mic[i : i + step], far[i : i + step])
            out += self._gated(cancelled, far[i : i + step])
        return bytes(out)

    def _gated(self, near: bytes, far: bytes) -> bytes:
        """`near` as it was GATE_LOOKAHEAD frames ago, silenced unless a person was heard
        around then (GATE_LOOKAHEAD before to GATE_HOLD after)."""
        if not self._gate:
            return near
        self._far_levels.append(_rms(far))
        self._late.append(near)
        played = max(
            level * GATE_FADE**age for age, level in enumerate(reversed(self._far_levels))
        )
        level = _rms(near) / played if played > 0 else 0.0
        limit = max(GATE_RATIO, RESIDUAL_MARGIN * self._residual)
        if played >= QUIET and level < limit:  # echo, as far as the gate can tell: learn from it
            self._residual = min(
                max(level, self._residual * RESIDUAL_DECAY), self._residual * RESIDUAL_RISE
            )
        if played < QUIET:  # nothing played lately: nothing to shut out, up to this frame
            self._hold = max(self._hold, GATE_LOOKAHEAD)
        elif level >= limit:
            self._hold = GATE_LOOKAHEAD + GATE_HOLD
        late = self._late.popleft()
        if self._hold > 0:
            self._hold -= 1
            return late
        return bytes(len(late))

    def close(self) -> None:
        pass


def open_echo_canceller() -> EchoCanceller | None:
    """The echo canceller, or None when it is not installed (the microphone is then muted while
    the appliance speaks, as without barge-in)."""
    try:
        return EchoCanceller()
    except ImportError:
        log.warning("No echo canceller installed (pip install pyaec); barge-in is off and the "
                    "microphone is muted while the appliance speaks.")
        return None


def _rms(pcm: bytes) -> float:
    x = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    return float(np.sqrt(np.mean(np.square(x)))) if x.size else 0.0
