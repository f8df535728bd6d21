"""Whether a match of the person's takes that is decided but not sure enough to end the
utterance at once may end it after part of the person's wait (`likely_end_share`,
voice/hearing/vad.py; `may_end_at_match`, voice/hearing/personal.py). Each test item, followed
by the silence the pipeline bench puts after it, is cut at every pause the VAD would
speculate on; the takes (the voice's whole enrolment) hear each cut as the pipeline would. A
last pause the rule ends is a command answered sooner; an inner pause at least that long with
speech after it is a command cut in fragments. Templates only, no pipeline:
`python -m appliance_lab.bench.spoken.late_end --part tune`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from itertools import product
from pathlib import Path
from typing import Any

from appliance.voice.hearing.personal import (
    ANSWERS,
    END_ON_MATCH,
    END_RIVAL_RATIO,
    END_START_RATIO,
    spelt_near,
)
from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.stt_whisper import RATE, TRAILING_BYTES
from appliance.voice.hearing.vad import FRAME_MS, VadSettings
from appliance_lab import REPO
from appliance_lab.bench.spoken.corpus import Part, load_part
from appliance_lab.bench.spoken.early_end import FRAME_BYTES, TAIL_MS, pauses_in, voiced_frames
from appliance_lab.bench.spoken.outcome import heard_on
from appliance_lab.bench.spoken.personal import CONDITIONS, item_audio, make_profile, sample_items
from appliance_lab.bench.spoken.runs import GAP_S
from appliance_lab.bench.stats import share

SHARES = (0.4, 0.5, 0.6, 1.0)
"""The shares of the person's wait tried (1: as before, the whole wait)."""
START_RATIOS = (END_START_RATIO, 1.0)
"""The most a match may be of how near it comes to another phrase's start, tried."""
NEVER = 10 ** 6
"""A pause that lasts to the end of the clip."""


@dataclass(frozen=True)
class Pause:
    """One pause the VAD would speculate on: how long it lasts, whether speech follows, and
    what the takes heard up to it (None: nothing within bounds)."""

    condition: str
    phrase: str
    wait_ms: float  # the person's wait after speech (their profile's)
    pause_ms: int  # from the last voiced frame to the next (NEVER: none follows)
    last: bool  # no more than TAIL_MS of speech follows
    heard: str | None
    decided: bool
    near: bool  # a sentence not enrolled is spelt near it: Whisper must choose
    in_full: bool  # nothing the screen allows goes on from it
    answer: bool  # an answer (ANSWERS): never ended early
    sureness: float
    rival_ratio: float
    start_ratio: float

    @property
    def may_end(self) -> bool:
        """Whether any rule of the product's could end it (not counting Whisper's choice)."""
        return (self.heard is not None and self.decided and not self.near and self.in_full
                and not self.answer)

    @property
    def ends_at_once(self) -> bool:
        return (self.may_end and self.sureness >= END_ON_MATCH
                and self.rival_ratio <= END_RIVAL_RATIO and self.start_ratio <= END_START_RATIO)


def pause_length(frames: list[bool], at: int) -> int:
    """How long (ms) the pause speculated on at byte `at` lasts, from its last voiced frame to
    the next (NEVER: none follows)."""
    first = at // FRAME_BYTES
    quiet = first
    while quiet > 0 and not frames[quiet - 1]:
        quiet -= 1
    after = first
    while after < len(frames) and not frames[after]:
        after += 1
    return (after - quiet) * FRAME_MS if after < len(frames) else NEVER


def measure(part: Part, per: int, workdir: Path) -> list[Pause]:
    out: list[Pause] = []
    settings = VadSettings()
    gap = bytes(int(GAP_S * RATE) * 2)
    for voice in load_part(part).voices:
        profiles = {style: VoiceProfile(make_profile(workdir, part, voice, style, True, True))
                    for style in ("normal", "slow")}
        for item in sample_items(part, per, CONDITIONS, voices=0):
            if item.voice != voice:
                continue
            profile = profiles[item.style]
            templates = profile.template_set()
            wait_ms = 1000 * max(settings.stop_secs, profile.end_of_speech_s() or 0.0)
            sentences, _ = heard_on(item.scene)
            pcm = item_audio(item) + gap
            frames = voiced_frames(pcm, settings)
            for at, after_ms in pauses_in(frames, settings):
                pause_ms = pause_length(frames, at)
                found = templates.hear(pcm[:at] + bytes(TRAILING_BYTES),
                                       sentences.__contains__)
                out.append(Pause(
                    item.condition, item.phrase, wait_ms, pause_ms, after_ms <= TAIL_MS,
                    found.phrase if found else None, found is not None and found.decided,
                    found is not None and bool(spelt_near(found.phrase, sentences,
                                                          templates.phrases)),
                    found is not None and sentences.said_in_full(found.phrase)
                    and not sentences.runs_on(found.phrase),
                    found is not None and sentences.intent_of(found.phrase) in ANSWERS,
                    found.sureness if found else 0.0,
                    found.distance / found.rival if found else 1.0,
                    found.distance / found.start if found else 1.0))
        print(f"late-end: {voice.label} done", file=sys.stderr, flush=True)
    return out


def report(found: list[Pause]) -> dict[str, Any]:
    """For each share of the wait and most start ratio: the last pauses ended at once (as
    now) and after that share (right, wrong), and the inner pauses as long with speech still
    to come that it would end (fragments, those heard as another phrase named)."""
    last = [p for p in found if p.last]
    inner = [p for p in found if not p.last]
    rows = []
    for part_of_wait, start in product(SHARES, START_RATIOS):
        def later(p: Pause, part_of_wait: float = part_of_wait, start: float = start) -> bool:
            return (part_of_wait < 1 and p.may_end and not p.ends_at_once
                    and p.start_ratio <= start and p.pause_ms >= part_of_wait * p.wait_ms)

        won = [p for p in last if later(p)]
        cut = [p for p in inner if later(p)]
        rows.append({
            "share_of_wait": part_of_wait, "most_start_ratio": start,
            "last_ended_later_right": share(sum(p.heard == p.phrase for p in won), len(last)),
            "last_ended_later_wrong": sum(p.heard != p.phrase for p in won),
            "inner_pauses_as_long": sum(p.pause_ms >= part_of_wait * p.wait_ms for p in inner),
            "fragments": len(cut),
            "fragments_heard_wrong": sorted(
                f"{p.phrase} -> {p.heard} ({p.condition}, pause {p.pause_ms} ms, start "
                f"{p.start_ratio:.2f})" for p in cut if p.heard != p.phrase),
        })
    at_once = [p for p in last if p.ends_at_once]
    return {"last_pauses": len(last), "inner_pauses": len(inner),
            "last_ended_at_once_right": share(sum(p.heard == p.phrase for p in at_once),
                                              len(last)),
            "rows": rows, "pauses": [asdict(p) for p in found]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("tune", "heldout"), default="tune")
    parser.add_argument("--per", type=int, default=4, help="test items per voice and condition")
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "personal-templates")
    args = parser.parse_args()
    found = measure(args.part, args.per, args.work)
    print(json.dumps({"part": args.part, "per": args.per, **report(found)}, indent=2))


if __name__ == "__main__":
    main()
