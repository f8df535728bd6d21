"""pocketsphinx's keyword spotter on the wake phrase, on the spoken corpus's TUNING part: the
issue's candidate engine, measured (docs/voice-corpus.md, "A keyword spotter: pocketsphinx").

Each clip of scripts/wake_tune.py (wake items, speech without the wake phrase, near misses) goes
through pocketsphinx 5's `keyphrase` search (its bundled en-us model and dictionary) at several
thresholds; prints detections and false accepts per voice group and condition as JSON.
    pip install pocketsphinx==5.1.1   # the `measure` extra; not needed to run the appliance
    PYTHONPATH=. python scripts/pocketsphinx_wake_probe.py --per 4
"""

from __future__ import annotations

import argparse
import collections
import json
import sys

from wake_tune import COND_NAMES, clips

from appliance.bench.spoken.conditions import CONDITIONS

THRESHOLDS = (1e-10, 1e-20, 1e-30, 1e-40)
"""pocketsphinx's kws_threshold: lower detects more (its docs suggest 1e-50 to 1e-5)."""


def group(voice: str) -> str:
    if voice.startswith("piper"):
        return "piper"
    return "espeak variants" if "+" in voice else "espeak plain"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per", type=int, default=4)
    args = ap.parse_args()
    try:
        from pocketsphinx import Decoder
    except ImportError:
        sys.exit("pocketsphinx is not installed: pip install pocketsphinx==5.1.1")
    decoders = {t: Decoder(keyphrase="hey juniper", kws_threshold=t, lm=None, loglevel="FATAL")
                for t in THRESHOLDS}
    counts: dict[float, dict[str, list[int]]] = {
        t: collections.defaultdict(lambda: [0, 0, 0, 0]) for t in THRESHOLDS}
    for wake, voice, cond, _words, pcm in clips(args.per, [c for c in CONDITIONS
                                                            if c.name in COND_NAMES]):
        for t, decoder in decoders.items():
            decoder.start_utt()
            decoder.process_raw(pcm)
            decoder.end_utt()
            hit = decoder.hyp() is not None
            for key in (group(voice), cond, "all"):
                c = counts[t][key]
                c[0 if wake else 2] += hit
                c[1 if wake else 3] += 1
    print(json.dumps({f"{t:g}": {k: {"detected": f"{c[0]} of {c[1]}",
                                      "false_accepts": f"{c[2]} of {c[3]}"}
                                  for k, c in sorted(by.items())}
                      for t, by in counts.items()}, indent=1))


if __name__ == "__main__":
    main()
