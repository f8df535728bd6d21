"""Some grammar families of the spoken corpus's TUNING part through the real voice pipeline
(issue 15), every miss listed, and the wrong actions done unasked counted: to weigh a change to
the closed recognizer on the families it touches. Never run on the held-out part: its figures
come from `appliance bench voice`.
    python -m appliance_lab.tuning.voice_families press_key --conditions clean,snr10 > out.json
    python -m appliance_lab.tuning.voice_families all --conditions clean --one-each   # a first look
"""

from __future__ import annotations

import argparse
import json
import sys

from appliance_lab.bench.spoken.accuracy import bench_items
from appliance_lab.bench.spoken.conditions import CONDITIONS
from appliance_lab.bench.spoken.corpus import CorpusItem, items


def _one_each(chosen: list[CorpusItem]) -> list[CorpusItem]:
    """The first item of each (voice, family), every other voice."""
    voices = sorted({i.voice.label for i in chosen})[::2]
    seen: set[tuple[str, str]] = set()
    picked = []
    for item in chosen:
        key = (item.voice.label, item.family)
        if item.voice.label in voices and key not in seen:
            seen.add(key)
            picked.append(item)
    return picked


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("families", help="comma-separated grammar families, or all")
    parser.add_argument("--conditions", default="clean,snr10")
    parser.add_argument("--recognizer", default="closed")
    parser.add_argument("--one-each", action="store_true")
    args = parser.parse_args()
    families = set(args.families.split(","))
    conditions = [c for c in CONDITIONS if c.name in args.conditions.split(",")]
    chosen = [i for i in items("tune", conditions) if "all" in families or i.family in families]
    if args.one_each:
        chosen = _one_each(chosen)
    report = bench_items(chosen, args.recognizer,
                         lambda line: print(line, file=sys.stderr, flush=True), misses_kept=None)
    report["wrong_done_unasked"] = sum(
        m["got"] is not None and m["got"]["decision"] == "executed"
        for m in report["misses_sample"])
    json.dump(report, sys.stdout, indent=1, default=str)


if __name__ == "__main__":
    main()
