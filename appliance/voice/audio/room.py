"""A simulated room for tests and the benchmark: what the speaker plays reaches the microphone
through a delay, a gain and sox's reverberation, on top of what a person says (a WAV's PCM).

It is both the speaker (`play`) and the microphone (`read`), so the appliance hears its own
voice exactly as much as it speaks, at the moment it speaks.
"""

from __future__ import annotations

import subprocess
import threading
import time
from functools import cache

import numpy as np
import numpy.typing as npt

from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm


@cache
def reverb_response(reverberance: int = 50, seconds: float = 0.6) -> npt.NDArray[np.float64]:
    """The impulse response of sox's `reverb` (a linear filter), peak 1.0."""
    impulse = np.zeros(int(seconds * PIPELINE_RATE), dtype="<f4")
    impulse[0] = 0.5
    raw = subprocess.run(
        ["sox", "-t", "raw", "-r", str(PIPELINE_RATE), "-e", "floating-point", "-b", "32",
         "-c", "1", "-", "-t", "raw", "-e", "floating-point", "-b", "32", "-",
         "reverb", str(reverberance), "50", "100"],
        input=impulse.tobytes(), capture_output=True, check=True,
    ).stdout
    response = np.frombuffer(raw, dtype="<f4").astype(np.float64)[: len(impulse)]
    return response / float(np.abs(response).max())


class SimulatedRoom:
    """A person's speech (`person`) plus the speaker's sound through the room.

    `live`: read like a sound card, in real time (the pipeline then treats it as a microphone:
    muted while speaking unless barge-in); otherwise like a file the pipeline paces itself.
    """

    def __init__(
        self,
        person: Pcm,
        delay_s: float = 0.06,
        gain: float = 0.5,
        reverberance: int = 50,
        live: bool = False,
    ) -> None:
        assert person.rate == PIPELINE_RATE
        self.live = live
        self._lock = threading.Lock()  # a live speaker plays from its own thread
        self.person = np.frombuffer(person.data, dtype="<i2").astype(np.float64)
        response = reverb_response(reverberance)
        delay = int(delay_s * PIPELINE_RATE)
        self._path = np.zeros(delay + len(response))
        self._path[delay:] = response * gain
        self._echo = np.zeros(len(self._path) + PIPELINE_RATE)  # from the read position on
        self._pos = 0
        self.echo_energy = 0.0  # of the echo read so far: the reference for ERLE

    def open(self) -> None:
        self._pos = 0
        self._echo[:] = 0.0

    def play(self, pcm: bytes, rate: int) -> None:
        assert rate == PIPELINE_RATE
        sound = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
        heard = np.convolve(sound, self._path)
        with self._lock:
            if len(heard) > len(self._echo):
                grown = np.zeros(len(heard) - len(self._echo))
                self._echo = np.concatenate([self._echo, grown])
            self._echo[: len(heard)] += heard

    def reply_done(self) -> None:
        pass

    def read(self, samples: int) -> bytes | None:
        if self._pos >= len(self.person):
            return None
        if self.live:
            time.sleep(samples / PIPELINE_RATE)
        voice = self.person[self._pos : self._pos + samples]
        n = len(voice)
        with self._lock:
            echo = self._echo[:n].copy()
            self._echo = np.concatenate([self._echo[n:], np.zeros(n)])
        self._pos += n
        self.echo_energy += float(np.sum(np.square(echo)))
        mixed = np.clip(np.round(voice + echo), -32768, 32767).astype("<i2")
        return mixed.tobytes()

    def close(self) -> None:
        pass
