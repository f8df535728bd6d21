"""How far a person's own wake takes are from the wake phrases they say and from the near misses
they say (issue 44): the sweep behind WAKE_VERIFY_FACTOR (voice/hearing/personal.py), run on
one part's voices. Speech embeddings and warping only, no pipeline, no Whisper:
`python -m appliance_lab.bench.spoken.wake_verify --part tune --per 8`.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.voice.hearing.personal import NOISY_ROOM_DB, fits_wake
from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.take_audio import signal_to_noise_db
from appliance.voice.hearing.templates import TemplateSet
from appliance_lab import REPO
from appliance_lab.bench.spoken.corpus import Part, as_sentence, heard_in, load_part, noise_for
from appliance_lab.bench.spoken.personal import (
    CONDITIONS,
    item_audio,
    make_profile,
    said,
    sample_items,
)
from appliance_lab.bench.spoken.personal_fa import FA_CONDITIONS, FA_VARIANTS, lines
from appliance_lab.bench.stats import wilson

FACTORS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 2.0)
"""The bounds tried, in units of the person's wake takes' own spread."""
NEAR_KINDS = ("near", "near+command")


@dataclass(frozen=True)
class Fit:
    """One utterance: the room it was said in, how far it started from the speaker's nearest
    wake take (in spreads of their wake takes), its speech over its room (dB), and whether
    the product's verifier takes it as the wake phrase."""

    room: str
    fit: float
    snr_db: float
    taken: bool


def _fit(templates: TemplateSet, pcm: bytes, room: str) -> Fit:
    fit = templates.wake_fit(pcm)
    return Fit(room, math.inf if fit is None else fit, signal_to_noise_db(pcm),
               fits_wake(templates, pcm))


def fits(part: Part, per: int, near_per_line: int, voices: int,
         workdir: Path) -> dict[str, list[Fit]]:
    """Each voice's wake fits: of its test items (the wake phrase said, every condition) and of
    near misses it says (every room), against its own profile."""
    out: dict[str, list[Fit]] = {"wake": [], "near": []}
    pool = list(load_part(part).voices)[: voices or None]
    near_lines = [line for kind, line in lines(part) if kind in NEAR_KINDS]
    for voice in pool:
        templates = {style: VoiceProfile(make_profile(workdir, part, voice, style)).template_set()
                     for style in ("normal", "slow")}
        for item in sample_items(part, per, CONDITIONS, voices=0):
            if item.voice == voice:
                out["wake"].append(_fit(templates[item.style], item_audio(item), item.condition))
        rng = random.Random(f"wake-verify|{part}|{voice.label}")
        for line in near_lines:
            for _ in range(near_per_line):
                condition = rng.choice(FA_CONDITIONS)
                words = said(voice, as_sentence(line), rng.choice(FA_VARIANTS))
                clip = heard_in(part, words, condition, noise_for(voice, line, condition),
                                rng.randrange(1 << 30))
                out["near"].append(_fit(templates["normal"], clip, condition.name))
        print(f"wake-verify: {voice.label} done", file=sys.stderr, flush=True)
    return out


def _share(good: int, n: int) -> dict[str, Any]:
    return {"count": f"{good}/{n}", "ci95": wilson(good, n)}


def report(found: dict[str, list[Fit]]) -> dict[str, Any]:
    """The product's verifier (wake kept, near misses refused, in all and by room), then each
    bound tried, for the utterances it would judge as said in a quiet and in a noisy room."""
    verifier: dict[str, Any] = {}
    for what, good in (("wake_kept", lambda f: f.taken), ("near_refused", lambda f: not f.taken)):
        key = "wake" if what == "wake_kept" else "near"
        rooms = sorted({f.room for f in found[key]})
        verifier[what] = _share(sum(map(good, found[key])), len(found[key]))
        verifier[f"{what}_by_room"] = {
            room: f"{sum(good(f) for f in found[key] if f.room == room)}/"
                  f"{sum(f.room == room for f in found[key])}" for room in rooms}
    bounds = []
    for noisy in (False, True):
        for factor in FACTORS:
            wake = [f for f in found["wake"] if (f.snr_db < NOISY_ROOM_DB) == noisy]
            near = [f for f in found["near"] if (f.snr_db < NOISY_ROOM_DB) == noisy]
            bounds.append({"room": "noisy" if noisy else "quiet", "factor": factor,
                           "wake_kept": _share(sum(f.fit <= factor for f in wake), len(wake)),
                           "near_refused": _share(sum(f.fit > factor for f in near), len(near))})
    utterances = {key: [[f.room, round(f.fit, 3), round(f.snr_db, 1)] for f in found[key]]
                  for key in found}
    return {"verifier": verifier, "bounds": bounds, "utterances": utterances}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("tune", "heldout"), default="tune")
    parser.add_argument("--per", type=int, default=8, help="test items per voice and condition")
    parser.add_argument("--near", type=int, default=3, help="takes of each near miss per voice")
    parser.add_argument("--voices", type=int, default=0, help="the part's first N voices")
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "personal-templates")
    args = parser.parse_args()
    found = fits(args.part, args.per, args.near, args.voices, args.work)
    print(json.dumps({"part": args.part, "per": args.per, "near_per_line": args.near,
                      "voices": args.voices, **report(found)}, indent=2))


if __name__ == "__main__":
    main()
