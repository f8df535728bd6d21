"""Tuning figures for closed-set recognition (issue 15): the open path (Whisper with the screen
prompt) and the closed path (appliance/voice/hearing/closed_whisper.py) on the same audio.

Tuning voices only: Piper and espeak-ng's plain en-us / en male voices at a few rates, clean and
with white noise added here. Never festival, flite or espeak-ng's +f variants (held out).
Prints one JSON object. Usage:
    python -m appliance_lab.tuning.closed_set_tune [--noise-db 10] [--limit N] \
        [--voices piper,en-us-150]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar.planner import GrammarPlanner
from appliance.voice.audio.pcm import load_wav
from appliance.voice.commands import engines, speech_pcm
from appliance.voice.hearing.closed_set import closed_set
from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
from appliance.voice.hearing.stt_whisper import TRAILING_SILENCE_S
from appliance.voice.hearing.wake import WakeGate
from appliance.voice.sink import COMMAND_WORDS, screen_names_of
from appliance_lab.bench.spoken.outcome import scene_path

SCENES = {name: scene_path(name) for name in ("messages", "mail", "radio", "settings")}
COMMON = ["undo that", "what is on the screen", "cancel that", "scroll down"]
COMMANDS = {
    "messages": ["tick urgent", "untick urgent", "click send", "press call", "select grandma",
                 "select the doctor", "click delete conversation", "open the calendar",
                 "go to the message box", "read the status"],
    "mail": ["click reply", "press forward", "click delete", "select lunch on sunday",
             "open photos from the garden", "click mark as unread", "click send reply",
             "go to the search mail box", "open the radio", "read the preview"],
    "radio": ["click play", "tick mute", "untick mute", "select jazz fm", "select radio four",
              "click sleep timer", "turn the volume up", "open messages", "select classic fm",
              "read now playing"],
    "settings": ["tick large text", "untick high contrast", "tick screen reader", "click save",
                 "click help", "click reset to defaults", "select amy", "go to the sound tab",
                 "turn the brightness down", "open the radio"],
}
OPEN = {  # dictation and sentences outside the grammar: the open path must take these
    "messages": ["type hello grandma in the message box", "what's the weather like tomorrow"],
    "mail": ["type thank you for the photos in the reply text box", "tell me a joke about cats"],
    "radio": ["type jazz in the station box", "who won the football last night"],
    "settings": ["type my name is joe in the speaking voice box", "how old is the queen"],
}
ESPEAK = {"en-us-150": ("en-us", 150), "en-us-190": ("en-us", 190), "en-130": ("en", 130)}
CACHE = Path(tempfile.gettempdir()) / "closed-set-tune"


def speech(text: str, voice: str) -> bytes:
    """16 kHz PCM of `text` in a tuning voice, cached on disk."""
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"{voice}-{zlib.crc32(text.encode()):08x}.pcm"
    if path.exists():
        return path.read_bytes()
    if voice == "piper":
        pcm = speech_pcm(text[:1].upper() + text[1:] + ".", "piper")
    else:
        name, rate = ESPEAK[voice]
        wav = CACHE / "tmp.wav"
        subprocess.run(["espeak-ng", "-v", name, "-s", str(rate), "-w", str(wav), text],
                       check=True, capture_output=True)
        pcm = load_wav(wav).data
    path.write_bytes(pcm)
    return pcm


def noisy(pcm: bytes, snr_db: float | None, seed: int) -> bytes:
    """0.3 s of silence either side (as the VAD's pre-roll), white noise at `snr_db`."""
    pad = np.zeros(4800, dtype=np.float32)
    x = np.concatenate([pad, np.frombuffer(pcm, "<i2").astype(np.float32), pad])
    if snr_db is not None:
        power = float(np.mean(np.square(x[x != 0]))) if np.any(x) else 1.0
        rng = np.random.default_rng(seed)
        x = x + rng.normal(0, np.sqrt(power / 10 ** (snr_db / 10)), len(x)).astype(np.float32)
    out: bytes = np.clip(x, -32768, 32767).astype("<i2").tobytes()
    return out + bytes(int(TRAILING_SILENCE_S * 16000) * 2)


def same_action(planner: GrammarPlanner, snap: Any, said: str, meant: str) -> bool:
    want = planner.parse(meant, snap)
    got = planner.parse(said, snap)
    if want is None or got is None:
        return want is None and got is None and said.strip() == meant.strip()
    drop = {"words", "confidence"}
    return bool(want.model_dump(exclude=drop) == got.model_dump(exclude=drop))


def pct(xs: list[float], q: float) -> float:
    return round(float(np.percentile(xs, q)), 1) if xs else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--noise-db", type=float, default=None)
    ap.add_argument("--voices", default="piper,en-us-150,en-us-190,en-130")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--rows", default="", help="write every utterance's row to this JSON file")
    args = ap.parse_args()
    loaded = engines(progress=False)
    assert loaded.whisper is not None
    recognizer = ClosedWhisperRecognizer(loaded.whisper)
    planner = GrammarPlanner()
    gate = WakeGate()
    rows: list[dict[str, Any]] = []
    for scene_name, path in SCENES.items():
        snap = SimDesktop.from_file(path).snapshot()
        names = screen_names_of(snap)
        vocabulary = [*names.targets, *names.apps, *COMMAND_WORDS, "yes", "no"]
        built = time.monotonic()
        sentences = closed_set(*names)
        build_ms = (time.monotonic() - built) * 1000
        lines = [(c, "closed") for c in COMMON + COMMANDS[scene_name]]
        lines += [(c, "open") for c in OPEN[scene_name]]
        if args.limit:
            lines = lines[: args.limit]
        for voice in args.voices.split(","):
            for i, (command, kind) in enumerate(lines):
                pcm = noisy(speech("hey juniper, " + command, voice), args.noise_db, i)
                t0 = time.monotonic()
                opened = loaded.whisper.transcribe(pcm, vocabulary, "hey juniper")
                open_ms = (time.monotonic() - t0) * 1000
                open_rest = gate.split(opened.text)
                t0 = time.monotonic()
                heard = recognizer.hear(pcm, sentences, vocabulary)
                closed_ms = (time.monotonic() - t0) * 1000
                closed_rest = gate.split(heard.text)
                rows.append({
                    "scene": scene_name, "voice": voice, "kind": kind, "said": command,
                    "sentences": len(sentences.sentences), "build_ms": round(build_ms, 1),
                    "open": opened.text, "open_ms": round(open_ms, 1),
                    "open_wake": open_rest is not None,
                    "open_ok": open_rest is not None
                    and same_action(planner, snap, open_rest, command),
                    "closed": heard.text, "path": heard.path, "greedy": heard.greedy,
                    "score": heard.score, "greedy_score": heard.greedy_score,
                    "best": heard.best,
                    "greedy_ok": gate.split(heard.greedy) is not None
                    and same_action(planner, snap, gate.split(heard.greedy) or "", command),
                    "best_ok": heard.wake and same_action(planner, snap, heard.best, command),
                    "closed_ms": round(closed_ms, 1), "closed_wake": heard.wake,
                    "closed_ok": closed_rest is not None
                    and same_action(planner, snap, closed_rest, command),
                })
    summary: dict[str, Any] = {"noise_db": args.noise_db, "n": len(rows)}
    for kind in ("closed", "open"):
        sel = [r for r in rows if r["kind"] == kind]
        if not sel:
            continue
        summary[f"{kind}_sentences"] = {
            "n": len(sel),
            "open_path_ok": round(statistics.mean(r["open_ok"] for r in sel), 3),
            "closed_path_ok": round(statistics.mean(r["closed_ok"] for r in sel), 3),
            "open_path_wake": round(statistics.mean(r["open_wake"] for r in sel), 3),
            "closed_path_wake": round(statistics.mean(r["closed_wake"] for r in sel), 3),
            "went_closed": round(statistics.mean(r["path"] == "closed" for r in sel), 3),
        }
    summary["open_ms_p50_p95"] = [pct([r["open_ms"] for r in rows], 50),
                                  pct([r["open_ms"] for r in rows], 95)]
    summary["closed_ms_p50_p95"] = [pct([r["closed_ms"] for r in rows], 50),
                                    pct([r["closed_ms"] for r in rows], 95)]
    summary["build_ms"] = {r["scene"]: r["build_ms"] for r in rows}
    summary["sentences"] = {r["scene"]: r["sentences"] for r in rows}
    summary["misses"] = [
        {k: r[k] for k in ("scene", "voice", "said", "open", "closed", "path", "greedy", "score",
                           "greedy_score")}
        for r in rows if r["closed_ok"] != r["open_ok"]
    ]
    print(json.dumps(summary, indent=1))
    if args.rows:
        Path(args.rows).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
