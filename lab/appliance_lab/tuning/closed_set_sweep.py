"""The closed set's acceptance thresholds swept on the spoken corpus's TUNING part (issue 15).

Each sampled item is heard twice by the real recognizer (Whisper tiny.en): once with every best
sentence taken, once with none, so any (floor, margin) pair, and an ask band below it, can be
weighed offline by what the grammar plans from the resulting text. Never run on the held-out
part: its figures come from `appliance bench voice`.
    python -m appliance_lab.tuning.closed_set_sweep record --per 3 --seed 101 > rows.jsonl
    python -m appliance_lab.tuning.closed_set_sweep weigh rows.jsonl [more.jsonl ...]
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import appliance.voice.hearing.closed_whisper as cw
from appliance.voice.commands import engines
from appliance.voice.hearing.closed_set import SentenceSet
from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
from appliance_lab.bench.spoken.corpus import audio, items, sample
from appliance_lab.bench.spoken.outcome import heard_on, planned
from appliance_lab.tuning.record_then_weigh import record_then_weigh

ALWAYS = {"FLOOR": -1e9, "MARGIN": 1e9, "ASK_FLOOR": -1e9, "ASK_MARGIN": 1e9}
NEVER = {"FLOOR": 1e9, "MARGIN": -1e9, "ASK_FLOOR": 1e9, "ASK_MARGIN": -1e9}
Band = tuple[float, float]


def _heard(rec: ClosedWhisperRecognizer, pcm: bytes, sentences: SentenceSet,
           vocabulary: list[str], thresholds: dict[str, float]) -> dict[str, Any]:
    for name, value in thresholds.items():
        setattr(cw, name, value)
    return dict(rec.hear(pcm, sentences, vocabulary).__dict__)


def record(per: int, seed: int) -> None:
    loaded = engines(progress=False)
    assert loaded.whisper is not None
    rec = ClosedWhisperRecognizer(loaded.whisper)
    for item in sample(items("tune"), per, seed=seed):
        sentences, vocabulary = heard_on(item.scene)
        pcm = audio(item)
        row = {"id": item.item_id, "scene": item.scene, "said": item.sentence,
               "take": _heard(rec, pcm, sentences, vocabulary, ALWAYS),
               "leave": _heard(rec, pcm, sentences, vocabulary, NEVER)}
        print(json.dumps(row), flush=True)


@functools.cache
def _plan(scene: str, text: str) -> str:
    return json.dumps(planned(scene, text), sort_keys=True) if text.strip() else "none"


def _command(text: str) -> str:
    return text.removeprefix("hey juniper ")


def _verdict(row: dict[str, Any], act: Band, ask: Band | None) -> tuple[str | None, bool]:
    """What the grammar plans from what would be heard, and whether it would be asked first."""
    take = row["take"]
    if not take["wake"]:
        return None, False
    if take["path"] == "closed" and take["score"] is None:  # heard freely as a sentence
        return _plan(row["scene"], _command(take["text"])), False
    bands = [(act, False)] + ([(ask, True)] if ask is not None else [])
    for (floor, margin), asked in bands:
        if take["best"] and take["score"] >= max(floor, take["greedy_score"] - margin):
            return _plan(row["scene"], _command(take["text"])), asked
    return _plan(row["scene"], _command(row["leave"]["text"])), False


def weigh(paths: list[Path]) -> None:
    rows = [json.loads(line) for p in paths for line in p.read_text().splitlines()]
    expected = {r["id"]: _plan(r["scene"], r["said"]) for r in rows}
    acting = [r for r in rows if json.loads(expected[r["id"]])["intent"] is not None]

    def intent(outcome: str | None) -> Any:
        return json.loads(outcome)["intent"] if outcome not in (None, "none") else None

    def done(outcome: str | None) -> bool:
        return outcome not in (None, "none") and json.loads(outcome)["decision"] == "executed"

    print(json.dumps({"items": len(rows), "acting": len(acting)}))
    for act in [(-1.9, 1.3), (-2.1, 1.3), (-2.3, 1.3), (-2.5, 1.3), (-2.8, 0.9)]:
        for ask in [None, (-2.5, 1.3), (-2.8, 0.9), (-2.8, 1.3), (-3.2, 0.9), (-3.2, 1.3)]:
            tally = {"right": 0, "right_after_yes": 0, "wrong_done": 0, "wrong_asked": 0}
            for row in acting:
                outcome, asked = _verdict(row, act, ask)
                want = expected[row["id"]]
                if asked and done(outcome):
                    tally["right_after_yes" if intent(outcome) == intent(want)
                          else "wrong_asked"] += 1
                elif outcome == want:
                    tally["right"] += 1
                elif done(outcome):
                    tally["wrong_done"] += 1
            print(json.dumps({"act": act, "ask": ask, **tally}))


def main() -> None:
    record_then_weigh(__doc__, lambda args: record(args.per, args.seed), weigh, per=3,
                      record_options=lambda p: p.add_argument("--seed", type=int, default=101))


if __name__ == "__main__":
    main()
