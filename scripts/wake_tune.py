"""Tuning figures for the wake decision (issue 15), on the spoken corpus's TUNING part only.

Each clip (tune voices, clean and 10 dB, with and without the wake phrase, and near misses of
the tuning set's own) is encoded once, then heard three ways: the greedy decode under the fixed
prompt (today's decision), a greedy decode with no prompt, and Whisper's forced log-probability
of "Hey Juniper, <the rest>" against that of the unprompted words (WhisperScorer.token_logprobs).
The rules are swept offline over those features. Prints one JSON object; --dump writes the
features per clip. Usage:
    python scripts/wake_tune.py [--per 12] [--dump features.jsonl]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from appliance.bench.spoken.conditions import CONDITIONS
from appliance.bench.spoken.corpus import (
    _noise_for,
    audio,
    items,
    load_part,
    non_wake_audio,
    sample,
)
from appliance.voice.closed_whisper import ClosedWhisperRecognizer
from appliance.voice.commands import engines
from appliance.voice.stt_whisper import NO_SPEECH_MAX, RATE, TRAILING_SILENCE_S, trim_silence

CONDS = [c for c in CONDITIONS if c.name in ("clean", "snr10")]
NEAR_MISSES = (
    # The tuning part's own near misses are few; these are more of the same kind (a name like
    # the wake word after "hey", the wake word inside a sentence), written for tuning.
    "hey junior, where are my keys",
    "hey jennie, come and look at this",
    "hey julia, the bus is here",
    "hey jasper, sit down",
    "hi juno, how are you",
    "the juniper berries are ripe",
    "okay, juniper is a lovely name",
    "hey judy, pass the milk",
    "hey you, pick that up",
    "we cut the juniper hedge",
    "hey genie, make a wish",
    "hey jenny, click save",
)
_WORD = re.compile(r"[\w']+")


def _after_words(text: str, n: int) -> str:
    """`text` from its (n+1)-th word on, as written."""
    found = list(_WORD.finditer(text))
    if n >= len(found):
        return ""
    return text[found[n].start():]


def features(rec: ClosedWhisperRecognizer, pcm: bytes) -> dict[str, Any]:
    scorer = rec.scorer
    x = trim_silence(np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0)
    encoded, frames = scorer.encode(x)
    fixed, _ftok, flp, fns = scorer.greedy(encoded, rec._prompt)
    plain, ptok, plp, pns = scorer.greedy(encoded, rec._plain)
    fscore, _ = rec.gate.match(fixed)
    pscore, pend = rec.gate.match(plain)
    out: dict[str, Any] = {"fixed": fixed, "fixed_score": fscore, "fixed_ns": fns,
                           "fixed_lp": flp, "plain": plain, "plain_score": pscore,
                           "plain_ns": pns, "plain_lp": plp}
    if not ptok:
        out["margin"] = None
        return out
    n = pend if pscore >= rec.gate.threshold else len(rec.gate.phrase_words)
    rest = _after_words(plain, n).lstrip(" ,.!?")
    forced = "Hey Juniper" + (", " + rest if rest else ".")
    ftoks = scorer.tokenizer.encode(" " + forced)
    wake_n = len(scorer.tokenizer.encode(" Hey Juniper"))
    lps = scorer.token_logprobs(encoded, frames, rec._plain, [ptok, ftoks])
    out["forced"] = forced
    out["margin"] = sum(lps[1]) - sum(lps[0])
    out["wake_mean"] = sum(lps[1][:wake_n]) / wake_n
    out["wake_min"] = min(lps[1][:wake_n])
    return out


def clips(per: int) -> list[tuple[bool, str, bytes]]:
    """(says the wake phrase, label, 16 kHz PCM16 as the VAD hands it over)."""
    tail = bytes(int(TRAILING_SILENCE_S * RATE) * 2)
    out: list[tuple[bool, str, bytes]] = []
    for item in sample(items("tune", CONDS), per):
        out.append((True, f"{item.voice.label}/{item.condition.name}/{item.spoken}",
                    audio(item) + tail))
    part = load_part("tune")
    commands = [s for fam in part.sentences.values() for ss in fam.values() for s in ss][::8]
    lines = [*part.non_wake, *NEAR_MISSES, *commands]
    for voice in part.voices:
        for line in lines:
            for cond in CONDS:
                noise = _noise_for(voice, line, cond)
                pcm = non_wake_audio("tune", voice, line, cond, noise)
                out.append((False, f"{voice.label}/{cond.name}/{line}", pcm + tail))
    return out


Rule = Callable[[dict[str, Any]], bool]


def _speech(f: dict[str, Any], key: str) -> bool:
    return bool(f[key]) and f[f"{key}_ns"] <= NO_SPEECH_MAX


def _fixed(t: float) -> Rule:
    return lambda f: _speech(f, "fixed") and f["fixed_score"] >= t


def _plain(t: float) -> Rule:
    return lambda f: _speech(f, "plain") and f["plain_score"] >= t


def _margin(m: float) -> Rule:
    return lambda f: _speech(f, "plain") and f["margin"] is not None and f["margin"] >= m


def _wake_mean(w: float) -> Rule:
    return lambda f: f.get("wake_mean") is not None and f["wake_mean"] >= w


def _wake_vs_plain(d: float) -> Rule:
    return lambda f: f.get("wake_mean") is not None and f["wake_mean"] - f["plain_lp"] >= d


def _both(a: Rule, b: Rule) -> Rule:
    return lambda f: a(f) and b(f)


def rules() -> dict[str, Rule]:
    out: dict[str, Rule] = {"fixed>=72 (today)": _fixed(72)}
    for t in (72, 80, 85, 90, 95):
        out[f"plain>={t}"] = _plain(t)
        out[f"fixed>={t}&plain>={t}"] = _both(_fixed(t), _plain(t))
    for m in (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0):
        out[f"fixed>=72&margin>=-{m}"] = _both(_fixed(72), _margin(-m))
        out[f"margin>=-{m}"] = _margin(-m)
    for d in (-2.0, -2.25, -2.5):  # the one chosen: closed_whisper.WAKE_MARGIN
        out[f"fixed>=72&wake_mean-plain_lp>={d}"] = _both(_fixed(72), _wake_vs_plain(d))
    for w in (-2.0, -2.5, -2.9, -3.0, -3.5):
        out[f"fixed>=72&wake_mean>={w}"] = _both(_fixed(72), _wake_mean(w))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per", type=int, default=12)
    parser.add_argument("--dump")
    parser.add_argument("--load")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    if args.load:
        with open(args.load, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
    else:
        whisper = engines("whisper", progress=False).whisper
        assert whisper is not None
        rec = ClosedWhisperRecognizer(whisper)
        chosen = clips(args.per)
        for i, (says_wake, label, pcm) in enumerate(chosen, 1):
            rows.append({"wake": says_wake, "label": label, **features(rec, pcm)})
            if i % 50 == 0:
                print(f"{i}/{len(chosen)}", file=sys.stderr, flush=True)
        if args.dump:
            with open(args.dump, "w", encoding="utf-8") as out:
                for row in rows:
                    out.write(json.dumps(row) + "\n")
    wakes = [r for r in rows if r["wake"]]
    other = [r for r in rows if not r["wake"]]
    report: dict[str, Any] = {"wake_items": len(wakes), "non_wake_items": len(other)}
    for name, rule in rules().items():
        fr = [r["label"] for r in wakes if not rule(r)]
        fa = [r["label"] for r in other if rule(r)]
        report[name] = {"false_rejects": len(fr), "false_accepts": len(fa),
                        "fr_sample": fr[:4], "fa_sample": fa[:4]}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
