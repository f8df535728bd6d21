"""Trains voice/hearing/wake_spotter.npz, and weighs the `spotter` wake check, on the spoken
corpus's TUNING part and on voices of neither part (issue 15). Never run on the held-out part.

`features` keeps the speech embeddings (wake_spotter.SpeechEmbedding) of wake_rule_tune.py's
clips, in the same order; `--extra` those of EXTRA voices (espeak-ng variants in neither part,
and Piper's one voice shifted in pitch and tempo) saying tuning sentences after the wake phrase
and speech without it, `--near` theirs of every near miss. `fit` weighs the spotter by leaving
each tuning voice out in turn (its clips scored by a spotter trained on the other tuning voices
and the extra ones; when Piper is out, its shifted copies are out too), beside the `command`
check read from wake_rule_tune.py's rows of the same clips; then trains on all and (`--write`)
writes it.
    python -m appliance_lab.tuning.wake_spotter_train features --shard 0/2 > t0.npz
    python -m appliance_lab.tuning.wake_spotter_train features --alone > a.npz
    python -m appliance_lab.tuning.wake_spotter_train features --extra --shard 0/2 > x0.npz
    python -m appliance_lab.tuning.wake_spotter_train features --near --shard 0/2 > n0.npz
    python -m appliance_lab.tuning.wake_spotter_train fit t0.npz t1.npz a.npz \
        --extra x0.npz x1.npz n0.npz n1.npz --rows rows.jsonl --alone-rows alone.jsonl [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from appliance.voice.hearing.closed_whisper import WAKE_CHECKS, WakeRule
from appliance.voice.hearing.stt_whisper import RATE
from appliance.voice.hearing.wake_spotter import WINDOW, WakeSpotter, speech_embedding
from appliance_lab.bench.spoken.conditions import (
    CONDITIONS,
    babble_at,
    mix_at_snr,
    noise_seconds,
    reverberate,
    sox,
    sox_noise,
)
from appliance_lab.bench.spoken.corpus import (
    as_sentence,
    babble,
    cached_pcm,
    clean_speech,
    load_part,
    noise_for,
    with_wake,
)
from appliance_lab.bench.spoken.voices import Voice
from appliance_lab.tuning.wake_clips import COND_NAMES, NEAR_MISSES, VAD_TAIL, tuning_sentences
from appliance_lab.tuning.wake_rule_tune import COMMAND_KINDS, Clip, clips
from appliance_lab.tuning.wake_rule_tune import woken as command_woken

KEPT = 56
"""Embeddings kept per clip: the last of ENDS and more, for the windows of talk after it."""
EARLY = 21
"""A wake clip's windows ending at or before this embedding hold at most its first 0.2 s of
speech ("hey"): trained as no wake phrase. Its windows ending in POSITIVE hold all of it."""
POSITIVE = range(30, 39)
HIDDEN, EPOCHS, L2, RATE_ADAM, BATCH = 32, 8, 1e-3, 1e-3, 256

Floats = npt.NDArray[np.float32]

_ACCENTS = ("en-us", "en", "en-029", "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-us-nyc")
_VARIANTS = ("Andrea", "Steph2", "Steph3", "shelby", "grandma", "Kaukovalta", "Adam", "Alex",
             "Andy", "Benjamin", "Caleb", "David", "Edward", "Gene", "Henrique", "Jacky", "Lee",
             "Michael", "Paul", "Quincy", "Robert", "Zac", "m3", "m6", "klatt2", "klatt4",
             "norbert", "travis", "victor", "grandpa")
PIPER_SHIFTS = ((300, 0.9), (600, 1.1), (-200, 1.15), (450, 0.85))
"""Piper's voice shifted (cents, tempo): the tuning part's only voice not made by espeak-ng."""
MORE_NEAR_MISSES = (
    # Near misses written for the extra voices, of the kinds in wake_clips.NEAR_MISSES.
    "hey ginger, time for a walk", "hey jimmy, open the door", "hey janet, what's for tea",
    "hey juanita, good morning", "hey joey, look at me", "hey jojo, it's late",
    "hey jean, turn round", "hey jeeves, bring the car", "they're junipers, not pines",
    "a pair of jumpers", "hey, you need a haircut", "hey grandpa, the news is on",
    "hey darling, open your eyes", "hey junk man, stop there", "hey uniform, sign in here",
    "hey jackie, send it",
)
Shift = tuple[int, float] | None


def extra_voices() -> list[tuple[Voice, Shift]]:
    """30 espeak-ng variants, each in one of the tuning part's accents at its own rate and
    pitch, and Piper shifted; none of them a held-out voice or variant (checked)."""
    rng = random.Random(11)
    out: list[tuple[Voice, Shift]] = [
        (Voice(engine="espeak", name=f"{_ACCENTS[i % len(_ACCENTS)]}+{variant}",
               rate=rng.randrange(130, 186, 5), pitch=rng.randrange(30, 71, 5)), None)
        for i, variant in enumerate(_VARIANTS)]
    out += [(Voice(engine="piper", name="en_US-joe-medium"), s) for s in PIPER_SHIFTS]
    held = load_part("heldout").voices
    held_names = {v.name for v in held} | {v.name.split("+")[-1] for v in held}
    assert not {v.name for v, _ in out} & held_names
    assert not {v.name.split("+")[-1] for v, _ in out} & held_names
    return out


def _shifted(pcm: bytes, shift: Shift) -> bytes:
    if shift is None:
        return pcm
    fmt = ["-t", "raw", "-r", str(RATE), "-e", "signed", "-b", "16", "-c", "1"]
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "a.raw", Path(tmp) / "b.raw"
        src.write_bytes(pcm)
        sox(*fmt, str(src), *fmt, str(dst), "pitch", str(shift[0]), "tempo", str(shift[1]))
        return dst.read_bytes()


def _extra_clip(voice: Voice, shift: Shift, text: str, said: str, cond_name: str) -> bytes:
    """`text` said by an extra voice under a tuning condition, as the corpus makes its clips."""
    cond = next(c for c in CONDITIONS if c.name == cond_name)
    # The cache key the wake probe's clips had (branch wake-ensemble-s11): the same clips.
    doc = [voice.model_dump(), shift, text, cond.name, "wake-probe-extra"]
    key = hashlib.sha256(json.dumps(doc).encode()).hexdigest()[:24]

    def make() -> bytes:
        speech = _shifted(clean_speech(voice, text), shift)
        if cond.reverb is not None:
            return reverberate(speech, cond.reverb)
        noise = noise_for(voice, said + str(shift), cond)
        if cond.snr_db is None or noise is None:
            pad = bytes(int(0.3 * RATE) * 2)
            return pad + speech + pad
        seconds, seed = noise_seconds(speech), int(key[:8], 16)
        made = (babble_at(babble("tune"), seconds, seed) if noise == "babble"
                else sox_noise(noise, seconds, seed))
        return mix_at_snr(speech, made, cond.snr_db)

    return cached_pcm(key, make)


def extra_clips(near: bool) -> Iterator[Clip]:
    """Each extra voice: 8 tuning sentences after the wake phrase and 12 lines without it, or
    (`near`) every near miss; under each tuning condition."""
    sentences = tuning_sentences()
    lines = [*load_part("tune").non_wake, *NEAR_MISSES]
    for n, (voice, shift) in enumerate(extra_voices()):
        rng = random.Random(n)
        label = voice.label + (f"~{shift[0]}/{shift[1]}" if shift else "")
        said = ([(False, line) for line in (*NEAR_MISSES, *MORE_NEAR_MISSES)] if near else
                [(True, s) for s in rng.sample(sentences, 8)]
                + [(False, line) for line in rng.sample(lines, 12)])
        for wake, words in said:
            text = with_wake(words) if wake else as_sentence(words)
            for cond in COND_NAMES:
                yield (wake, label, cond, "", words,
                       _extra_clip(voice, shift, text, words, cond) + VAD_TAIL)


def features(every: Iterator[Clip], shard: int, shards: int, which: str) -> None:
    embedding = speech_embedding()
    rows, lengths, meta = [], [], []
    for n, (wake, voice, cond, _scene, said, pcm) in enumerate(every):
        if n % shards != shard:
            continue
        kept = embedding.embed(pcm)[:KEPT]
        row = np.zeros((KEPT, kept.shape[1]), np.float32)
        row[:len(kept)] = kept
        rows.append(row)
        lengths.append(len(kept))
        meta.append(json.dumps({"n": n, "wake": wake, "voice": voice, "cond": cond,
                                "said": said, "which": which}))
        if len(rows) % 200 == 0:
            print(f"{len(rows)} clips", file=sys.stderr, flush=True)
    out = io.BytesIO()
    np.savez(out, x=np.stack(rows), lengths=np.array(lengths), meta=np.array(meta))
    sys.stdout.buffer.write(out.getvalue())


def _window(x: Floats, end: int) -> Floats:
    return x[:, end - WINDOW + 1:end + 1].reshape(len(x), -1)


def training_windows(x: Floats, lengths: npt.NDArray[np.int64],
                     wake: npt.NDArray[np.bool_]) -> tuple[Floats, Floats]:
    """Windows holding a whole wake phrase (POSITIVE), and windows of talk at every end and of
    wake clips before the wake word (EARLY): openWakeWord's negatives are everything else."""
    xs, ys = [], []
    for end in POSITIVE:
        xs.append(_window(x[wake], end))
        ys.append(np.ones(int(wake.sum()), np.float32))
    for end in range(WINDOW - 1, x.shape[1]):
        keep = (lengths > end) & (~wake | (end <= EARLY))
        xs.append(_window(x[keep], end))
        ys.append(np.zeros(int(keep.sum()), np.float32))
    return np.concatenate(xs), np.concatenate(ys)


def train(x: Floats, y: Floats, seed: int = 0) -> WakeSpotter:
    """One hidden layer by Adam on the logistic loss, both classes weighing the same in all."""
    rng = np.random.default_rng(seed)
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = ((x - mean) / scale).astype(np.float32)
    params = [rng.normal(0, (2 / z.shape[1]) ** 0.5, (z.shape[1], HIDDEN)).astype(np.float32),
              np.zeros(HIDDEN, np.float32),
              rng.normal(0, (1 / HIDDEN) ** 0.5, HIDDEN).astype(np.float32),
              np.zeros((), np.float32)]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    weight = {1.0: 0.5 / y.mean(), 0.0: 0.5 / (1 - y.mean())}
    step = 0
    for _ in range(EPOCHS):
        order = rng.permutation(len(z))
        for i in range(0, len(z), BATCH):
            batch = order[i:i + BATCH]
            q, target = z[batch], y[batch]
            h = np.maximum(q @ params[0] + params[1], 0)
            p = 1 / (1 + np.exp(-np.clip(h @ params[2] + params[3], -30, 30)))
            g = ((p - target) * np.where(target == 1, weight[1.0], weight[0.0])
                 / len(batch)).astype(np.float32)
            gh = np.outer(g, params[2]) * (h > 0)
            grads = [q.T @ gh + L2 * params[0], gh.sum(axis=0), h.T @ g + L2 * params[2],
                     g.sum()]
            step += 1
            for k, grad in enumerate(grads):
                first[k] = 0.9 * first[k] + 0.1 * grad
                second[k] = 0.999 * second[k] + 0.001 * grad * grad
                # Already float32 (NumPy 2 keeps a Python float weak); the cast is for mypy.
                params[k] = (params[k] - RATE_ADAM * (first[k] / (1 - 0.9 ** step)) / (
                    np.sqrt(second[k] / (1 - 0.999 ** step)) + 1e-8)).astype(np.float32,
                                                                              copy=False)
    return WakeSpotter("hey juniper", mean.astype(np.float32), scale.astype(np.float32),
                       params[0], params[1], params[2], float(params[3]))


def load_features(paths: list[str]
                  ) -> tuple[Floats, npt.NDArray[np.int64], list[dict[str, Any]]]:
    xs, lengths, meta = [], [], []
    for p in paths:
        with np.load(p) as data:
            xs.append(data["x"])
            lengths.append(data["lengths"])
            meta += [json.loads(str(m)) for m in data["meta"]]
    return np.concatenate(xs), np.concatenate(lengths), meta


def scored(spotter: WakeSpotter, x: Floats, lengths: npt.NDArray[np.int64]) -> Floats:
    return np.array([spotter.score_embeddings(e[:n]) for e, n in zip(x, lengths, strict=True)],
                    dtype=np.float32)


def woken(row: dict[str, Any], spot: float, rule: WakeRule) -> bool:
    """Whether `rule` takes a clip, as ClosedWhisperRecognizer.hear decides."""
    if rule.spotted(spot):
        return True
    return not rule.vetoed(spot) and command_woken(row, rule.sure, rule.if_command,
                                                   COMMAND_KINDS)


def weigh(paths: list[str], extra_paths: list[str], row_path: str, alone_path: str,
          write: bool) -> None:
    x, lengths, meta = load_features(paths)
    ex, elengths, emeta = load_features(extra_paths)
    wake = np.array([m["wake"] for m in meta])
    ewake = np.array([m["wake"] for m in emeta])
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for which, rp in (("tune", row_path), ("alone", alone_path)):
        rows |= {(which, n): json.loads(line)
                 for n, line in enumerate(Path(rp).read_text().splitlines())}
    joined = [rows[(m["which"], m["n"])] for m in meta]
    for m, r in zip(meta, joined, strict=True):
        assert (m["voice"], m["cond"], m["said"]) == (r["voice"], r["cond"], r["said"]), m
    voices = np.array([m["voice"] for m in meta])
    evoices = np.array([m["voice"].split("~")[0] for m in emeta])
    left_out = np.zeros(len(meta), np.float32)
    for voice in sorted(set(voices)):
        rest, other = voices != voice, evoices != voice
        spotter = train(*training_windows(np.r_[x[rest], ex[other]],
                                          np.r_[lengths[rest], elengths[other]],
                                          np.r_[wake[rest], ewake[other]]))
        left_out[~rest] = scored(spotter, x[~rest], lengths[~rest])
        print(f"{voice} left out", file=sys.stderr, flush=True)

    def figures(rule: WakeRule) -> str:
        taken = np.array([woken(r, float(s), rule)
                          for r, s in zip(joined, left_out, strict=True)])
        return (f"{int((wake & ~taken).sum())} false rejects of {int(wake.sum())}, "
                f"{int((~wake & taken).sum())} false accepts of {int((~wake).sum())}")

    command = WAKE_CHECKS["command"]
    report = {"command": figures(command),
              "spotter as frozen (WAKE_CHECKS)": figures(WAKE_CHECKS["spotter"])}
    for veto in (None, -2.0, 0.0, 2.0):
        for sure in (None, 4.0, 6.0, 8.0):
            report[f"command, spotter veto {veto}, spotter sure {sure}"] = figures(
                replace(command, spotter_veto=veto, spotter_sure=sure))
    print(json.dumps(report, indent=1))
    if write:
        train(*training_windows(np.r_[x, ex], np.r_[lengths, elengths],
                                np.r_[wake, ewake])).save()
        print("wrote appliance/voice/hearing/wake_spotter.npz", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("features")
    kind = f.add_mutually_exclusive_group()
    kind.add_argument("--alone", action="store_true")
    kind.add_argument("--extra", action="store_true")
    kind.add_argument("--near", action="store_true")
    f.add_argument("--shard", default="0/1")
    w = sub.add_parser("fit")
    w.add_argument("paths", nargs="+")
    w.add_argument("--extra", nargs="+", required=True)
    w.add_argument("--rows", required=True, help="wake_rule_tune.py record's rows")
    w.add_argument("--alone-rows", required=True, help="wake_rule_tune.py record --alone's")
    w.add_argument("--write", action="store_true")
    args = ap.parse_args()
    if args.cmd == "features":
        shard, shards = (int(v) for v in args.shard.split("/"))
        which = "alone" if args.alone else "extra" if args.extra or args.near else "tune"
        every = (extra_clips(args.near) if args.extra or args.near
                 else clips(6, args.alone))
        features(every, shard, shards, which)
    else:
        weigh(args.paths, args.extra, args.rows, args.alone_rows, args.write)


if __name__ == "__main__":
    main()
