"""Answers in a question's listening window, through the real pipeline (issue 44):
each voice says "hey juniper, click send" on the Messages scene, which asks before sending,
and answers "yes" or "no" without the wake phrase (with `--wake`, after it: "hey juniper, no"),
with its profile (room and free speech enrolled), paced in real time. Reported by condition:
the answers whose question was asked, those heard and acted on at once, and end of speech ->
action for those, with 95 % intervals:
`python -m appliance_lab.bench.spoken.window_answers --part tune [--wake]`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from appliance_lab import REPO
from appliance_lab.bench.spoken.accuracy import by_clip
from appliance_lab.bench.spoken.answer_end import ANSWER_WORDS, answer_audio
from appliance_lab.bench.spoken.corpus import Part, load_part, seed_of
from appliance_lab.bench.spoken.outcome import planned
from appliance_lab.bench.spoken.personal import (
    CONDITIONS,
    TEST,
    ConditionName,
    SpokenItem,
    Style,
    item_audio,
    make_profile,
)
from appliance_lab.bench.spoken.personal_bench import ASKING, classify_outcome
from appliance_lab.bench.spoken.runs import run_clips
from appliance_lab.bench.stats import peak_rss_mb, percentiles, share

SCENE = "messages"
ASKED_AGAIN = "needs_confirmation"
"""An answer's decision when it was heard doubtfully and the question was asked again."""
ASKED_BY = "click send"
"""A command the Messages scene asks about before it acts ("Send the message?")."""


def pairs(part: Part, per: int) -> list[tuple[SpokenItem, str, int]]:
    """For each voice and condition, `per` questions and answers: the command that asks, the
    answer (yes and no in turn) and the answer's test variant, drawn with a fixed seed."""
    out = []
    for voice in load_part(part).voices:
        for condition in CONDITIONS:
            style: Style = "slow" if condition == "slow" else "normal"
            rng = random.Random(seed_of("window-answers", voice.label, condition))
            for n in range(per):
                ask = SpokenItem(part, voice, SCENE, ASKED_BY, condition,
                                 rng.randrange(len(TEST[style])))
                out.append((ask, ANSWER_WORDS[n % 2], rng.randrange(len(TEST[style]))))
    return out


def run(part: Part, per: int, workdir: Path, wake: bool = False) -> list[dict[str, Any]]:
    """Each voice's questions and answers through one pipeline per style; `wake`: each answer
    said after the wake phrase, as a test item is."""
    rows: list[dict[str, Any]] = []
    chosen = pairs(part, per)
    started = time.monotonic()
    for voice in load_part(part).voices:
        for style in ("normal", "slow"):
            mine = [p for p in chosen if p[0].voice == voice and p[0].style == style]
            if not mine:
                continue
            profile = make_profile(workdir, part, voice, style, room=True, speech=True)
            clips: list[bytes] = []
            for ask, word, variant in mine:
                clips += [item_audio(ask),
                          answer_audio(part, voice.label, ask.condition, word, variant, wake)]
            result = run_clips(SCENE, clips, "closed", pace=1.0, profile=profile, asks=True)
            _woke, first = by_clip(result)
            for k, (ask, word, _variant) in enumerate(mine):
                asked, answered = first.get(2 * k), first.get(2 * k + 1)
                was_asked = asked is not None and asked.outcome["decision"] in ASKING
                t = answered.timings if answered is not None else {}
                latency = (t["action_done"] - (t["speech_end"] - t["vad_ms"])
                           if "action_done" in t else None)
                got = answered.outcome if answered is not None else None
                rows.append({
                    "voice": voice.label, "condition": ask.condition, "answer": word,
                    "asked": was_asked,
                    "outcome": classify_outcome(got, planned(SCENE, word)),
                    "heard": answered.utterance.text if answered else None,
                    "engine": answered.utterance.engine if answered else None,
                    "decision": got["decision"] if got else None,
                    "latency_ms": None if latency is None else round(latency, 1),
                    "vad_ms": t.get("vad_ms"), "stt_ms": t.get("stt_ms")})
            print(f"window answers: {voice.label} ({style}) done, {len(rows)}/{len(chosen)} "
                  f"({(time.monotonic() - started) / 60:.1f} min)", file=sys.stderr, flush=True)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """By condition and over all: answers to a question asked, those right at once, those
    asked about again, and end of speech -> action (with the VAD's wait) for those right."""
    out: dict[str, Any] = {}
    groups: list[ConditionName | str] = [*CONDITIONS, "all"]
    for condition in groups:
        mine = [r for r in rows if r["asked"] and condition in ("all", r["condition"])]
        right = [r for r in mine if r["outcome"] == "right" and r["latency_ms"] is not None]
        out[condition] = {
            "answers_asked_for": len(mine),
            "right_at_once": share(len(right), len(mine)),
            "wrong": sum(r["outcome"] == "wrong" for r in mine),
            "asked_again": sum(r["decision"] == ASKED_AGAIN for r in mine),
            "end_of_speech_to_action_ms": percentiles([r["latency_ms"] for r in right]),
            "vad_wait_ms": percentiles([r["vad_ms"] for r in right if r["vad_ms"]]),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("tune", "heldout"), default="tune")
    parser.add_argument("--per", type=int, default=2, help="answers per voice and condition")
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "personal-templates")
    parser.add_argument("--wake", action="store_true",
                        help='each answer said after the wake phrase ("hey juniper, no")')
    args = parser.parse_args()
    rows = run(args.part, args.per, args.work, args.wake)
    print(json.dumps({"part": args.part, "per": args.per, "wake": args.wake,
                      "summary": summary(rows),
                      "rows": rows, "peak_rss_mb": peak_rss_mb()}, indent=2))


if __name__ == "__main__":
    main()
