"""How far a person's own wake takes are from the wake phrases they say, from the near misses
they say and (`--speech`) from their everyday talk once their free speech is enrolled (issue
44): the sweep behind WAKE_VERIFY_QUIET/NOISY and OTHER_SPEECH_SHARE (voice/hearing/personal.py),
run on one part's voices. Speech embeddings and warping only, no pipeline, no Whisper:
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

from appliance.voice.hearing.personal import (
    WAKE_VERIFY_NOISY,
    WAKE_VERIFY_QUIET,
    fits_wake,
)
from appliance.voice.hearing.profile import FREE_SPEECH, TakeKind, VoiceProfile
from appliance.voice.hearing.take_audio import NOISY_ROOM_DB, signal_to_noise_db
from appliance.voice.hearing.templates import TemplateSet
from appliance_lab import REPO
from appliance_lab.bench.spoken.corpus import Part, as_sentence, load_part
from appliance_lab.bench.spoken.personal import (
    CONDITIONS,
    ENROL,
    item_audio,
    make_profile,
    sample_items,
    take,
)
from appliance_lab.bench.spoken.personal_fa import FA_CONDITIONS, FA_VARIANTS, line_in, lines
from appliance_lab.bench.spoken.voices import Voice
from appliance_lab.bench.stats import wilson

FACTORS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 2.0)
"""The bounds tried, in units of the person's wake takes' own spread."""
NEAR_KINDS = ("near", "near+command")
SPEECH_LINES = 8
"""Lines of everyday talk each voice enrols as its free speech (about half a minute)."""
OWN_TALK = 12
"""Other lines of everyday talk each voice says, to be refused."""
SHARES = (0.6, 0.7, 0.8, 0.9, 1.0)
"""The shares of the nearest free-speech fit tried as the bound (OTHER_SPEECH_SHARE)."""
LEASTS = (0.25, 0.35, 0.5)
"""The least bounds tried (WAKE_VERIFY_LEAST)."""


@dataclass(frozen=True)
class Fit:
    """One utterance: the room it was said in, how far it started from the speaker's nearest
    wake take (in spreads of their wake takes), its speech over its room (dB), and whether
    the product's verifier takes it as the wake phrase."""

    room: str
    fit: float
    snr_db: float
    taken: bool
    other: float | None = None  # the nearest fit of the voice's free speech, in this room
    taken_with_speech: bool | None = None  # by the verifier once free speech is enrolled


def _fit(templates: TemplateSet, pcm: bytes, room: str,
         speaking: TemplateSet | None = None) -> Fit:
    fit = templates.wake_fit(pcm)
    snr = signal_to_noise_db(pcm)
    other = speaking.other_fit(snr < NOISY_ROOM_DB) if speaking is not None else None
    return Fit(room, math.inf if fit is None else fit, snr, fits_wake(templates, pcm), other,
               None if speaking is None else fits_wake(speaking, pcm))


def with_free_speech(workdir: Path, part: Part, voice: Voice, talk: list[str]) -> Path:
    """A copy of the voice's profile with SPEECH_LINES lines of everyday talk enrolled as its
    free speech (kept across runs)."""
    plain = make_profile(workdir, part, voice, "normal")
    path = plain.with_suffix(".speech.sqlite")
    if path.exists() and VoiceProfile(path).takes():
        return path
    tmp = path.with_suffix(".making")
    tmp.write_bytes(plain.read_bytes())
    profile = VoiceProfile(tmp)
    for n, line in enumerate(talk[:SPEECH_LINES]):
        profile.add(FREE_SPEECH, TakeKind.SPEECH,
                    take(part, voice, as_sentence(line), ENROL["normal"][0], n))
    tmp.replace(path)
    return path


def fits(part: Part, per: int, near_per_line: int, voices: int, workdir: Path,
         speech: bool = False) -> dict[str, list[Fit]]:
    """Each voice's wake fits: of its test items (the wake phrase said, every condition), of
    near misses it says (every room) and, with `speech`, of everyday talk it says other than
    the free speech it enrolled, against its own profile."""
    out: dict[str, list[Fit]] = {"wake": [], "near": [], "talk": []}
    pool = list(load_part(part).voices)[: voices or None]
    near_lines = [line for kind, line in lines(part) if kind in NEAR_KINDS]
    talk = [line for kind, line in lines(part) if kind == "talk"]
    for voice in pool:
        templates = {style: VoiceProfile(make_profile(workdir, part, voice, style)).template_set()
                     for style in ("normal", "slow")}
        speaking = (VoiceProfile(with_free_speech(workdir, part, voice, talk)).template_set()
                    if speech else None)
        for item in sample_items(part, per, CONDITIONS, voices=0):
            if item.voice == voice:
                out["wake"].append(_fit(templates[item.style], item_audio(item), item.condition,
                                        speaking if item.style == "normal" else None))
        rng = random.Random(f"wake-verify|{part}|{voice.label}")
        said_lines = [("near", line) for line in near_lines for _ in range(near_per_line)]
        if speech:
            said_lines += [("talk", line) for line in rng.sample(talk[SPEECH_LINES:], OWN_TALK)]
        for key, text in said_lines:
            condition = rng.choice(FA_CONDITIONS)
            clip = line_in(part, voice, text, rng.choice(FA_VARIANTS), condition,
                           rng.randrange(1 << 30))
            out[key].append(_fit(templates["normal"], clip, condition.name, speaking))
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
    utterances = {key: [[f.room, round(f.fit, 3), round(f.snr_db, 1),
                         None if f.other is None else round(f.other, 3)] for f in found[key]]
                  for key in found}
    out = {"verifier": verifier, "bounds": bounds, "utterances": utterances}
    if found["talk"]:
        out["free_speech"] = free_speech(found)
    return out


def _room_bound(f: Fit) -> float:
    return WAKE_VERIFY_NOISY if f.snr_db < NOISY_ROOM_DB else WAKE_VERIFY_QUIET


def free_speech(found: dict[str, list[Fit]]) -> dict[str, Any]:
    """With each voice's free speech enrolled (normal style only): the product's verifier, and
    each share and least bound tried, on wake phrases kept, near misses and other talk refused,
    against the verifier without it."""
    judged = {key: [f for f in fits if f.taken_with_speech is not None]
              for key, fits in found.items()}

    def row(taken: Any) -> dict[str, Any]:
        return {"wake_kept": _share(sum(map(taken, judged["wake"])), len(judged["wake"])),
                **{f"{key}_refused": _share(sum(not taken(f) for f in judged[key]),
                                            len(judged[key])) for key in ("near", "talk")}}

    tried = []
    for least in LEASTS:
        for share in SHARES:
            def bound(f: Fit, share: float = share, least: float = least) -> float:
                room = _room_bound(f)
                return room if f.other is None else max(least, min(room, share * f.other))
            tried.append({"share": share, "least": least,
                          **row(lambda f, bound=bound: f.fit <= bound(f))})
    others = sorted({round(f.other, 3) for fits in judged.values() for f in fits
                     if f.other is not None})
    return {"without": row(lambda f: f.taken), "product": row(lambda f: f.taken_with_speech),
            "tried": tried, "nearest_free_speech_fits": others}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("tune", "heldout"), default="tune")
    parser.add_argument("--per", type=int, default=8, help="test items per voice and condition")
    parser.add_argument("--near", type=int, default=3, help="takes of each near miss per voice")
    parser.add_argument("--voices", type=int, default=0, help="the part's first N voices")
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "personal-templates")
    parser.add_argument("--speech", action="store_true",
                        help="also enrol each voice's free speech, and say other talk")
    args = parser.parse_args()
    found = fits(args.part, args.per, args.near, args.voices, args.work, args.speech)
    print(json.dumps({"part": args.part, "per": args.per, "near_per_line": args.near,
                      "voices": args.voices, "speech": args.speech, **report(found)}, indent=2))


if __name__ == "__main__":
    main()
