"""The microphone and the speaker, opened for a moment through pyaudio as the kiosk opens them."""

from __future__ import annotations

import math
from array import array
from typing import Any

from appliance.health.check import Check, first_line

LISTEN_S = 0.3
SILENT_SHARE = 0.9  # of the samples exactly zero: a muted capture
NO_VOICE_EXTRA = "pyaudio is not installed: pip install 'appliance[voice]'"
CARDS_HINT = ("`arecord -l` and `aplay -l` list the sound cards; the appliance user needs the "
              "audio group")


def level_dbfs(samples: array[int]) -> float:
    """The RMS level of 16-bit samples relative to full scale (-inf for none or all zero)."""
    if not samples:
        return -math.inf
    rms = math.sqrt(sum(s * s for s in samples) / len(samples))
    return 20 * math.log10(rms / 32768) if rms else -math.inf


def zero_share(samples: array[int]) -> float:
    """How much of the signal is exactly zero: a live microphone's noise almost never is, a
    muted capture nearly all (ALSA and PortAudio leave a few stray values at buffer edges)."""
    return samples.count(0) / len(samples) if samples else 1.0


def _pyaudio() -> tuple[Any, Any] | None:
    """(the pyaudio module, an initialised PyAudio), quiet: ALSA prints while it probes."""
    try:
        import pyaudio  # type: ignore[import-untyped,unused-ignore]

        from appliance.voice.sources import native_stderr_silenced
    except ImportError:
        return None
    with native_stderr_silenced():
        return pyaudio, pyaudio.PyAudio()


def microphone(seconds: float = LISTEN_S) -> Check:
    """The default input, opened at 16 kHz mono, and `seconds` of it read for a level."""
    loaded = _pyaudio()
    if loaded is None:
        return Check("Microphone", "problem", NO_VOICE_EXTRA)
    from appliance.voice.audio_file import PIPELINE_RATE
    from appliance.voice.sources import CHUNK_SAMPLES, native_stderr_silenced

    pyaudio, pa = loaded
    try:
        try:
            name = str(pa.get_default_input_device_info()["name"])
        except (OSError, ValueError):
            return Check("Microphone", "problem",
                         f"no input device: plug in a USB microphone; {CARDS_HINT}")
        try:
            with native_stderr_silenced():
                stream = pa.open(format=pyaudio.paInt16, channels=1, rate=PIPELINE_RATE,
                                 input=True, frames_per_buffer=CHUNK_SAMPLES)
        except (OSError, ValueError) as e:
            return Check("Microphone", "problem", (
                f'default input "{name}" cannot be opened at 16 kHz mono ({first_line(e)}): '
                "if the appliance is running it may hold the device (stop it and try again); "
                + CARDS_HINT))
        try:
            pcm = stream.read(int(PIPELINE_RATE * seconds), exception_on_overflow=False)
        finally:
            stream.close()
    finally:
        pa.terminate()
    samples = array("h", pcm[: len(pcm) - len(pcm) % 2])
    zeros = zero_share(samples)
    if zeros >= SILENT_SHARE:
        return Check("Microphone", "problem", (
            f'default input "{name}" opened but {zeros:.0%} of {seconds:g} s was digital '
            "silence: its capture is muted or switched off (alsamixer: F4, then M or space)"))
    return Check("Microphone", "ok", (
        f'default input "{name}" opened, 16 kHz, level {level_dbfs(samples):.0f} dBFS'))


def speaker() -> Check:
    """The default output, opened at 16 kHz mono, and a moment of silence written to it."""
    loaded = _pyaudio()
    if loaded is None:
        return Check("Speaker", "problem", NO_VOICE_EXTRA)
    from appliance.voice.audio_file import PIPELINE_RATE
    from appliance.voice.sources import native_stderr_silenced

    pyaudio, pa = loaded
    try:
        try:
            name = str(pa.get_default_output_device_info()["name"])
        except (OSError, ValueError):
            return Check("Speaker", "problem", (
                "no output device: plug in a speaker or USB sound card (replies are journaled "
                f"but not heard meanwhile); {CARDS_HINT}"))
        try:
            with native_stderr_silenced():
                stream = pa.open(format=pyaudio.paInt16, channels=1, rate=PIPELINE_RATE,
                                 output=True)
        except (OSError, ValueError) as e:
            return Check("Speaker", "problem", (
                f'default output "{name}" cannot be opened at 16 kHz mono ({first_line(e)}); '
                + CARDS_HINT))
        try:
            stream.write(bytes(PIPELINE_RATE // 10 * 2))  # 0.1 s of silence: nothing is heard
        finally:
            stream.close()
    finally:
        pa.terminate()
    return Check("Speaker", "ok", f'default output "{name}" opened, 16 kHz')
