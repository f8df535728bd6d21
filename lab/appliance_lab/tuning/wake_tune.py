"""Tuning figures for the wake decision (issue 15), on the spoken corpus's TUNING part only.

Each clip (tune voices, clean, 10 dB, 5 dB and reverb, with and without the wake phrase, and
near misses of the tuning set's own) is encoded once, then heard: the greedy decode under the
fixed prompt (the first pass), a greedy decode with no prompt, and Whisper's forced token
log-probabilities (no prompt) of "Hey Juniper", of names in its place (COMPETITORS), of "Hey
Juniper, <the unprompted rest>" and of the unprompted words (WhisperScorer.token_logprobs).
The rules are swept offline over those features. Prints one JSON object; --dump writes the
features per clip, --load sweeps a dump again without decoding. Usage (from the repository
root, so that this checkout's `appliance` is the one imported):
    python -m appliance_lab.tuning.wake_tune [--per 8] [--conds clean,snr10] [--dump f.jsonl]
    python -m appliance_lab.tuning.wake_tune --load f.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
from collections.abc import Callable
from typing import Any

from appliance.voice.commands import engines
from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
from appliance.voice.hearing.stt_whisper import NO_SPEECH_MAX, speech_of
from appliance_lab.bench.spoken.conditions import CONDITIONS, Condition
from appliance_lab.tuning.wake_clips import COND_NAMES, non_wake_clips, non_wake_lines, wake_clips

_WORD = re.compile(r"[\w']+")


def _after_words(text: str, n: int) -> str:
    """`text` from its (n+1)-th word on, as written."""
    found = list(_WORD.finditer(text))
    if n >= len(found):
        return ""
    return text[found[n].start():]


WAKE_SPELLINGS = (" Hey Juniper", " Hey, Juniper")
COMPETITORS = (
    # Other words Whisper could write for the same span: names like "juniper" after "hey" and
    # plain openings. Scored forced with no prompt, like the wake phrase.
    " Hey Jennifer", " Hey Junior", " Hey Jenna", " Hey June", " Hey Julie", " Hey Jupiter",
    " Hey you", " Okay", " Okay, Juniper",
)
ALIGN_BATCH = 4
"""Sequences per align call: CTranslate2's align slows far more than linearly with the batch
(21 at once took 20 times as long as 3)."""


def features(rec: ClosedWhisperRecognizer, pcm: bytes) -> dict[str, Any]:
    scorer = rec.scorer
    tok = scorer.tokenizer
    x = speech_of(pcm)
    encoded, frames = scorer.encode(x)
    fixed, _ftok, flp, fns = scorer.greedy(encoded, rec.fixed_prompt)
    plain, ptok, plp, pns = scorer.greedy(encoded, rec.plain_prompt)
    fscore, _ = rec.gate.match(fixed)
    pscore, pend = rec.gate.match(plain)
    out: dict[str, Any] = {"fixed": fixed, "fixed_score": fscore, "fixed_ns": fns,
                           "fixed_lp": flp, "plain": plain, "plain_score": pscore,
                           "plain_ns": pns, "plain_lp": plp}
    spans = [*WAKE_SPELLINGS, *COMPETITORS]
    seqs = [tok.encode(s) for s in spans]
    n = pend if ptok and pscore >= rec.gate.threshold else len(rec.gate.phrase_words)
    rest = _after_words(plain, n).lstrip(" ,.!?") if ptok else ""
    forced = "Hey Juniper" + (", " + rest if rest else ".")
    seqs.append(tok.encode(" " + forced))
    if ptok:
        seqs.append(ptok)
    lps = [lp for i in range(0, len(seqs), ALIGN_BATCH)
           for lp in scorer.token_logprobs(encoded, frames, rec.plain_prompt,
                                           seqs[i:i + ALIGN_BATCH])]
    out["spans"] = {s: lp for s, lp in zip(spans, lps, strict=False)}
    out["forced"] = forced
    out["forced_lps"] = lps[len(spans)]
    out["plain_toks"] = [tok.decode([t]) for t in ptok]
    out["plain_lps"] = lps[len(spans) + 1] if ptok else []
    wake = lps[0]
    out["wake_mean"] = sum(wake) / len(wake)
    out["wake_min"] = min(wake)
    out["margin"] = (sum(out["forced_lps"]) - sum(out["plain_lps"])) if ptok else None
    return out


def clips(per: int, conds: list[Condition]) -> list[tuple[bool, str, str, str, bytes]]:
    """(says the wake phrase, voice, condition, words, 16 kHz PCM16 as the VAD hands it over)."""
    return ([(True, item.voice.label, item.condition.name, item.spoken, pcm)
             for item, pcm in wake_clips(per, conds)]
            + [(False, voice.label, cond.name, line, pcm)
               for voice, cond, line, pcm in non_wake_clips(non_wake_lines(), conds)])


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


def _as_shipped(d: float) -> Rule:
    """The second opinion before issue 15's rework: -inf (reject) when the no-prompt decode
    is empty or calls the audio no speech."""
    return lambda f: _speech(f, "plain") and f["wake_mean"] - f["plain_lp"] >= d


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else -math.inf


def first_words(toks: list[str], n: int = 2) -> int:
    """How many of the no-prompt decode's tokens make its first `n` words."""
    seen = 0
    for i, t in enumerate(toks):
        if t.startswith(" ") and any(c.isalnum() for c in t):
            seen += 1
            if seen > n:
                return i
    return len(toks)


def _vs_free_span(d: float) -> Rule:
    """Forced "Hey Juniper" (mean token log-prob) against the no-prompt decode's own first two
    words, heard or not as speech (closed_whisper.wake_margin since issue 15's rework)."""

    def rule(f: dict[str, Any]) -> bool:
        k = first_words(f["plain_toks"])
        return _mean(f["spans"][WAKE_SPELLINGS[0]]) - _mean(f["plain_lps"][:k]) >= d

    return rule


def _vs_plain_any(d: float) -> Rule:
    """As shipped, but the no-prompt decode's mean is used even when it says no speech."""
    return lambda f: bool(f["plain_toks"]) and f["wake_mean"] - f["plain_lp"] >= d


def _word_vs_plain(d: float) -> Rule:
    """Forced "Juniper" (the wake tokens after "Hey", mean) against the no-prompt decode's
    mean, whatever its no-speech verdict (closed_whisper.wake_margin since the rework)."""
    return lambda f: (bool(f["plain_toks"])
                      and _mean(f["spans"][WAKE_SPELLINGS[0]][1:]) - f["plain_lp"] >= d)


def _word_vs_rest(d: float) -> Rule:
    """Forced "Juniper" against the forced rest of "Hey Juniper, <the free words after>"."""
    return lambda f: (_mean(f["spans"][WAKE_SPELLINGS[0]][1:])
                      - _mean(f["forced_lps"][3:] or [0.0]) >= d)


def _vs_plain_or_alone(d: float, w: float) -> Rule:
    """As shipped, but on a no-speech verdict the forced score alone decides (>= w)."""
    return lambda f: (f["wake_mean"] - f["plain_lp"] >= d if _speech(f, "plain")
                      else f["wake_mean"] >= w)


def _posterior(t: float) -> Rule:
    """log P("Hey Juniper" | it or one of COMPETITORS) >= t, all forced with no prompt."""

    def rule(f: dict[str, Any]) -> bool:
        wake = float(sum(f["spans"][WAKE_SPELLINGS[0]]))
        scores = [wake, *(float(sum(f["spans"][c])) for c in COMPETITORS)]
        top = max(scores)
        return wake - top - math.log(sum(math.exp(x - top) for x in scores)) >= t

    return rule


def _vs_rest(d: float) -> Rule:
    """Forced "Hey Juniper" against the forced rest of the same transcript (per utterance)."""
    return lambda f: f["wake_mean"] - _mean(f["forced_lps"][3:] or [0.0]) >= d


def _no_name_beats(v: float) -> Rule:
    """No "Hey <name>" of COMPETITORS scores more than `v` (sum log-prob) above "Hey Juniper"."""
    names = [c for c in COMPETITORS if c.startswith(" Hey J")]
    return lambda f: (max(sum(f["spans"][c]) for c in names)
                      - sum(f["spans"][WAKE_SPELLINGS[0]]) <= v)


def _both(a: Rule, b: Rule) -> Rule:
    return lambda f: a(f) and b(f)


CHOSEN = -6.0  # closed_whisper.WAKE_MARGIN
OLD = "fixed>=72&wake_mean-plain_lp>=-2.25, no speech rejects (before)"
NEW = f"fixed>=72&word_mean-plain_lp>={CHOSEN}, no-speech verdict ignored (chosen)"


def rules() -> dict[str, Rule]:
    fixed = _fixed(72)
    out: dict[str, Rule] = {"fixed>=72 (the fixed pass alone)": fixed,
                            OLD: _both(fixed, _as_shipped(-2.25)),
                            NEW: _both(fixed, _word_vs_plain(CHOSEN))}
    # "hey jennifer" (tests/integration/test_voice_closed_set.py) is 7.4 and 8.0
    for v in (6.0, 7.0):
        out[f"fixed>=72&word_mean-plain_lp>={CHOSEN}&no name beats it by >{v}"] = _both(
            _both(fixed, _word_vs_plain(CHOSEN)), _no_name_beats(v))
    for d in (-2.25, -3.0, -4.0, -4.5, -5.0):
        out[f"fixed>=72&wake_mean-plain_lp>={d}, no speech rejects"] = _both(
            fixed, _as_shipped(d))
        out[f"fixed>=72&wake_mean-plain_lp>={d}, no-speech verdict ignored"] = _both(
            fixed, _vs_plain_any(d))
        out[f"fixed>=72&wake_mean-plain_lp>={d}, no speech: wake_mean>=-3"] = _both(
            fixed, _vs_plain_or_alone(d, -3.0))
    for d in (-4.5, -5.0, -5.5, -5.8, -6.2, -6.5):
        out[f"fixed>=72&word_mean-plain_lp>={d}, no-speech verdict ignored"] = _both(
            fixed, _word_vs_plain(d))
    for d in (-3.5, -4.5, -5.0, -5.5, -6.0):
        out[f"fixed>=72&word_mean-forced_rest_mean>={d}"] = _both(fixed, _word_vs_rest(d))
        out[f"fixed>=72&wake_mean-forced_rest_mean>={d}"] = _both(fixed, _vs_rest(d))
    for d in (-4.5, -5.0, -5.5):
        out[f"fixed>=72&wake_mean-free_span>={d}"] = _both(fixed, _vs_free_span(d))
    for w in (-3.5, -4.0, -4.5, -5.0):
        out[f"fixed>=72&wake_mean>={w}"] = _both(fixed, _wake_mean(w))
    for t in (-4.0, -6.0, -8.0, -10.0):
        out[f"fixed>=72&posterior_vs_competitors>={t}"] = _both(fixed, _posterior(t))
    return out


def _group(voice: str) -> str:
    if voice.startswith("piper"):
        return "piper"
    return "espeak variant/accent" if "+" in voice else "espeak plain"


def breakdown(rows: list[dict[str, Any]], rule: Rule) -> dict[str, dict[str, str]]:
    """False rejects and accepts per voice group and per condition."""
    out: dict[str, dict[str, str]] = {}
    for key, of in (("voice", lambda r: _group(r["voice"])), ("condition", lambda r: r["cond"])):
        counts: dict[str, list[int]] = {}
        for r in rows:
            c = counts.setdefault(of(r), [0, 0, 0, 0])
            said = rule(r)
            if r["wake"]:
                c[0] += 1
                c[1] += not said
            else:
                c[2] += 1
                c[3] += said
        out[key] = {k: f"FR {c[1]}/{c[0]}, FA {c[3]}/{c[2]}" for k, c in sorted(counts.items())}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per", type=int, default=12)
    parser.add_argument("--dump")
    parser.add_argument("--load")
    parser.add_argument("--conds", default=",".join(COND_NAMES))
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    if args.load:
        with open(args.load, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
    else:
        whisper = engines("whisper", progress=False).whisper
        assert whisper is not None
        rec = ClosedWhisperRecognizer(whisper)
        conds = [c for c in CONDITIONS if c.name in args.conds.split(",")]
        chosen = clips(args.per, conds)
        random.Random(7).shuffle(chosen)  # any first part of a long run is a fair sample
        dump = open(args.dump, "w", encoding="utf-8") if args.dump else None  # noqa: SIM115
        for i, (says_wake, voice, cond, said, pcm) in enumerate(chosen, 1):
            row = {"wake": says_wake, "voice": voice, "cond": cond, "said": said,
                   "label": f"{voice}|{cond}|{said}", **features(rec, pcm)}
            rows.append(row)
            if dump is not None:  # as it goes: a long run's first part is usable at once
                dump.write(json.dumps(row) + "\n")
                dump.flush()
            if i % 50 == 0:
                print(f"{i}/{len(chosen)}", file=sys.stderr, flush=True)
        if dump is not None:
            dump.close()
    wakes = [r for r in rows if r["wake"]]
    other = [r for r in rows if not r["wake"]]
    report: dict[str, Any] = {"wake_items": len(wakes), "non_wake_items": len(other)}
    for name, rule in rules().items():
        fr = [r["label"] for r in wakes if not rule(r)]
        fa = [r["label"] for r in other if rule(r)]
        report[name] = {"false_rejects": len(fr), "false_accepts": len(fa),
                        "fr_sample": fr[:4], "fa_sample": fa[:4]}
        if name in (OLD, NEW) or name.startswith("fixed>=72 ("):
            report[name]["by"] = breakdown(rows, rule)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
