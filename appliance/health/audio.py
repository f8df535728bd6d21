"""The microphone and the speaker, opened for a moment through pyaudio as the kiosk opens them."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

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

        from appliance.voice.audio.sources import native_stderr_silenced
    except ImportError:
        return None
    with native_stderr_silenced():
        return pyaudio, pyaudio.PyAudio()


class _Unusable(Exception):
    """The default device cannot be used: the check's detail, saying what to do."""


@contextmanager
def _default_stream(kind: Literal["input", "output"], unplugged: str,
                    held: str = "") -> Iterator[tuple[str, Any]]:
    """The default input or output's name and a stream on it, opened at 16 kHz mono as the
    kiosk opens it, closed after. Raises _Unusable when pyaudio or the device is missing
    (`unplugged`: what to do) or the device will not open (`held`: what to try first)."""
    loaded = _pyaudio()
    if loaded is None:
        raise _Unusable(NO_VOICE_EXTRA)
    from appliance.voice.audio.pcm import PIPELINE_RATE
    from appliance.voice.audio.sources import CAPTURE_SAMPLES, native_stderr_silenced

    pyaudio, pa = loaded
    # The microphone is opened as MicSource opens it; the speaker is only written to.
    direction = ({"input": True, "frames_per_buffer": CAPTURE_SAMPLES} if kind == "input"
                 else {"output": True})
    try:
        try:
            device = (pa.get_default_input_device_info() if kind == "input"
                      else pa.get_default_output_device_info())
            name = str(device["name"])
        except (OSError, ValueError):
            raise _Unusable(f"no {kind} device: {unplugged}; {CARDS_HINT}") from None
        try:
            with native_stderr_silenced():
                stream = pa.open(format=pyaudio.paInt16, channels=1, rate=PIPELINE_RATE,
                                 **direction)
        except (OSError, ValueError) as e:
            refused = f'default {kind} "{name}" cannot be opened at 16 kHz mono ({first_line(e)})'
            raise _Unusable(f"{refused}: {held}; {CARDS_HINT}" if held
                            else f"{refused}; {CARDS_HINT}") from None
        try:
            yield name, stream
        finally:
            stream.close()
    finally:
        pa.terminate()


def microphone(seconds: float = LISTEN_S) -> Check:
    """The default input, opened at 16 kHz mono, and `seconds` of it read for a level."""
    held = "if the appliance is running it may hold the device (stop it and try again)"
    try:
        with _default_stream("input", "plug in a USB microphone", held) as (name, stream):
            from appliance.voice.audio.pcm import PIPELINE_RATE

            pcm = stream.read(int(PIPELINE_RATE * seconds), exception_on_overflow=False)
    except _Unusable as e:
        return Check("Microphone", "problem", str(e))
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
    unplugged = ("plug in a speaker or USB sound card (replies are journaled but not heard "
                 "meanwhile)")
    try:
        with _default_stream("output", unplugged) as (name, stream):
            from appliance.voice.audio.pcm import PIPELINE_RATE

            stream.write(bytes(PIPELINE_RATE // 10 * 2))  # 0.1 s of silence: nothing is heard
    except _Unusable as e:
        return Check("Speaker", "problem", str(e))
    return Check("Speaker", "ok", f'default output "{name}" opened, 16 kHz')
