"""Wake false accepts per hour: speech without the wake phrase, and noise, through the pipeline."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from appliance.voice.audio.pcm import PIPELINE_RATE, float_to_pcm16
from appliance_lab.bench.spoken.conditions import sox_noise
from appliance_lab.bench.spoken.corpus import Part, babble, non_wake_audio, non_wake_items
from appliance_lab.bench.spoken.runs import Progress, run_clips

NOISE_SHARE = 0.1
"""Of the audio, this much is noise alone (pink, brown, babble at speech level)."""
RUN_S = 300.0
"""Audio per pipeline run (a progress line each)."""
SCENE = "messages"


def noise_clip(kind: str, seconds: float, seed: int, part: Part) -> bytes:
    """`seconds` of pink, brown or babble noise alone, at the level the false-accept runs use."""
    if kind == "babble":
        b = babble(part)
        start = seed % max(1, len(b))
        x = np.tile(b, 2 + int(seconds * PIPELINE_RATE) // max(1, len(b)))[
            start : start + int(seconds * PIPELINE_RATE)]
        x = x / max(float(np.abs(x).max(initial=0.0)), 1e-9) * 0.3
    else:
        x = sox_noise(kind, seconds, seed)  # type: ignore[arg-type]
        x = x / max(float(np.abs(x).max(initial=0.0)), 1e-9) * 0.1
    return float_to_pcm16(x.astype(np.float32))


def non_wake_clips(part: Part, hours: float, progress: Progress) -> list[bytes]:
    """At least `hours` of the part's non-wake speech under every condition, and noise."""
    pool = non_wake_items(part)
    random.Random(15).shuffle(pool)
    target = hours * 3600
    clips: list[bytes] = []
    total = 0.0
    i = 0
    while total < target * (1 - NOISE_SHARE):
        voice, line, condition, noise = pool[i % len(pool)]
        clip = non_wake_audio(part, voice, line, condition, noise)
        clips.append(clip)
        total += len(clip) / 2 / PIPELINE_RATE + 1.2
        i += 1
        if i % 200 == 0:
            progress(f"false accepts: {total / 60:.0f} of {target / 60:.0f} min of audio made")
    kinds = ("pink", "brown", "babble")
    k = 0
    while total < target:
        clips.append(noise_clip(kinds[k % 3], 20.0, k, part))
        total += 21.2
        k += 1
    random.Random(16).shuffle(clips)
    return clips


def bench_false_accepts(part: Part, hours: float, recognizer: str,
                        progress: Progress, clips: list[bytes] | None = None) -> dict[str, Any]:
    """Every segment the wake gate let through (a command or a window opened by the wake
    phrase) is a false accept: none of this audio says it. Fed as fast as the VAD reads it;
    the gate's clock is the audio's, so its decisions are those of real time."""
    clips = clips if clips is not None else non_wake_clips(part, hours, progress)
    accepted: list[str] = []
    segments = 0
    audio_s = 0.0
    batch: list[bytes] = []
    batch_s = 0.0
    for n, clip in enumerate(clips, 1):
        batch.append(clip)
        batch_s += len(clip) / 2 / PIPELINE_RATE
        if batch_s < RUN_S and n < len(clips):
            continue
        result = run_clips(SCENE, batch, recognizer, pace=None)
        audio_s += result.audio_s
        segments += len(result.heard)
        accepted += [h["text"] for h in result.heard if h.get("via") == "wake"]
        batch, batch_s = [], 0.0
        progress(f"{recognizer}: false accepts: {audio_s / 60:.0f} min heard, "
                 f"{len(accepted)} accepted")
    hours_heard = audio_s / 3600
    per_hour = round(len(accepted) / hours_heard, 2) if hours_heard else None
    return {"hours": round(hours_heard, 3), "minutes": round(audio_s / 60, 1),
            "segments": segments,
            "false_accepts": len(accepted),
            "false_accepts_per_hour": per_hour,
            "accepted_sample": accepted[:20]}

