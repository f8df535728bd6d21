"""Runs corpus audio through the real voice pipeline (`run_voice`) on a scene's SceneSink."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm
from appliance.voice.audio.sources import WavSource
from appliance_lab.bench.spoken.outcome import SceneSink, Turn

if TYPE_CHECKING:
    from appliance.voice.hearing.vad import VadSettings

LEAD_S = 1.0
GAP_S = 1.2
"""Silence between items: longer than the VAD's hangover, so items are never one segment."""

Progress = Callable[[str], None]


class RecognizerMissing(Exception):
    """This build's VoiceOptions has no `recognizer` (the closed-set branch is not merged)."""


def voice_options(recognizer: str, pace: float | None, vad: VadSettings | None = None,
                  profile: Path | None = None) -> Any:
    """`profile`: the person's voice profile, heard before Whisper, never learned into (a
    benchmark's profile stays as enrolled)."""
    from appliance.voice.commands import VoiceOptions

    # The bench never mutes: a file is held while the appliance answers (see Feeder) and the
    # replies are not spoken, so nothing of the input is lost to the mute.
    options: dict[str, Any] = {"pace": pace, "mute_while_speaking": False}
    if vad is not None:  # (appliance_lab.tuning.closed_set_latency varies it)
        options["vad"] = vad
    if profile is not None:
        options["profile"] = profile
        options["learn_voice"] = False
    if "recognizer" in VoiceOptions.__dataclass_fields__:
        options["recognizer"] = recognizer
    elif recognizer != "open":
        raise RecognizerMissing(f"this build has no {recognizer!r} recognizer")
    return VoiceOptions(**options)


@dataclass
class Span:
    """Where one clip sits in the concatenated input, in seconds."""

    start_s: float
    end_s: float


@dataclass
class RunResult:
    turns: list[Turn]
    heard: list[dict[str, Any]]  # the wake gate's record of every segment (VoiceStats.heard)
    spans: list[Span]
    audio_s: float


def run_clips(scene: str, clips: list[bytes], recognizer: str, pace: float | None,
              on_turn: Callable[[], None] | None = None,
              vad: VadSettings | None = None, profile: Path | None = None,
              asks: bool = False) -> RunResult:
    """Feed `clips` (16 kHz PCM16), separated by GAP_S of silence, through one pipeline;
    `profile`: with the person's voice profile (appliance/voice/hearing/profile.py); `asks`:
    a question opens its listening window (`SceneSink`)."""
    from appliance.voice.commands import engines, run_voice

    gap = bytes(int(GAP_S * PIPELINE_RATE) * 2)
    pcm = bytearray(bytes(int(LEAD_S * PIPELINE_RATE) * 2))
    spans = []
    for clip in clips:
        start = len(pcm) / 2 / PIPELINE_RATE
        pcm += clip
        spans.append(Span(start, len(pcm) / 2 / PIPELINE_RATE))
        pcm += gap
    audio = Pcm(bytes(pcm), PIPELINE_RATE)
    with tempfile.TemporaryDirectory() as tmp:
        sink = SceneSink(scene, Path(tmp), asks)
        stats = run_voice(WavSource(pcm=audio), sink, engines(progress=False), None,
                          voice_options(recognizer, pace, vad, profile),
                          on_event=(lambda _reply: on_turn()) if on_turn else None)
    return RunResult(sink.turns, stats.heard, spans, audio.seconds)


def owner(spans: list[Span], at_s: float) -> int | None:
    """The clip a segment starting at `at_s` belongs to (its span, or the gap after it)."""
    for i, span in enumerate(spans):
        until = spans[i + 1].start_s if i + 1 < len(spans) else float("inf")
        if span.start_s - 0.3 <= at_s < until - 0.3:
            return i
    return None
