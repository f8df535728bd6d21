"""End of speech -> action with the VAD's settings varied, on the TUNING part only (issue 15).

Each variant hears the same sampled items through the real pipeline paced in real time
(`appliance_lab.bench.spoken.accuracy.bench_items`, the bench's own loop), one variant after the
other: the default; waiting out the VAD's stop (`end_when_said_in_full` off); and the STT
starting on a pause after each of `--speculate` seconds. Prints, per variant, how many items
acted right at once and the closed-set and open p50 / p95 (docs/measurements/voice-corpus.md,
"Ending a command said in full").
    python -m appliance_lab.tuning.closed_set_latency --per 2 --conditions clean,snr10 \
        [--speculate 0.1]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from appliance.voice.hearing.vad import VadSettings
from appliance_lab.bench.spoken.accuracy import bench_items
from appliance_lab.bench.spoken.conditions import CONDITIONS
from appliance_lab.bench.spoken.corpus import items, sample


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per", type=int, default=2)
    ap.add_argument("--conditions", default="clean,snr10")
    ap.add_argument("--speculate", default="", help="seconds, comma-separated")
    args = ap.parse_args()
    conds = [c for c in CONDITIONS if c.name in args.conditions.split(",")]
    chosen = sample(items("tune", conds), args.per, seed=11)
    default = VadSettings()
    variants = {"default": default,
                "waiting out the VAD": replace(default, end_when_said_in_full=False)}
    for secs in filter(None, args.speculate.split(",")):
        variants[f"speculating at {secs} s"] = replace(default, speculate_secs=float(secs))
    report: dict[str, object] = {"items": len(chosen)}
    for name, vad in variants.items():
        result = bench_items(chosen, "closed", lambda line: print(line, file=sys.stderr), vad)
        latency = result["end_of_speech_to_action_done_ms"]
        report[name] = {
            "right_at_once": round((result["intent_accuracy"] or 0) * result["acting_items"]),
            "acting_items": result["acting_items"],
            "closed": latency.get("engine:closed:whisper"),
            "open": latency.get("engine:open:whisper"),
        }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
