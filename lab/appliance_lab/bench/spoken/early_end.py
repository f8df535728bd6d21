"""Whether a sure match of the person's takes may end the utterance at a pause (issue 44): the
sweep behind END_ON_MATCH, END_RIVAL_RATIO and END_START_RATIO (voice/hearing/personal.py).
Each test item is cut at every pause the VAD would speculate on (60 ms unvoiced), or with
`--every` at every step within the speech (a person who pauses anywhere), and the takes hear
each cut as the pipeline would; a cut with speech after it that the takes match surely would
end the command in fragments. Templates only, no pipeline:
`python -m appliance_lab.bench.spoken.early_end --part tune [--every 160]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import webrtcvad  # type: ignore[import-untyped]

from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.stt_whisper import RATE, TRAILING_BYTES
from appliance.voice.hearing.templates import RIVAL_RATIO
from appliance.voice.hearing.vad import FRAME_MS, VadSettings
from appliance_lab import REPO
from appliance_lab.bench.spoken.corpus import Part, load_part
from appliance_lab.bench.spoken.personal import CONDITIONS, item_audio, make_profile, sample_items
from appliance_lab.bench.stats import percentiles, wilson

THRESHOLDS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
"""The least sureness tried (1 at a take, 0 at the phrase's bound)."""
RIVAL_RATIOS = (0.4, 0.5, 0.6, 0.7)
"""The most a match's distance may be of the nearest other phrase's, tried."""
START_RATIOS = (0.6, 0.7, 0.8, 1.0)
"""The most it may be of how near it comes to the start of another phrase's take, tried at
START_TRIED (elsewhere: any)."""
START_TRIED = tuple(product((0.3, 0.4, 0.5), (0.6, RIVAL_RATIO)))
"""The least sureness and most rival ratio each start ratio is tried at (RIVAL_RATIO: any match
the takes decide)."""
ANSWERS = ("yes", "no")
"""The enrolled answers: never ended early (the product's rule)."""
FRAME_BYTES = RATE * FRAME_MS // 1000 * 2
TAIL_MS = 120
"""Voiced speech after a cut no longer than this is the end of the last word, not more words."""


@dataclass(frozen=True)
class Cut:
    """One pause the VAD would speculate on: whether speech follows it in the clip, what the
    takes heard up to it (None: nothing within bounds) and how surely, against the item's."""

    condition: str
    phrase: str
    after_ms: int  # voiced speech after the cut
    last: bool  # no more than TAIL_MS of speech follows (a word's last stop, "it")
    heard: str | None
    sureness: float
    right: bool
    ms: float
    rival_ratio: float  # the match's distance over the nearest other phrase's
    start_ratio: float  # over the nearest start of another phrase's take (`TemplateMatch.start`)


def voiced_frames(pcm: bytes, settings: VadSettings) -> list[bool]:
    """Whether the VAD hears speech in each of the clip's frames."""
    vad = webrtcvad.Vad(settings.aggressiveness)
    return [vad.is_speech(pcm[i:i + FRAME_BYTES], RATE)
            for i in range(0, len(pcm) - FRAME_BYTES + 1, FRAME_BYTES)]


def pauses(pcm: bytes, settings: VadSettings) -> list[tuple[int, int]]:
    """Each point (bytes) where `speculate_secs` of silence follows speech, and how much voiced
    sound (ms) comes after it."""
    return pauses_in(voiced_frames(pcm, settings), settings)


def pauses_in(frames: list[bool], settings: VadSettings) -> list[tuple[int, int]]:
    """`pauses`, from the clip's frames as `voiced_frames` reads them."""
    wait = round(settings.speculate_secs * 1000 / FRAME_MS)
    start = round(settings.start_secs * 1000 / FRAME_MS)
    run, quiet, began, cuts = 0, 0, False, []
    for n, voiced in enumerate(frames):
        run = run + 1 if voiced else 0
        quiet = 0 if voiced else quiet + 1
        began = began or run >= start
        if began and quiet == wait:
            cuts.append((n + 1) * FRAME_BYTES)
    return [(c, sum(frames[c // FRAME_BYTES:]) * FRAME_MS) for c in cuts]


def everywhere(pcm: bytes, settings: VadSettings, step_ms: int) -> list[tuple[int, int]]:
    """Every `step_ms` within the speech, as `pauses` gives them: where a person who pauses
    anywhere (mid-phrase, mid-word) might, and how much voiced sound (ms) comes after."""
    frames = voiced_frames(pcm, settings)
    voiced = [n for n, v in enumerate(frames) if v]
    if not voiced:
        return []
    step = max(1, step_ms // FRAME_MS)
    return [((n + 1) * FRAME_BYTES, sum(frames[n + 1:]) * FRAME_MS)
            for n in range(voiced[0] + step, voiced[-1] + 1, step)]


def cuts(part: Part, per: int, voices: int, workdir: Path, every_ms: int = 0) -> list[Cut]:
    out: list[Cut] = []
    settings = VadSettings()
    for voice in list(load_part(part).voices)[: voices or None]:
        templates = {style: VoiceProfile(make_profile(workdir, part, voice, style)).template_set()
                     for style in ("normal", "slow")}
        for item in sample_items(part, per, CONDITIONS, voices=0):
            if item.voice != voice:
                continue
            pcm = item_audio(item)
            at_cuts = everywhere(pcm, settings, every_ms) if every_ms else pauses(pcm, settings)
            for at, after_ms in at_cuts:
                started = time.monotonic()
                cut = pcm[:at] + bytes(TRAILING_BYTES)
                found = templates[item.style].hear(cut, lambda _phrase: True)
                ms = (time.monotonic() - started) * 1000
                out.append(Cut(item.condition, item.phrase, after_ms, after_ms <= TAIL_MS,
                               found.phrase if found else None,
                               found.sureness if found else 0.0,
                               found is not None and found.phrase == item.phrase, ms,
                               found.distance / found.rival if found else 1.0,
                               found.distance / found.start if found else 1.0))
        print(f"early-end: {voice.label} done", file=sys.stderr, flush=True)
    return out


def _ends(cut: Cut, least: float, most: float, start: float | None) -> bool:
    return (cut.heard is not None and cut.heard not in ANSWERS and cut.sureness >= least
            and cut.rival_ratio <= most and (start is None or cut.start_ratio <= start))


def report(found: list[Cut]) -> dict[str, Any]:
    """For each least sureness and most rival ratio, and at START_TRIED's with each most ratio
    to the nearest start of another phrase's take: the utterances it ends at their last pause
    (right, wrong), and the cuts with speech still to come that it would end (fragments; those
    heard as another phrase named), by condition. Answers ("yes", "no") never end early: a
    fragment can pass for one."""
    rows = []
    tried = [*((least, most, None) for least, most in product(THRESHOLDS, RIVAL_RATIOS)),
             *((least, most, start) for (least, most), start in product(START_TRIED,
                                                                        START_RATIOS))]
    for least, most, start in tried:
        for condition in (*CONDITIONS, "all"):
            mine = [c for c in found if condition in ("all", c.condition)]
            last = [c for c in mine if c.last]
            ended = [c for c in last if _ends(c, least, most, start)]
            early = [c for c in mine if not c.last and _ends(c, least, most, start)]
            right = sum(c.right for c in ended)
            rows.append({
                "least_sureness": least, "most_rival_ratio": most, "most_start_ratio": start,
                "condition": condition,
                "last_pauses": len(last),
                "ended_right": {"count": right, "ci95": wilson(right, len(last))},
                "ended_wrong": sum(not c.right for c in ended),
                "inner_pauses": sum(not c.last for c in mine),
                "fragments": len(early),
                "fragments_wrong": sum(c.heard != c.phrase for c in early),
                "fragments_heard_wrong": sorted(
                    f"{c.phrase} -> {c.heard} ({c.sureness:.2f}, rival {c.rival_ratio:.2f}, "
                    f"start {c.start_ratio:.2f}, {c.after_ms} ms more)"
                    for c in early if c.heard != c.phrase),
            })
    return {"rows": rows, "hear_ms": percentiles([c.ms for c in found if c.last])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("tune", "heldout"), default="tune")
    parser.add_argument("--per", type=int, default=3, help="test items per voice and condition")
    parser.add_argument("--voices", type=int, default=0, help="the part's first N voices")
    parser.add_argument("--every", type=int, default=0,
                        help="cut every N ms within the speech, not only at the VAD's pauses")
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "personal-templates")
    args = parser.parse_args()
    found = cuts(args.part, args.per, args.voices, args.work, args.every)
    print(json.dumps({"part": args.part, "per": args.per, "voices": args.voices,
                      "every_ms": args.every,
                      **report(found)}, indent=2))


if __name__ == "__main__":
    main()
