"""The closed recognizer (default wake check, quick window) with the packaged tiny.en against
another CTranslate2 Whisper model, on the TUNING part only: right at once, asked about, wrong
actions done unasked, and `hear` p50/p95, per condition.
    PYTHONPATH=. python scripts/whisper_model_compare.py MODEL_DIR [--per 3]
MODEL_DIR holds model.bin, config.json, tokenizer.json and vocabulary.txt (docs/voice-corpus.md,
"Whisper base instead of tiny.en", says how the one measured was put together).
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from pathlib import Path

import numpy as np

from appliance.bench.spoken.conditions import CONDITIONS
from appliance.bench.spoken.corpus import audio, items, sample
from appliance.bench.spoken.outcome import heard_on, planned
from appliance.settings import Settings
from appliance.voice.closed_whisper import FULL_WINDOW, ClosedWhisperRecognizer, wake_rule
from appliance.voice.stt_whisper import RATE, TRAILING_SILENCE_S, WhisperEngine


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", type=Path)
    ap.add_argument("--per", type=int, default=3)
    args = ap.parse_args()
    rule = wake_rule(Settings().wake_check, "hey juniper")[1]
    recs = {"tiny.en": ClosedWhisperRecognizer(WhisperEngine(), wake_check=rule),
            args.model.name: ClosedWhisperRecognizer(WhisperEngine(args.model), wake_check=rule)}
    conds = [c for c in CONDITIONS if c.name in ("clean", "snr10", "snr5")]
    tail = bytes(int(TRAILING_SILENCE_S * RATE) * 2)
    totals: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    hear_ms: dict[str, list[float]] = collections.defaultdict(list)
    for item in sample(items("tune", conds), args.per, seed=7):
        pcm, want = audio(item) + tail, planned(item.scene, item.sentence)
        for name, rec in recs.items():
            start = time.monotonic()
            heard = rec.hear(pcm, *heard_on(item.scene))
            hear_ms[name].append((time.monotonic() - start) * 1000)
            command = heard.text.removeprefix("hey juniper").strip()
            got = planned(item.scene, command) if heard.wake and command else None
            right = got == want
            wrong = (got is not None and not right and got["decision"] == "executed"
                     and not heard.doubtful)
            totals[f"{item.condition.name}: {name}"].update(
                items=1, woken=heard.wake, right_at_once=right and not heard.doubtful,
                right_after_a_yes=right and heard.doubtful, wrong_done_unasked=wrong,
                quick=heard.window_s < FULL_WINDOW / 100)
    report: dict[str, object] = {k: dict(v) for k, v in sorted(totals.items())}
    report["hear_ms"] = {k: {"p50": round(float(np.percentile(v, 50))),
                             "p95": round(float(np.percentile(v, 95)))}
                         for k, v in hear_ms.items()}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
