"""Near misses of the wake phrase read with each voice's profile as enrolled and after spells of
use (issue 44): whether the person's wake verifier lets each through, and whether the takes hear
a command after a wake phrase with the spotter at or above their floor. The same clips are read
with both profiles, whole (the stages, not the pipeline). personal_use makes the used profiles:
`python -m appliance_lab.bench.spoken.near_used --part tune` after its run of that part.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from appliance.voice.hearing.personal import TAKES_SPOTTER_FLOOR, fits_wake
from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.templates import TemplateSet
from appliance.voice.hearing.wake_spotter import WakeSpotter
from appliance_lab.bench.spoken.corpus import (
    WAKE,
    Part,
    load_part,
)
from appliance_lab.bench.spoken.personal import make_profile, used_path
from appliance_lab.bench.spoken.personal_bench import default_workdir
from appliance_lab.bench.spoken.personal_fa import FA_CONDITIONS, FA_VARIANTS, line_in, lines

SAYINGS = 2
"""How many times each voice says each near miss, in a room and a take drawn for each."""
ARMS = ("enrolled", "used")


@dataclass(frozen=True)
class Passed:
    """What one profile's stages made of a near miss."""

    verifier: bool  # the person's wake verifier lets it through
    takes: bool  # the takes heard a command after a wake phrase, the spotter at its floor
    fit: float  # its start's distance from the nearest wake take, in their spreads


@dataclass(frozen=True)
class NearMiss:
    """One near miss a voice said, read with both profiles."""

    voice: str
    kind: str
    line: str
    condition: str
    spot: float
    enrolled: Passed
    used: Passed


def _passed(templates: TemplateSet, pcm: bytes, spot: float) -> Passed:
    found = templates.hear(pcm, lambda _phrase: True)
    fit = templates.wake_fit(pcm)
    return Passed(fits_wake(templates, pcm),
                  bool(found is not None and found.wake and spot >= TAKES_SPOTTER_FLOOR),
                  round(float(fit or 0.0), 3))


def measure(part: Part, workdir: Path) -> list[NearMiss]:
    """Each voice's near misses (personal_fa's lines, SAYINGS times each), read with both
    profiles."""
    spotter = WakeSpotter.load(WAKE)
    if spotter is None:
        raise SystemExit("near_used: no wake spotter for the wake phrase")
    near = [(kind, line) for kind, line in lines(part) if kind in ("near", "near+command")]
    out: list[NearMiss] = []
    for voice in load_part(part).voices:
        used = used_path(workdir, part, voice)
        if not used.exists():
            raise SystemExit(f"near_used: {voice.label} has no used profile: run "
                             f"personal_use --part {part} first")
        enrolled = VoiceProfile(make_profile(workdir, part, voice, "normal", True, True))
        templates = {"enrolled": enrolled.template_set(),
                     "used": VoiceProfile(used).template_set()}
        rng = random.Random(f"near-used|{voice.label}")
        for kind, line in near * SAYINGS:
            room = FA_CONDITIONS[rng.randrange(len(FA_CONDITIONS))]
            variant = FA_VARIANTS[rng.randrange(len(FA_VARIANTS))]
            pcm = line_in(part, voice, line, variant, room, rng.randrange(1 << 30))
            spot = spotter.score(pcm)
            out.append(NearMiss(voice.label, kind, line, room.name, round(spot, 2),
                                *(_passed(templates[arm], pcm, spot) for arm in ARMS)))
        print(f"near_used: {voice.label} done", file=sys.stderr, flush=True)
    return out


def report(found: list[NearMiss]) -> dict[str, Any]:
    """For each stage: how many near misses pass it with each profile, and how many pass only
    with the used one, or only with the enrolled one."""
    out: dict[str, Any] = {"n": len(found)}
    for stage in ("verifier", "takes"):
        passed = [(getattr(m.enrolled, stage), getattr(m.used, stage)) for m in found]
        out[stage] = {"enrolled": sum(e for e, _ in passed), "used": sum(u for _, u in passed),
                      "newly": sum(u and not e for e, u in passed),
                      "no_longer": sum(e and not u for e, u in passed)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", choices=("heldout", "tune"), default="tune")
    parser.add_argument("--work", type=Path, default=default_workdir())
    args = parser.parse_args()
    part: Part = "tune" if args.part == "tune" else "heldout"
    found = measure(part, args.work)
    print(json.dumps({"part": part, **report(found), "rows": [asdict(m) for m in found]}))


if __name__ == "__main__":
    main()
