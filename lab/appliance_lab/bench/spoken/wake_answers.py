"""Answers said after the wake phrase (issue 44, `ANSWERS` in voice/hearing/personal.py): the
person's own "hey juniper, yes" and "hey juniper, no" in every condition, and near misses
followed by an answer ("hi jupiter, no") said in the false-accept run's rooms, each heard with
the voice's whole enrolment by the takes and Whisper together (`PersonalHearing.transcribe`),
now and as before (an answer the takes heard after the wake phrase left to Whisper alone): how
many are taken as the wake phrase and that answer. Each on the whole clip, not the pipeline's
segment of it:
`python -m appliance_lab.bench.spoken.wake_answers --part tune`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
from appliance.voice.hearing.personal import PersonalHearing
from appliance.voice.hearing.stt_whisper import TRAILING_BYTES, Transcript, as_captured
from appliance_lab.bench.spoken.corpus import (
    Part,
    load_part,
    seed_of,
)
from appliance_lab.bench.spoken.hearing import personal_hearing, spotter_whisper
from appliance_lab.bench.spoken.outcome import heard_on
from appliance_lab.bench.spoken.personal import (
    CONDITIONS,
    TEST,
    SpokenItem,
    Style,
    item_audio,
    make_profile,
)
from appliance_lab.bench.spoken.personal_fa import FA_CONDITIONS, FA_VARIANTS, line_in, lines
from appliance_lab.bench.stats import share

ANSWER_WORDS = ("yes", "no")
SCENE = "messages"


@dataclass(frozen=True)
class Answered:
    """One utterance, the person's ("own") or a near miss ("near"), and whether it was taken as
    the wake phrase and the answer said, now and before."""

    kind: str
    condition: str
    voice: str
    said: str
    takes_answer: bool  # the takes heard the wake phrase and an answer
    spotter_knows: bool  # the wake spotter takes the person's own wake takes
    now: str  # what the takes and Whisper together pass on
    now_woke: bool
    before: str  # the same, the takes' answer after a wake phrase left to Whisper alone
    before_woke: bool


def _woke_with(heard: Transcript, answer: str, whisper: ClosedWhisperRecognizer) -> bool:
    return bool(heard.wake) and whisper.command_words(heard.text, True) == answer


def _answered(kind: str, condition: str, voice: str, line: str, answer: str, pcm: bytes,
              hearing: PersonalHearing) -> Answered:
    sentences, words = heard_on(SCENE)
    pcm += bytes(TRAILING_BYTES)  # as the STT hands a segment on
    whisper = hearing.recognizer
    now = hearing.transcribe(pcm, sentences, words, False)
    by_takes = hearing.hear(pcm, sentences, False)
    takes_answer = (by_takes is not None and bool(by_takes.wake)
                    and whisper.command_words(by_takes.text, True) in ANSWER_WORDS)
    before = (hearing.verified(whisper.transcribe(pcm, sentences, words), as_captured(pcm))
              if takes_answer else now)
    return Answered(kind, condition, voice, line, takes_answer, hearing.spotter_knows_voice(),
                    now.text, _woke_with(now, answer, whisper), before.text,
                    _woke_with(before, answer, whisper))


def measure(part: Part, workdir: Path, near_style: Style = "normal",
            own: bool = True) -> list[Answered]:
    """Every voice's "hey juniper, yes/no" in every condition (one take each), and every near
    miss followed by each answer, in a room drawn as the false-accept run draws them, heard
    with the profile of `near_style` (a slow speaker's, to whom others talk as usual)."""
    whisper = spotter_whisper("wake_answers")
    out: list[Answered] = []
    rng = random.Random(f"wake-answers|{part}")
    for voice in load_part(part).voices:
        for condition in CONDITIONS if own else ():
            for answer in ANSWER_WORDS:
                item = SpokenItem(part, voice, SCENE, answer, condition,
                                  seed_of("wake-answers", voice.label, condition, answer)
                                  % len(TEST["slow" if condition == "slow" else "normal"]))
                profile = make_profile(workdir, part, voice, item.style, True, True)
                hearing = personal_hearing(profile, whisper)
                out.append(_answered("own", condition, voice.label, item.text, answer,
                                     item_audio(item), hearing))
        profile = make_profile(workdir, part, voice, near_style, True, True)
        hearing = personal_hearing(profile, whisper)
        for near in (line for kind, line in lines(part) if kind == "near"):
            for answer in ANSWER_WORDS:
                line, room = f"{near}, {answer}", rng.choice(FA_CONDITIONS)
                pcm = line_in(part, voice, line, rng.choice(FA_VARIANTS), room,
                              rng.randrange(1 << 30))
                out.append(_answered("near", room.name, voice.label, line, answer, pcm,
                                     hearing))
        print(f"wake_answers: {voice.label} done", file=sys.stderr, flush=True)
    return out


def _counts(rows: list[Answered]) -> dict[str, Any]:
    return {"n": len(rows), "now": share(sum(a.now_woke for a in rows), len(rows)),
            "before": share(sum(a.before_woke for a in rows), len(rows)),
            "takes_heard_an_answer": sum(a.takes_answer for a in rows),
            "spotter_knows_the_voice": sum(a.spotter_knows for a in rows)}


def report(found: list[Answered]) -> dict[str, Any]:
    own = [a for a in found if a.kind == "own"]
    near = [a for a in found if a.kind == "near"]
    return {
        "own": {condition: _counts([a for a in own if a.condition == condition])
                for condition in CONDITIONS},
        "own_all": _counts(own),
        "near_misses": _counts(near),
        "near_taken_now_not_before": [asdict(a) for a in near if a.now_woke and not a.before_woke],
        "own_changed": [asdict(a) for a in own if a.now_woke != a.before_woke],
        "own_lost_now": [asdict(a) for a in own if not a.now_woke],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("heldout", "tune"), default="tune")
    parser.add_argument("--work", type=Path, default=Path(".cache/personal-templates"))
    parser.add_argument("--near-style", choices=("normal", "slow"), default="normal",
                        help="whose profile hears the near misses")
    parser.add_argument("--near-only", action="store_true", help="no items of the person's own")
    args = parser.parse_args()
    found = measure(args.part, args.work, args.near_style, not args.near_only)
    print(json.dumps({"part": args.part, "near_style": args.near_style, **report(found)},
                     indent=2))


if __name__ == "__main__":
    main()
