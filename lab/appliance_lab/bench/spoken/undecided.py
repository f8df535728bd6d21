"""When the person's takes find two of their phrases nearly as near (issue 44: "scroll up" and
"scroll down" in a noisy room), Whisper is made to choose among them and the sentences spelt
near them (`PersonalHearing.hear`); before, the takes heard nothing and Whisper heard it whole.
What the takes pass on, now and before, for the person's own test items in every condition, for
sentences of the screen not enrolled but spelt near an enrolled one ("tick send"), and for near
misses of the wake phrase followed by an enrolled command ("hey judy, scroll up") said in the
false-accept run's rooms; each heard with the voice's whole enrolment, on the whole clip:
`python -m appliance_lab.bench.spoken.undecided --part tune`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from appliance.voice.hearing.personal import PersonalHearing
from appliance.voice.hearing.stt_whisper import TRAILING_BYTES, as_captured
from appliance_lab.bench.spoken.corpus import (
    Part,
    load_part,
    seed_of,
)
from appliance_lab.bench.spoken.hearing import personal_hearing, spotter_whisper
from appliance_lab.bench.spoken.near_sentences import near_items, near_triples
from appliance_lab.bench.spoken.outcome import heard_on
from appliance_lab.bench.spoken.personal import (
    COMMON,
    CONDITIONS,
    NAMES,
    item_audio,
    make_profile,
    sample_items,
)
from appliance_lab.bench.spoken.personal_fa import FA_CONDITIONS, FA_VARIANTS, line_in, lines
from appliance_lab.bench.stats import share

NEAR_MISS_SCENE = "messages"


@dataclass(frozen=True)
class Passed:
    """One utterance: the person's own command ("own"), a sentence spelt near one ("near"), or a
    near miss and a command ("near_miss"); what the takes passed on at once (their phrase, or
    None: nothing, or only a doubt for Whisper), now and before; whether they were undecided
    between phrases; and, when they were, what Whisper alone woke to (as before)."""

    kind: str
    condition: str
    voice: str
    said: str
    undecided: bool
    spot: float  # the wake spotter's log-odds for the clip
    now: str | None
    before: str | None
    whisper: str | None = None


def _passed(kind: str, condition: str, voice: str, phrase: str, pcm: bytes, scene: str,
            hearing: PersonalHearing) -> Passed:
    sentences, words = heard_on(scene)
    pcm += bytes(TRAILING_BYTES)  # as the STT hands a segment on
    found = hearing.profile.template_set().hear(pcm, lambda p: p in sentences)
    by_takes = hearing.hear(pcm, sentences, False)
    now = None
    if by_takes is not None and not by_takes.doubt and by_takes.wake:
        now = hearing.recognizer.command_words(by_takes.text, True)
    undecided = found is not None and not found.decided
    spotter = hearing.recognizer.spotter
    assert spotter is not None
    whisper = None
    if undecided:
        heard = hearing.verified(hearing.recognizer.transcribe(pcm, sentences, words),
                                 as_captured(pcm))
        if heard.wake:
            whisper = hearing.recognizer.command_words(heard.text, True)
    return Passed(kind, condition, voice, phrase, undecided, round(spotter.score(pcm), 2), now,
                  None if undecided else now, whisper)


def measure(part: Part, workdir: Path, per: int, near_per: int,
            commands_per_miss: int) -> list[Passed]:
    """`per` test items a condition for each voice, `near_per` near sentences a condition, and
    each near miss followed by `commands_per_miss` enrolled commands."""
    whisper = spotter_whisper("undecided")
    triples = near_triples()
    misses = [line for kind, line in lines(part) if kind == "near"]
    commands = (*COMMON, *NAMES[NEAR_MISS_SCENE])
    out: list[Passed] = []
    for voice in load_part(part).voices:
        hearing = {style: personal_hearing(make_profile(workdir, part, voice, style, True, True),
                                   whisper) for style in ("normal", "slow")}
        for item in sample_items(part, per, CONDITIONS, voices=0):
            if item.voice == voice:
                out.append(_passed("own", item.condition, voice.label, item.phrase,
                                   item_audio(item), item.scene, hearing[item.style]))
        for item in near_items(part, voice, near_per, triples, "undecided-near"):
            out.append(_passed("near", item.condition, voice.label, item.phrase,
                               item_audio(item), item.scene, hearing[item.style]))
        rng = random.Random(seed_of("undecided-misses", voice.label))
        for miss in misses:
            for command in rng.sample(commands, commands_per_miss):
                line, room = f"{miss}, {command}", rng.choice(FA_CONDITIONS)
                pcm = line_in(part, voice, line, rng.choice(FA_VARIANTS), room,
                              rng.randrange(1 << 30))
                out.append(_passed("near_miss", room.name, voice.label, line, pcm,
                                   NEAR_MISS_SCENE, hearing["normal"]))
        print(f"undecided: {voice.label} done", file=sys.stderr, flush=True)
    return out


def _counts(rows: list[Passed]) -> dict[str, Any]:
    """Own items: passed on right; near sentences and near misses: taken wrongly (after the
    wake phrase, as something else than what was said)."""
    own = all(p.kind == "own" for p in rows)

    def hit(got: str | None, p: Passed) -> bool:
        return got == p.said if own else got is not None and got != p.said

    return {"n": len(rows), "undecided": sum(p.undecided for p in rows),
            "whisper_woke_to_it": sum(p.undecided and hit(p.whisper, p) for p in rows),
            "now": share(sum(hit(p.now, p) for p in rows), len(rows)),
            "before": share(sum(hit(p.before, p) for p in rows), len(rows)),
            **({"wrong_now": sum(p.now is not None and p.now != p.said for p in rows),
                "wrong_before": sum(p.before is not None and p.before != p.said for p in rows)}
               if own else {})}


def report(found: list[Passed]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("own", "near", "near_miss"):
        rows = [p for p in found if p.kind == kind]
        out[kind] = {"all": _counts(rows), **{
            condition: _counts([p for p in rows if p.condition == condition])
            for condition in dict.fromkeys(p.condition for p in rows)}}
    out["changed"] = [asdict(p) for p in found if p.now != p.before]
    out["rows"] = [asdict(p) for p in found]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("heldout", "tune"), default="tune")
    parser.add_argument("--work", type=Path, default=Path(".cache/personal-templates"))
    parser.add_argument("--per", type=int, default=4, help="own test items a condition")
    parser.add_argument("--near", type=int, default=6, help="near sentences a condition")
    parser.add_argument("--commands", type=int, default=2, help="commands after each near miss")
    args = parser.parse_args()
    found = measure(args.part, args.work, args.per, args.near, args.commands)
    print(json.dumps({"part": args.part, **report(found)}, indent=2))


if __name__ == "__main__":
    main()
