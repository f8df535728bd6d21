"""Speech for the voice tests: synthesized lines, cached, and silence (the engines are the
`loaded` fixture in conftest.py)."""

from __future__ import annotations

from functools import cache

from appliance.voice.audio.pcm import PIPELINE_RATE
from appliance.voice.commands import speech_pcm


@cache
def say(text: str, voice: str) -> bytes:
    return speech_pcm(text, voice)


def silence(seconds: float) -> bytes:
    return bytes(int(seconds * PIPELINE_RATE) * 2)
