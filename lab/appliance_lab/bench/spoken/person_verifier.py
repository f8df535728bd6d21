"""A wake verifier trained on the person's own profile, as openWakeWord trains its custom
verifier (issue 44, build item 5), weighed against the wake spotter alone: a logistic
regression per voice over the spotter's windows, on its hidden units or on the whole window.

Trained from the profile only: the positives are each wake take's best window and its
neighbours (clean, in the take's noisy copy and in the room); the negatives every window of
the person's free speech and command takes, of the room, and of their wake takes cut short
(45 to 75 %, alone and followed by a command take: "hey june" in their own voice). Tested on
the benchmark's items (the wake phrase and a command) and on near misses and everyday talk the
voice says in the false-accept run's rooms. Tuning voices only:
`python -m appliance_lab.bench.spoken.person_verifier > out.json`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from appliance.voice.hearing.profile import TakeKind, VoiceProfile
from appliance.voice.hearing.stt_whisper import PREROLL_S, RATE
from appliance.voice.hearing.take_audio import with_noise
from appliance.voice.hearing.templates import speech
from appliance.voice.hearing.wake_spotter import (
    ENDS,
    FIRST,
    HEARD_BYTES,
    WakeSpotter,
    speech_embedding,
    windows,
)
from appliance_lab.bench.spoken.corpus import WAKE, load_part
from appliance_lab.bench.spoken.personal import (
    ConditionName,
    item_audio,
    make_profile,
    sample_items,
)
from appliance_lab.bench.spoken.personal_bench import default_workdir
from appliance_lab.bench.spoken.personal_fa import FA_CONDITIONS, FA_VARIANTS, line_in, lines
from appliance_lab.bench.spoken.voices import Voice
from appliance_lab.bench.stats import level_accepting, share

Floats = npt.NDArray[np.float64]

CONDITIONS: tuple[ConditionName, ...] = ("clean", "snr10", "snr5", "reverb")
"""Slow speech left out: the spotter does not know the slow person's wake phrase at all."""
PREROLL = bytes(int(PREROLL_S * RATE) * 2)
"""The pipeline's pre-roll before a segment, before every clip."""
CUTS = (0.45, 0.55, 0.65, 0.75)
"""How much of a wake take its cut-short negatives keep."""
NEAR_ACCEPTED = (0.02, 0.05, 0.1)
"""The shares of near misses accepted at which the scores are compared."""
NEAR_PER_VOICE, TALK_PER_VOICE = 24, 8
SCORES = ("spotter", "hidden", "window")


@dataclass(frozen=True)
class Scored:
    """One test utterance: the person's wake phrase and a command ("own"), a near miss
    ("near") or talk; the spotter's log-odds and the two verifiers'."""

    kind: str
    voice: str
    condition: str
    line: str
    spotter: float
    hidden: float
    window: float


@dataclass(frozen=True)
class Windows:
    """An utterance's scored spotter windows: standardized, the hidden units, the log-odds."""

    standard: Floats
    hidden: Floats
    logits: Floats


def spotter_windows(spotter: WakeSpotter, pcm: bytes) -> Windows:
    """The windows `WakeSpotter.score` reads, with what its network makes of each."""
    heard = pcm[:HEARD_BYTES]
    heard += bytes(HEARD_BYTES - len(heard))
    embedder = speech_embedding()
    embedded = embedder.embed_windows(embedder.windows(heard, FIRST, ENDS[-1]))
    standard = (windows(embedded, FIRST) - spotter.mean) / spotter.scale
    hidden = np.maximum(standard @ spotter.hidden + spotter.hidden_bias, 0)
    return Windows(standard.astype(np.float64), hidden.astype(np.float64),
                   np.asarray(hidden @ spotter.out + spotter.out_bias, dtype=np.float64))


def fit_logistic(x: Floats, y: Floats, l2: float, steps: int = 300) -> tuple[Floats, float]:
    """Weights and bias of an L2-regularised logistic regression, the classes weighed equally
    (Adam on the mean loss)."""
    w, b = np.zeros(x.shape[1]), 0.0
    m, v, mb, vb = np.zeros_like(w), np.zeros_like(w), 0.0, 0.0
    weight = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    for t in range(1, steps + 1):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = x.T @ (weight * (p - y)) / len(y) + l2 * w
        gb = float(np.sum(weight * (p - y)) / len(y))
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        mb, vb = 0.9 * mb + 0.1 * gb, 0.999 * vb + 0.001 * gb * gb
        w -= 0.05 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
        b -= 0.05 * (mb / (1 - 0.9 ** t)) / (float(np.sqrt(vb / (1 - 0.999 ** t))) + 1e-8)
    return w, b


def training_windows(spotter: WakeSpotter, profile: VoiceProfile,
                     seed: str) -> tuple[list[Windows], list[Windows]]:
    """The positives (each wake take's best window and its neighbours, clean, noisy and in the
    room) and the negatives (see the module's docstring), each as spotter windows."""
    takes = profile.takes()
    room = profile.room()
    wake = [profile.audio(t.id) for t in takes if t.kind == TakeKind.WAKE]
    commands = [profile.audio(t.id) for t in takes if t.kind == TakeKind.COMMAND]
    other = [*commands, *(profile.audio(t.id) for t in takes if t.kind == TakeKind.SPEECH)]
    positives: list[Windows] = []
    for take in wake:
        for version in (take, with_noise(take), with_noise(take, room=room)):
            found = spotter_windows(spotter, PREROLL + version)
            best = int(np.argmax(found.logits))
            near = slice(max(0, best - 1), best + 2)
            positives.append(Windows(found.standard[near], found.hidden[near],
                                     found.logits[near]))
    negatives = [spotter_windows(spotter, PREROLL + v)
                 for take in other for v in (take, with_noise(take, room=room))]
    if room is not None:
        two_s = 2 * RATE * 2
        negatives += [spotter_windows(spotter, room[s:s + two_s])
                      for s in range(0, len(room) - two_s, two_s // 2)]
    rng = random.Random(seed)
    for take in wake:
        said_only = speech(take)
        for share_kept in CUTS:
            cut = said_only[: int(len(said_only) * share_kept) // 2 * 2]
            for heard in (cut, cut + speech(rng.choice(commands))):
                negatives += [spotter_windows(spotter, PREROLL + v)
                              for v in (heard, with_noise(heard, room=room))]
    return positives, negatives


def verifiers(positives: list[Windows],
              negatives: list[Windows]) -> dict[str, Callable[[Windows], float]]:
    """The two verifiers trained on these windows: each scores an utterance by its best window."""
    y = np.r_[np.ones(sum(len(p.logits) for p in positives)),
              np.zeros(sum(len(n.logits) for n in negatives))]
    every = [*positives, *negatives]
    hidden_w, hidden_b = fit_logistic(np.concatenate([w.hidden for w in every]), y, 1e-3)
    window_w, window_b = fit_logistic(np.concatenate([w.standard for w in every]), y, 1e-2)
    return {"hidden": lambda w: float(np.max(w.hidden @ hidden_w + hidden_b)),
            "window": lambda w: float(np.max(w.standard @ window_w + window_b))}


def measure(workdir: Path, per: int) -> list[Scored]:
    """Each tuning voice's verifiers, trained on its whole enrolment, scoring its test items
    (`per` a condition), its near misses and its talk."""
    spotter = WakeSpotter.load(WAKE)
    if spotter is None:
        raise SystemExit("person_verifier: no wake spotter for the wake phrase")
    items = sample_items("tune", per, CONDITIONS)
    out: list[Scored] = []
    for voice in load_part("tune").voices:
        profile = VoiceProfile(make_profile(workdir, "tune", voice, "normal", True, True))
        scorers = verifiers(*training_windows(spotter, profile, voice.label))
        said_by = [("own", i.condition, i.phrase, item_audio(i)) for i in items if i.voice == voice]
        out += [_scored(spotter, scorers, voice.label, *utterance)
                for utterance in [*said_by, *_near_and_talk(voice)]]
        print(f"person_verifier: {voice.label} done", file=sys.stderr, flush=True)
    return out


def _near_and_talk(voice: Voice) -> list[tuple[str, str, str, bytes]]:
    """The near misses and talk the voice says, each in a room of the false-accept run."""
    near = [line for kind, line in lines("tune") if kind in ("near", "near+command")]
    talk = [line for kind, line in lines("tune") if kind == "talk"]
    rng = random.Random(f"person-verifier|{voice.label}")
    out = []
    for kind, pool, count in (("near", near, NEAR_PER_VOICE), ("talk", talk, TALK_PER_VOICE)):
        for _ in range(count):
            line, room = rng.choice(pool), rng.choice(FA_CONDITIONS)
            pcm = line_in("tune", voice, line, rng.choice(FA_VARIANTS), room,
                          rng.randrange(1 << 30))
            out.append((kind, room.name, line, pcm))
    return out


def _scored(spotter: WakeSpotter, scorers: dict[str, Callable[[Windows], float]], voice: str,
            kind: str, condition: str, line: str, pcm: bytes) -> Scored:
    found = spotter_windows(spotter, PREROLL + pcm)
    return Scored(kind, voice, condition, line, float(np.max(found.logits)),
                  scorers["hidden"](found), scorers["window"](found))


def report(rows: list[Scored]) -> dict[str, Any]:
    """For each score, at the level that accepts each share of near misses: the person's wake
    phrases kept (all, and in noise) and their talk accepted."""
    own = [r for r in rows if r.kind == "own"]
    noisy = [r for r in own if r.condition in ("snr10", "snr5")]
    near = [r for r in rows if r.kind == "near"]
    talk = [r for r in rows if r.kind == "talk"]
    out: dict[str, Any] = {"n": {"own": len(own), "own_in_noise": len(noisy),
                                 "near": len(near), "talk": len(talk)}}
    for name in SCORES:
        by_share = []
        for accepted in NEAR_ACCEPTED:
            level = level_accepting([getattr(r, name) for r in near], accepted)
            by_share.append({"near_accepted": share(_above(near, name, level), len(near)),
                             "level": round(level, 2),
                             "own_kept": share(_above(own, name, level), len(own)),
                             "own_in_noise_kept": share(_above(noisy, name, level),
                                                        len(noisy)),
                             "talk_accepted": _above(talk, name, level)})
        out[name] = by_share
    return out


def _above(rows: list[Scored], score: str, level: float) -> int:
    return sum(getattr(r, score) > level for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--per", type=int, default=4)
    parser.add_argument("--work", type=Path, default=default_workdir())
    args = parser.parse_args()
    rows = measure(args.work, args.per)
    json.dump({"what": "person_verifier, tuning voices", "report": report(rows),
               "rows": [asdict(r) for r in rows]}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
