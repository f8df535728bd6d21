"""Where the closed path's time goes: each Whisper stage of `ClosedWhisperRecognizer.hear`
timed on clean items of the TUNING part, on their own screens. Prints one JSON object: the
median per utterance of the whole, of the encoder, of the greedy decodes and of the forced
scoring, and how many of each an utterance needed. With --window, the encoder's window cut to
the utterance plus that many seconds instead of Whisper's 30 s: the fixed pass's transcript and
time with each window, on clean and 10 dB items, and how many lost the wake phrase.
    python -m appliance_lab.tuning.closed_set_profile [--items 40]
    python -m appliance_lab.tuning.closed_set_profile --window 1,3 [--items 16]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from appliance.voice.commands import engines
from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
from appliance.voice.hearing.stt_whisper import speech_of
from appliance_lab.bench.spoken.conditions import CONDITIONS
from appliance_lab.bench.spoken.corpus import audio, items, sample
from appliance_lab.bench.spoken.outcome import heard_on

STAGES = ("encode", "greedy", "token_logprobs")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--window", help="seconds after the utterance, comma-separated")
    args = ap.parse_args()
    loaded = engines(progress=False)
    assert loaded.whisper is not None
    rec = ClosedWhisperRecognizer(loaded.whisper)
    if args.window:
        windows(rec, [float(w) for w in args.window.split(",")], args.items)
        return
    spent: dict[str, float] = collections.defaultdict(float)
    calls: collections.Counter[str] = collections.Counter()

    def timed(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            start = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                spent[name] += time.perf_counter() - start
                calls[name] += 1
        return run

    for name in STAGES:
        setattr(rec.scorer, name, timed(name, getattr(rec.scorer, name)))
    rows: list[dict[str, float]] = []
    clean = [c for c in CONDITIONS if c.name == "clean"]
    for item in sample(items("tune", clean), 4, seed=7)[:args.items]:
        pcm = audio(item)
        spent.clear()
        calls.clear()
        start = time.perf_counter()
        rec.hear(pcm, *heard_on(item.scene))
        rows.append({"hear": time.perf_counter() - start, **spent,
                     **{f"{n}_calls": float(calls[n]) for n in STAGES}})
    out: dict[str, Any] = {"items": len(rows)}
    for key in ("hear", *STAGES):
        out[f"{key}_ms_p50"] = round(statistics.median(r.get(key, 0.0) for r in rows) * 1000)
    for name in STAGES:
        out[f"{name}_calls_mean"] = round(statistics.mean(r[f"{name}_calls"] for r in rows), 2)
    print(json.dumps(out, indent=1))


def windows(rec: ClosedWhisperRecognizer, pads: list[float], n: int) -> None:
    """The fixed pass with the full window and with shorter ones, item by item."""
    from faster_whisper.audio import pad_or_trim  # type: ignore[import-untyped]

    scorer = rec.scorer
    conds = [c for c in CONDITIONS if c.name in ("clean", "snr10")]
    lost: collections.Counter[str] = collections.Counter()
    for item in sample(items("tune", conds), 1, seed=3)[:n]:
        x = speech_of(audio(item))
        feats = scorer.features(x)
        row: dict[str, Any] = {"item": item.item_id}
        for pad in [None, *pads]:
            if pad is None:
                cut = pad_or_trim(feats)
            else:
                frames = feats.shape[-1] + int(pad * 100)
                cut = np.pad(feats, ((0, 0), (0, max(0, frames - feats.shape[-1]))),
                             constant_values=feats.min())[:, :frames]
            start = time.perf_counter()
            text = scorer.greedy(scorer.encode_features(cut), rec.fixed_prompt)[0]
            name = "30s" if pad is None else f"+{pad:g}s"
            row[name] = {"text": text, "ms": round((time.perf_counter() - start) * 1000)}
            lost[name] += rec.gate.split(text) is None
        print(json.dumps(row), flush=True)
    print(json.dumps({"wake_phrase_lost": dict(lost)}))


if __name__ == "__main__":
    main()
