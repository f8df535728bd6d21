"""The closed recognizer as it is against variants of it, on the TUNING part only (issue 15).

Each sampled item is heard as it is; through speexdsp's noise suppression (pyaec with its far
end silent: the echo canceller has nothing to cancel, the preprocessor denoises), fresh and
after it has heard the item once (a denoiser on a live microphone has learnt the room's noise
before anyone speaks); with beam search in every decode; with every utterance through the full
30 s encoder window (no quick pass); and through a 20 s window where it was 30 s. Prints the
totals per condition and variant, and each variant's `hear` p50 and p95. The recognizer has
the default wake check; with --model, each variant is also heard by the same recognizer on
another CTranslate2 Whisper model (a directory of model.bin, config.json, tokenizer.json and
vocabulary.txt; docs/measurements/voice-corpus.md, "Whisper base instead of tiny.en").
    python -m appliance_lab.tuning.closed_set_variants --per 3 --conditions clean,snr10,snr5 \
        [--variants "as is,full window only"] [--model DIR]
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from appliance.settings import Settings
from appliance.voice.audio.echo import FRAME_SAMPLES, SpeexCanceller
from appliance.voice.commands import engines
from appliance.voice.hearing.closed_whisper import (
    FULL_WINDOW,
    QUICK_WINDOW,
    ClosedWhisperRecognizer,
    wake_rule,
)
from appliance.voice.hearing.stt_whisper import RATE, TRAILING_SILENCE_S, WhisperEngine
from appliance_lab.bench.spoken.conditions import CONDITIONS
from appliance_lab.bench.spoken.corpus import audio, items, sample
from appliance_lab.bench.spoken.outcome import heard_on, planned

BEAM = 4


def denoised(pcm: bytes, passes: int) -> bytes:
    """`pcm` through a fresh speexdsp preprocessor `passes` times; the last pass kept."""
    canceller = SpeexCanceller()
    frame = FRAME_SAMPLES * 2
    silent = bytes(frame)
    out: list[bytes] = []
    for _ in range(passes):
        out = [canceller.cancel(pcm[i:i + frame], silent)
               for i in range(0, len(pcm) // frame * frame, frame)]
    return b"".join(out)


VARIANTS: dict[str, tuple[Callable[[bytes], bytes], int, int | None, int]] = {
    "as is": (lambda pcm: pcm, 1, QUICK_WINDOW, FULL_WINDOW),
    "denoised": (lambda pcm: denoised(pcm, 1), 1, QUICK_WINDOW, FULL_WINDOW),
    "denoised, noise learnt": (lambda pcm: denoised(pcm, 2), 1, QUICK_WINDOW, FULL_WINDOW),
    f"beam {BEAM}": (lambda pcm: pcm, BEAM, QUICK_WINDOW, FULL_WINDOW),
    "full window only": (lambda pcm: pcm, 1, None, FULL_WINDOW),
    "20 s full window": (lambda pcm: pcm, 1, QUICK_WINDOW, 2000),
}
"""name: (what the audio goes through, beam size, quick window, full window in frames)."""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per", type=int, default=3)
    ap.add_argument("--conditions", default="clean,snr10,snr5")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--model", type=Path, help="another Whisper model, heard beside tiny.en")
    args = ap.parse_args()
    chosen = {name: VARIANTS[name] for name in args.variants.split(",")}
    conds = [c for c in CONDITIONS if c.name in args.conditions.split(",")]
    loaded = engines(progress=False)
    assert loaded.whisper is not None
    rule = wake_rule(Settings().wake_check, "hey juniper")[1]
    recs = {"": ClosedWhisperRecognizer(loaded.whisper, wake_check=rule)}
    if args.model:
        recs[f" @ {args.model.name}"] = ClosedWhisperRecognizer(WhisperEngine(args.model),
                                                                wake_check=rule)
    tail = bytes(int(TRAILING_SILENCE_S * RATE) * 2)
    totals: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    hear_ms: dict[str, list[float]] = collections.defaultdict(list)
    for item in sample(items("tune", conds), args.per, seed=7):
        pcm, want = audio(item), planned(item.scene, item.sentence)
        for (name, (front, beam, window, full)), (model, rec) in itertools.product(
                chosen.items(), recs.items()):
            rec.scorer.beam_size, rec.quick_window, rec.full_window = beam, window, full
            heard_pcm = front(pcm) + tail
            start = time.monotonic()
            heard = rec.hear(heard_pcm, *heard_on(item.scene))
            hear_ms[name + model].append((time.monotonic() - start) * 1000)
            command = heard.text.removeprefix("hey juniper").strip()
            got = planned(item.scene, command) if heard.wake and command else None
            wrong = got is not None and got != want and got["decision"] == "executed"
            totals[f"{item.condition.name}: {name}{model}"].update(
                items=1, woken=heard.wake, right_at_once=got == want and not heard.doubtful,
                right_after_a_yes=got == want and heard.doubtful,
                wrong_done_unasked=wrong and not heard.doubtful,
                quick=heard.window_s < full / 100)
    report: dict[str, object] = {k: dict(v) for k, v in sorted(totals.items())}
    report["hear_ms"] = {k: {"p50": round(float(np.percentile(v, 50))),
                             "p95": round(float(np.percentile(v, 95)))}
                         for k, v in hear_ms.items()}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
