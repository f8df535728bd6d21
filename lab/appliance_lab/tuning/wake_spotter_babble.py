"""Whether the wake spotter hears the wake phrase in babble better when trained on more of it
(issue 44): the recipe of wake_spotter_train.py against the same recipe plus every training
voice again in a wider babble, each weighed on tuning voices it was not trained on.

The corpus's babble is four of the part's own espeak-ng voices; the spotter saw it under a
third of its noisy clips. `features` makes the wider babble's clips: each tuning and extra voice
saying its wake sentences and its speech without the wake phrase (near misses included) under
talk of five extra voices not its own, at 10 and 5 dB. `compare` trains both recipes, with
each seed and as one network of all the seeds merged, on three quarters of the tuning voices
(and every extra voice) and scores the left-out quarter's own clips (wake_rule_tune.py's, in the
corpus's conditions and babble), four times over; with `--levels`, it also reads the levels the
merged network of the wider babble needs to let through the same shares of the tuning voices'
other speech as the product's spotter (seed 0 as trained) does at `SPOTTER_VETO` and
`TAKES_SPOTTER_FLOOR`, and `SPOTTER_SURE` on the straight line through those two (no speech
without the wake phrase reaches it). `write` trains that merged network on every voice.
    python -m appliance_lab.tuning.wake_spotter_babble features --shard 0/2 > b0.npz
    python -m appliance_lab.tuning.wake_spotter_babble compare t0.npz t1.npz a.npz \
        --extra x0.npz x1.npz n0.npz n1.npz --babble b0.npz b1.npz --seeds 0,1,2,3,4 [--levels]
    python -m appliance_lab.tuning.wake_spotter_babble write t0.npz t1.npz a.npz \
        --extra x0.npz x1.npz n0.npz n1.npz --babble b0.npz b1.npz --seeds 0,1,2,3,4 --to S.npz
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from appliance.voice.audio.pcm import PIPELINE_RATE
from appliance.voice.hearing.closed_whisper import SPOTTER_SURE, SPOTTER_VETO
from appliance.voice.hearing.personal import TAKES_SPOTTER_FLOOR
from appliance.voice.hearing.wake_spotter import WakeSpotter
from appliance_lab.bench.spoken.conditions import (
    CONDITIONS,
    babble_at,
    make_babble,
    mix_at_snr,
    noise_seconds,
)
from appliance_lab.bench.spoken.corpus import (
    as_sentence,
    cached_pcm,
    clean_speech,
    load_part,
    noise_for,
    with_wake,
)
from appliance_lab.bench.spoken.voices import Voice
from appliance_lab.bench.stats import level_accepting, share
from appliance_lab.tuning.wake_clips import NEAR_MISSES, VAD_TAIL, non_wake_lines, tuning_sentences
from appliance_lab.tuning.wake_rule_tune import Clip
from appliance_lab.tuning.wake_spotter_train import (
    MORE_NEAR_MISSES,
    extra_voices,
    features,
    load_features,
    scored,
    train,
    training_windows,
)

SNRS = (10.0, 5.0)
"""The wider babble's levels: the bench's two noisy conditions."""
TALKERS, BABBLES = 5, 4
FOLDS = 4
RECIPES = ("as trained", "with the wider babble")

Floats = npt.NDArray[np.float32]


@cache
def wide_babbles() -> tuple[tuple[frozenset[str], np.ndarray], ...]:
    """BABBLES babbles of TALKERS extra espeak-ng voices each (none in two), every talker
    saying the tuning part's lines without the wake phrase in its own order."""
    talkers = [v for v, shift in extra_voices() if shift is None]
    lines = [*load_part("tune").non_wake, *MORE_NEAR_MISSES[:8]]
    gap = bytes(int(0.15 * PIPELINE_RATE) * 2)
    out = []
    for b in range(BABBLES):
        group = talkers[b * TALKERS:(b + 1) * TALKERS]
        streams = []
        for i, voice in enumerate(group):
            order = lines[i:] + lines[:i]
            streams.append(b"".join(clean_speech(voice, as_sentence(line)) + gap
                                    for line in order))
        out.append((frozenset(v.label for v in group), make_babble(streams)))
    return tuple(out)


def _in_babble(voice: Voice, text: str, snr: float, n: int) -> bytes:
    doc = [voice.model_dump(), text, snr, n, "wide-babble"]
    key = hashlib.sha256(json.dumps(doc).encode()).hexdigest()[:24]

    def make() -> bytes:
        speech = clean_speech(voice, text)
        others = [b for talkers, b in wide_babbles() if voice.label not in talkers]
        sound = others[n % len(others)]
        return mix_at_snr(speech, babble_at(sound, noise_seconds(speech), int(key[:8], 16)), snr)

    return cached_pcm(key, make)


def babble_clips() -> Iterator[Clip]:
    """Every tuning voice (12 wake sentences, its lines without the wake phrase) and every
    extra voice without a shift (8 wake sentences, 12 lines, every near miss), in the wider
    babble at each of SNRS."""
    sentences = tuning_sentences()
    said: list[tuple[Voice, bool, str]] = []
    for n, voice in enumerate(load_part("tune").voices):
        rng = random.Random(100 + n)
        said += [(voice, True, s) for s in rng.sample(sentences, 12)]
        said += [(voice, False, line) for line in non_wake_lines()]
    lines = [*load_part("tune").non_wake, *NEAR_MISSES]
    for n, (voice, shift) in enumerate(extra_voices()):
        if shift is not None:
            continue
        rng = random.Random(200 + n)
        said += [(voice, True, s) for s in rng.sample(sentences, 8)]
        said += [(voice, False, line) for line in rng.sample(lines, 12)]
        said += [(voice, False, line) for line in (*NEAR_MISSES, *MORE_NEAR_MISSES)]
    for n, (voice, wake, words) in enumerate(said):
        text = with_wake(words) if wake else as_sentence(words)
        for snr in SNRS:
            yield (wake, voice.label, f"babble{int(snr)}", "", words,
                   _in_babble(voice, text, snr, n) + VAD_TAIL)


def read_at_levels(score: Floats, wake: npt.NDArray[np.bool_]) -> dict[str, dict[str, Any]]:
    """Wake phrases and other speech at the `spotter` rule's two levels."""
    other = ~wake
    return {"wake sure": share(int((score[wake] >= SPOTTER_SURE).sum()), int(wake.sum())),
            "wake vetoed": share(int((score[wake] < SPOTTER_VETO).sum()), int(wake.sum())),
            "other sure": share(int((score[other] >= SPOTTER_SURE).sum()), int(other.sum())),
            "other not vetoed": share(int((score[other] >= SPOTTER_VETO).sum()), int(other.sum()))}


def kept_at(score: Floats, among: npt.NDArray[np.bool_], near: npt.NDArray[np.bool_],
             accepted: float) -> dict[str, Any]:
    """Wake phrases `among` above the level that takes `accepted` of the near misses."""
    level = level_accepting([float(s) for s in score[near]], accepted)
    return {**share(int((score[among] > level).sum()), int(among.sum())),
            "level": round(level, 2)}


def _heard_through(voice: Voice, said: str, cond: str) -> str:
    """The condition, and in noise which noise: "snr10 babble"."""
    named = next(c for c in CONDITIONS if c.name == cond)
    # wake_rule_tune.clips names a lone wake phrase's words "", its noise "hey juniper"'s.
    noise = noise_for(voice, said or "hey juniper", named)
    return f"{cond} {noise}" if noise else cond


def merged(spotters: list[WakeSpotter]) -> WakeSpotter:
    """One network whose log-odds are the mean of `spotters`' (trained on the same data, so the
    same scaling): their hidden units side by side, each output weight shared out."""
    k = len(spotters)
    return WakeSpotter(spotters[0].phrase, spotters[0].mean, spotters[0].scale,
                       np.concatenate([s.hidden for s in spotters], axis=1),
                       np.concatenate([s.hidden_bias for s in spotters]),
                       (np.concatenate([s.out for s in spotters]) / k).astype(np.float32),
                       float(np.mean([s.out_bias for s in spotters])))


def _report(score: Floats, wake: npt.NDArray[np.bool_], conds: npt.NDArray[np.str_],
            near: npt.NDArray[np.bool_]) -> dict[str, Any]:
    """At the rule's levels, in all and by condition; then at shares of near misses."""
    out: dict[str, Any] = {"all": read_at_levels(score, wake)}
    for cond in sorted(set(conds)):
        out[str(cond)] = read_at_levels(score[conds == cond], wake[conds == cond])
    for accepted in (0.02, 0.05, 0.10):
        out[f"kept where {accepted:.0%} of near misses pass"] = {
            name: kept_at(score, wake & (np.char.find(conds, among) >= 0), near, accepted)
            for name, among in (("all", ""), ("in noise", "snr"), ("in babble", "babble"))}
    return out


def reread_levels(product: Floats, candidate: Floats, other: npt.NDArray[np.bool_],
                  wake: npt.NDArray[np.bool_]) -> dict[str, Any]:
    """The candidate's levels letting through the same `other` clips as the product's
    spotter at `SPOTTER_VETO` and `TAKES_SPOTTER_FLOOR`; `SPOTTER_SURE` on the line through
    them; beside each, the wake phrases kept by both."""
    read: dict[str, tuple[float, float]] = {}  # the product's level, the candidate's
    ranked = np.sort(candidate[other])[::-1]
    for name, level in (("SPOTTER_VETO", SPOTTER_VETO),
                        ("TAKES_SPOTTER_FLOOR", TAKES_SPOTTER_FLOOR)):
        passed = int((product[other] >= level).sum())
        # Halfway between the last clip let through and the first not.
        read[name] = (level, float(ranked[passed - 1] + ranked[passed]) / 2)
    (low, low_new), (high, high_new) = read["SPOTTER_VETO"], read["TAKES_SPOTTER_FLOOR"]
    read["SPOTTER_SURE"] = (SPOTTER_SURE, low_new + (high_new - low_new) / (high - low)
                            * (SPOTTER_SURE - low))
    levels: dict[str, Any] = {name: {"product": old, "candidate": round(new, 2)}
                              for name, (old, new) in read.items()}
    for entry in levels.values():
        for who, score in (("product", product), ("candidate", candidate)):
            entry[f"{who}: wake kept"] = share(int((score[wake] >= entry[who]).sum()),
                                               int(wake.sum()))
            entry[f"{who}: other passed"] = share(int((score[other] >= entry[who]).sum()),
                                                  int(other.sum()))
    levels["highest other"] = {"product": round(float(product[other].max()), 2),
                               "candidate": round(float(candidate[other].max()), 2)}
    return levels


@dataclass(frozen=True)
class Clips:
    """One group's features (`load_features`), whether each clip holds the wake phrase, and
    its voice (a shifted extra voice's as the voice it was shifted from)."""

    x: Floats
    lengths: npt.NDArray[np.int64]
    wake: npt.NDArray[np.bool_]
    voices: npt.NDArray[np.str_]
    meta: list[dict[str, Any]]


def load_clips(paths: list[str]) -> Clips:
    x, lengths, meta = load_features(paths)
    return Clips(x, lengths, np.array([m["wake"] for m in meta]),
                 np.array([m["voice"].split("~")[0] for m in meta]), meta)


def write(paths: list[str], extra_paths: list[str], babble_paths: list[str], seeds: list[int],
          to: Path) -> None:
    """The wider babble's recipe, one network per seed on every voice, merged, saved to `to`."""
    groups = [load_clips(group) for group in (paths, extra_paths, babble_paths)]
    windows = training_windows(np.concatenate([g.x for g in groups]),
                               np.concatenate([g.lengths for g in groups]),
                               np.concatenate([g.wake for g in groups]))
    spotters = []
    for s in seeds:
        spotters.append(train(*windows, seed=s))
        print(f"seed {s} trained", file=sys.stderr, flush=True)
    (merged(spotters) if len(spotters) > 1 else spotters[0]).save(to)
    print(f"wrote {to}", file=sys.stderr)


def compare(paths: list[str], extra_paths: list[str], babble_paths: list[str],
            seeds: list[int], levels: bool = False, keep: Path | None = None) -> None:
    """The report on stdout; `keep`: every left-out clip's scores, by recipe, and its meta."""
    tune, extra, babble = (load_clips(group) for group in (paths, extra_paths, babble_paths))
    x, lengths, wake, voices, meta = tune.x, tune.lengths, tune.wake, tune.voices, tune.meta
    ex, elengths, ewake, evoices = extra.x, extra.lengths, extra.wake, extra.voices
    bx, blengths, bwake, bvoices = babble.x, babble.lengths, babble.wake, babble.voices
    tuning = sorted(set(voices))
    names = [f"{recipe}, {which}" for recipe in RECIPES
             for which in [f"seed {s}" for s in seeds] + ["merged"] * (len(seeds) > 1)]
    scores = {name: np.zeros(len(meta), np.float32) for name in names}
    for fold in range(FOLDS):
        out = tuning[fold::FOLDS]
        rest = ~np.isin(voices, out)
        other = ~np.isin(evoices, out)
        brest = ~np.isin(bvoices, out)
        base = (np.r_[x[rest], ex[other]], np.r_[lengths[rest], elengths[other]],
                np.r_[wake[rest], ewake[other]])
        more = (np.r_[base[0], bx[brest]], np.r_[base[1], blengths[brest]],
                np.r_[base[2], bwake[brest]])
        for recipe, data in zip(RECIPES, (base, more), strict=True):
            windows = training_windows(*data)
            spotters = [train(*windows, seed=s) for s in seeds]
            for s, spotter in zip(seeds, spotters, strict=True):
                scores[f"{recipe}, seed {s}"][~rest] = scored(spotter, x[~rest], lengths[~rest])
            if len(spotters) > 1:
                scores[f"{recipe}, merged"][~rest] = scored(merged(spotters), x[~rest],
                                                            lengths[~rest])
        print(f"fold {fold + 1} of {FOLDS} left out: {', '.join(out)}", file=sys.stderr,
              flush=True)
    by_label = {v.label: v for v in load_part("tune").voices}
    conds = np.array([_heard_through(by_label[m["voice"]], m["said"], m["cond"]) for m in meta])
    near = np.array([m["said"] in NEAR_MISSES for m in meta]) & ~wake
    if keep is not None:
        np.savez(keep, names=np.array(list(scores)), scores=np.stack(list(scores.values())),
                 meta=np.array([json.dumps(m) for m in meta]))
    reread = ({"levels re-read": reread_levels(scores[f"{RECIPES[0]}, seed 0"],
                                               scores[f"{RECIPES[1]}, merged"], ~wake, wake)}
              if levels else {})
    print(json.dumps({"n": {"wake": int(wake.sum()), "other": int((~wake).sum()),
                            "near misses": int(near.sum())}, **reread,
                      **{name: _report(score, wake, conds, near)
                         for name, score in scores.items()}}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("features")
    f.add_argument("--shard", default="0/1")
    for name in ("compare", "write"):
        c = sub.add_parser(name)
        c.add_argument("paths", nargs="+")
        c.add_argument("--extra", nargs="+", required=True)
        c.add_argument("--babble", nargs="+", required=True)
        c.add_argument("--seeds", default="0",
                       help="comma-separated; more than one adds (or writes) a merged network")
        if name == "compare":
            c.add_argument("--levels", action="store_true",
                           help="re-read the rule's levels for the merged wider babble (seed 0 "
                                "and at least one more)")
            c.add_argument("--scores", type=Path, help="keep every left-out clip's scores here")
        else:
            c.add_argument("--to", type=Path, required=True)
    args = ap.parse_args()
    seeds = [int(v) for v in args.seeds.split(",")] if args.cmd != "features" else []
    if args.cmd == "features":
        shard, shards = (int(v) for v in args.shard.split("/"))
        features(babble_clips(), shard, shards, "babble")
    elif args.cmd == "write":
        write(args.paths, args.extra, args.babble, seeds, args.to)
    else:
        if args.levels and (0 not in seeds or len(seeds) < 2):
            sys.exit("--levels needs seed 0 and at least one more (--seeds 0,1,...)")
        compare(args.paths, args.extra, args.babble, seeds, args.levels, args.scores)


if __name__ == "__main__":
    main()
