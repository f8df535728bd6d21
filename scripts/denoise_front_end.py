"""Would speexdsp's noise suppression in front of Whisper help? Measured on the TUNING part only.

Each sampled item is heard by the closed recognizer as it is, through speexdsp's preprocessor
(pyaec with its far end silent: the echo canceller has nothing to cancel, the preprocessor
denoises), and through it after the preprocessor has heard the item once already (a denoiser
on a live microphone has learnt the room's noise before anyone speaks). Prints one JSON row per
item, then the totals per condition.
    PYTHONPATH=. python scripts/denoise_front_end.py --per 3 --conditions clean,snr10,snr5
"""

from __future__ import annotations

import argparse
import collections
import json

import numpy as np

from appliance.bench.spoken.conditions import CONDITIONS
from appliance.bench.spoken.corpus import audio, items, sample
from appliance.bench.spoken.outcome import heard_on, planned
from appliance.voice.closed_whisper import ClosedWhisperRecognizer
from appliance.voice.commands import engines
from appliance.voice.echo import FILTER_SAMPLES, FRAME_SAMPLES
from appliance.voice.stt_whisper import RATE, TRAILING_SILENCE_S


def denoised(pcm: bytes, passes: int) -> bytes:
    """`pcm` through a fresh speexdsp preprocessor `passes` times; the last pass kept."""
    import pyaec  # type: ignore[import-untyped]

    aec = pyaec.Aec(FRAME_SAMPLES, FILTER_SAMPLES, RATE, True)
    x = np.frombuffer(pcm, dtype="<i2")
    silent = [0] * FRAME_SAMPLES
    out: list[np.ndarray] = []
    for _ in range(passes):
        out = [np.asarray(aec.cancel_echo(x[i:i + FRAME_SAMPLES].tolist(), silent), dtype="<i2")
               for i in range(0, len(x) // FRAME_SAMPLES * FRAME_SAMPLES, FRAME_SAMPLES)]
    return np.concatenate(out).tobytes()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per", type=int, default=3)
    ap.add_argument("--conditions", default="clean,snr10,snr5")
    args = ap.parse_args()
    conds = [c for c in CONDITIONS if c.name in args.conditions.split(",")]
    loaded = engines(progress=False)
    assert loaded.whisper is not None
    rec = ClosedWhisperRecognizer(loaded.whisper)
    tail = bytes(int(TRAILING_SILENCE_S * RATE) * 2)
    totals: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for item in sample(items("tune", conds), args.per, seed=7):
        pcm, want = audio(item), planned(item.scene, item.sentence)
        row: dict[str, object] = {"cond": item.condition.name, "voice": item.voice.label,
                                  "said": item.sentence}
        for front, heard_pcm in (("as is", pcm), ("denoised", denoised(pcm, 1)),
                                 ("denoised, noise learnt", denoised(pcm, 2))):
            heard = rec.hear(heard_pcm + tail, *heard_on(item.scene))
            command = heard.text.removeprefix("hey juniper").strip()
            right = heard.wake and bool(command) and planned(item.scene, command) == want
            row[front] = {"wake": heard.wake, "text": heard.text, "doubtful": heard.doubtful}
            count = totals[f"{item.condition.name}: {front}"]
            count.update(items=1, woken=heard.wake, right_at_once=right and not heard.doubtful)
        print(json.dumps(row), flush=True)
    print(json.dumps({k: dict(v) for k, v in totals.items()}, indent=1))


if __name__ == "__main__":
    main()
