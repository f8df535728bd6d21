"""False accepts with the person's profile in use: hours of speech without the wake phrase (many
voices reading varied text, near misses such as "hey jennifer", near misses followed by an
enrolled command, the enrolled commands said alone) and noise, through the real pipeline.

The audio is made chunk by chunk (RUN_S each, drawn with the chunk's own seed), each chunk heard
with one voice's profile in turn; every chunk's result is appended to a JSONL file as it ends,
so a run can be stopped at any time and resumed (`--hours` is the total wanted). Alone:
`python -m appliance_lab.bench.spoken.personal_fa --hours 6 --work DIR`; `--arm used` hears
each chunk with the voice's profile after personal_use's spells of use (run that first).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

from appliance.voice.audio.pcm import PIPELINE_RATE
from appliance_lab.bench.spoken.conditions import CONDITIONS, Condition
from appliance_lab.bench.spoken.corpus import Part, as_sentence, heard_in, load_part, noise_for
from appliance_lab.bench.spoken.false_accepts import noise_clip
from appliance_lab.bench.spoken.personal import (
    COMMON,
    ENROL,
    NAMES,
    TEST,
    Variant,
    enrolled_phrases,
    make_profile,
    said,
    used_path,
)
from appliance_lab.bench.spoken.runs import GAP_S, Progress, owner, run_clips
from appliance_lab.bench.spoken.voices import Voice
from appliance_lab.bench.stats import peak_rss_mb, poisson_rate

TEXT = Path(__file__).with_name("personal_nonwake.yaml")
RUN_S = 300.0
"""Audio per chunk (one pipeline run, one progress line, one line of the JSONL)."""
NOISE_SHARE = 0.1
"""Of the clips, this share is noise alone (pink, brown, babble)."""
SCENE = "messages"
VERSION = 1
FaArm = Literal["before", "after", "used"]
FA_CONDITIONS = CONDITIONS  # the corpus's rooms: clean, 20/10/5 dB, reverberant
FA_VARIANTS: tuple[Variant, ...] = (*ENROL["normal"][:3], *TEST["normal"])
"""The rates and pitches the voices read at (no slow speech: see personal-templates.md)."""


@cache
def lines(part: Part) -> tuple[tuple[str, str], ...]:
    """Everything said without the wake phrase, each with its kind: near (a near miss of the
    wake phrase), near+command (one followed by an enrolled command), command (an enrolled
    command said alone), talk."""
    text = yaml.safe_load(TEXT.read_text(encoding="utf-8"))
    near: list[str] = text["near_misses"]
    combos = [f"{n}, {(*COMMON, *NAMES['messages'])[i % 12]}" for i, n in enumerate(near[:8])]
    return (*(("near", n) for n in near), *(("near+command", c) for c in combos),
            *(("command", c) for c in enrolled_phrases()),
            *(("talk", t) for t in (*text["talk"], *load_part(part).non_wake)))


def _noise(seconds: float, seed: int, part: Part) -> bytes:
    return noise_clip(("pink", "brown", "babble")[seed % 3], seconds, seed, part)


def line_in(part: Part, voice: Voice, line: str, variant: Variant, room: Condition,
            seed: int) -> bytes:
    """`line` said by `voice` as `variant`, in `room` (with the noise drawn for the line)."""
    return heard_in(part, said(voice, as_sentence(line), variant), room,
                    noise_for(voice, line, room), seed)


def chunk_clips(part: Part, chunk: int,
                voices: int = 0) -> tuple[list[bytes], list[str], list[str]]:
    """Chunk `chunk`'s clips (about RUN_S of audio with the gaps), what each says, its kind."""
    rng = random.Random(f"personal-fa|{VERSION}|{part}|{chunk}")
    pool = list(load_part(part).voices)[: voices or None]
    said_lines = lines(part)
    clips: list[bytes] = []
    texts: list[str] = []
    kinds: list[str] = []
    total = 0.0
    while total < RUN_S:
        if rng.random() < NOISE_SHARE:
            clip = _noise(15.0, rng.randrange(1 << 30), part)
            text, kind = "(noise)", "noise"
        else:
            voice = rng.choice(pool)
            kind, line = rng.choice(said_lines)
            variant = rng.choice(FA_VARIANTS)
            condition = rng.choice(FA_CONDITIONS)
            clip = line_in(part, voice, line, variant, condition, rng.randrange(1 << 30))
            text = f"{voice.label} [{condition.name}]: {line}"
        clips.append(clip)
        texts.append(text)
        kinds.append(kind)
        total += len(clip) / 2 / PIPELINE_RATE + GAP_S
    return clips, texts, kinds


def enrolled_name(room: bool, speech: bool) -> str:
    return "+".join(name for name, on in (("speech", speech), ("room", room)) if on)


def results_path(workdir: Path, part: Part, arm: FaArm, enrolled: str = "") -> Path:
    """`enrolled`: what the profiles hold beyond the phrases ("speech+room"), in the name."""
    return workdir / f"fa-{part}-{arm}{'-' + enrolled if enrolled else ''}-v{VERSION}.jsonl"


def done_chunks(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def bench_false_accepts(part: Part, hours: float, voices: int, workdir: Path,
                        progress: Progress, arm: FaArm = "after", room: bool = False,
                        speech: bool = False) -> list[dict[str, Any]]:
    """Chunks until `hours` of audio are heard in all (the JSONL's earlier chunks count);
    with `arm` "after", chunk k is heard with voice k's profile (in turn over the voices),
    enrolled with free speech and the room's sound as `speech` and `room` say; with "used",
    with voice k's profile after personal_use's spells (enrolled with both)."""
    path = results_path(workdir, part, arm, profile_name(arm, room, speech))
    path.parent.mkdir(parents=True, exist_ok=True)
    chunks = done_chunks(path)
    heard_s = sum(c["audio_s"] for c in chunks)
    accepted = sum(len(c["accepted"]) for c in chunks)
    pool = list(load_part(part).voices)[: voices or None]
    started = time.monotonic()
    k = max((c["chunk"] for c in chunks), default=-1) + 1
    while heard_s < hours * 3600:
        voice = pool[k % len(pool)]
        profile = chunk_profile(workdir, part, voice, arm, room, speech)
        clips, texts, kinds = chunk_clips(part, k, voices)
        result = run_clips(SCENE, clips, "closed", pace=None, profile=profile)
        woke = [h for h in result.heard if h.get("via") == "wake"]
        line = {"chunk": k, "profile": voice.label if profile else None,
                "audio_s": round(result.audio_s, 2), "segments": len(result.heard),
                "clips": len(clips), "seconds_by_kind": _seconds_by_kind(clips, kinds),
                "accepted": [{"text": h["text"], "engine": h.get("engine"),
                              **_said_at(result, texts, kinds, h)} for h in woke]}
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
        heard_s += result.audio_s
        accepted += len(woke)
        k += 1
        minutes = (time.monotonic() - started) / 60
        progress(f"false accepts ({arm}): {heard_s / 3600:.2f} of {hours:g} h heard, "
                 f"{accepted} accepted ({minutes:.1f} min this run)")
    return done_chunks(path)


def chunk_profile(workdir: Path, part: Part, voice: Voice, arm: FaArm, room: bool,
                  speech: bool) -> Path | None:
    """The profile a chunk is heard with (None: none, as before enrolment)."""
    if arm == "before":
        return None
    if arm == "after":
        return make_profile(workdir, part, voice, "normal", room, speech)
    used = used_path(workdir, part, voice)
    if not used.exists():
        raise SystemExit(f"personal_fa: {voice.label} has no used profile: run "
                         f"personal_use --part {part} first")
    return used


def profile_name(arm: FaArm, room: bool, speech: bool) -> str:
    """What the profiles hold beyond the phrases, for the JSONL's name ("" when used)."""
    return "" if arm == "used" else enrolled_name(room, speech)


def _seconds_by_kind(clips: list[bytes], kinds: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for clip, kind in zip(clips, kinds, strict=True):
        out[kind] = round(out.get(kind, 0.0) + len(clip) / 2 / PIPELINE_RATE + GAP_S, 2)
    return out


def _said_at(result: Any, texts: list[str], kinds: list[str],
             heard: dict[str, Any]) -> dict[str, str | None]:
    i = owner(result.spans, heard["timings"]["audio_start_s"])
    return {"said": texts[i], "kind": kinds[i]} if i is not None else {"said": None,
                                                                      "kind": None}


def fa_summary(workdir: Path, part: Part, arm: FaArm = "after",
               enrolled: str = "") -> dict[str, Any]:
    """The false accepts in the JSONL so far: per hour with the exact Poisson 95 % interval."""
    chunks = done_chunks(results_path(workdir, part, arm, enrolled))
    seconds = sum(c["audio_s"] for c in chunks)
    accepted = [a for c in chunks for a in c["accepted"]]
    hours = seconds / 3600
    by_engine: dict[str, int] = {}
    for a in accepted:
        by_engine[str(a["engine"])] = by_engine.get(str(a["engine"]), 0) + 1
    by_kind: dict[str, dict[str, Any]] = {}
    for c in chunks:
        for kind, sec in c.get("seconds_by_kind", {}).items():
            by_kind.setdefault(kind, {"hours": 0.0, "false_accepts": 0})["hours"] += sec / 3600
    for a in accepted:
        by_kind.setdefault(str(a.get("kind")), {"hours": 0.0, "false_accepts": 0})[
            "false_accepts"] += 1
    for figures in by_kind.values():
        figures["hours"] = round(figures["hours"], 3)
        figures["per_hour_ci95"] = poisson_rate(figures["false_accepts"], figures["hours"])
    return {
        "arm": arm,
        "hours": round(hours, 3),
        "chunks": len(chunks),
        "segments": sum(c["segments"] for c in chunks),
        "clips": sum(c["clips"] for c in chunks),
        "profiles_used": sorted({str(c["profile"]) for c in chunks}),
        "false_accepts": len(accepted),
        "false_accepts_per_hour": round(len(accepted) / hours, 2) if hours else None,
        "per_hour_ci95": poisson_rate(len(accepted), hours),
        "by_engine": by_engine,
        "by_kind": dict(sorted(by_kind.items())),
        "accepted": accepted[:40],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hours", type=float, default=6.0)
    parser.add_argument("--part", choices=("heldout", "tune"), default="heldout")
    parser.add_argument("--voices", type=int, default=0)
    parser.add_argument("--arm", choices=("before", "after", "used"), default="after")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--room", action="store_true")
    parser.add_argument("--speech", action="store_true")
    args = parser.parse_args()

    def progress(line: str) -> None:
        print(f"bench voice-enrolled: {line}", file=sys.stderr, flush=True)

    part: Part = "tune" if args.part == "tune" else "heldout"
    arm: FaArm = args.arm
    bench_false_accepts(part, args.hours, args.voices, args.work, progress, arm, args.room,
                        args.speech)
    enrolled = profile_name(arm, args.room, args.speech)
    print(json.dumps({**fa_summary(args.work, part, arm, enrolled), "enrolled": enrolled,
                      "peak_rss_mb": peak_rss_mb()}))


if __name__ == "__main__":
    main()
