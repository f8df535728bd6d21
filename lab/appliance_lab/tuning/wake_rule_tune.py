"""Tuning figures for the wake rules of closed_whisper.WAKE_CHECKS, on the TUNING part only.

Each clip is heard once as the pipeline hears it with the fixed pass alone deciding the wake
phrase (so what would follow a wake is known), and the second opinion's evidence is taken
apart; the rules (strict, lenient, strict and lenient before a command of the screen) are
then weighed offline. Wake items are heard on their own scene, speech without the wake phrase
on Messages (as `appliance bench voice` hears it for false accepts). Usage:
    python -m appliance_lab.tuning.wake_rule_tune record --per 6 > rows.jsonl
    python -m appliance_lab.tuning.wake_rule_tune record --alone > alone.jsonl
    python -m appliance_lab.tuning.wake_rule_tune weigh rows.jsonl alone.jsonl
"""

from __future__ import annotations

import collections
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from appliance.voice.commands import engines
from appliance.voice.hearing.closed_whisper import (
    LENIENT,
    STRICT,
    WAKE_CHECKS,
    ClosedWhisperRecognizer,
    Heard,
    WakeCheck,
    WakeEvidence,
)
from appliance.voice.hearing.stt_whisper import speech_of
from appliance_lab.bench.spoken.conditions import CONDITIONS
from appliance_lab.bench.spoken.false_accepts import SCENE as FA_SCENE
from appliance_lab.bench.spoken.outcome import heard_on
from appliance_lab.tuning.record_then_weigh import record_then_weigh
from appliance_lab.tuning.wake_clips import COND_NAMES, non_wake_clips, non_wake_lines, wake_clips

COMMAND_KINDS = frozenset({"sentence", "doubtful", "alone"})
"""What may follow a doubtful wake phrase the command check takes (ClosedWhisperRecognizer.hear:
a sentence of the screen, sure or doubtful, or nothing)."""


def kind(heard: Heard) -> str:
    """What followed a wake phrase: a sure or doubtful sentence of the screen, open words,
    nothing, or words not caught."""
    if heard.path == "closed":
        return "doubtful" if heard.doubtful else "sentence"
    if heard.not_caught:
        return "not_caught"
    return "open" if heard.text.strip() != "hey juniper" else "alone"


Clip = tuple[bool, str, str, str, str, bytes]
"""(wake phrase said, voice, condition, scene, what was said after it or instead, audio)."""


def clips(per: int, alone: bool) -> Iterator[Clip]:
    """The tuning clips: `per` wake items per voice and condition, then each voice's speech
    without the wake phrase (near misses included); `alone`: the wake phrase said on its own
    ("Hey juniper.", then a pause) by each voice in each condition, as the corpus's items
    always say a command after it."""
    conds = [c for c in CONDITIONS if c.name in COND_NAMES]
    if not alone:
        for item, pcm in wake_clips(per, conds):
            yield True, item.voice.label, item.condition.name, item.scene, item.sentence, pcm
    lines = ["hey juniper"] if alone else non_wake_lines()
    for voice, cond, line, pcm in non_wake_clips(lines, conds):
        yield alone, voice.label, cond.name, FA_SCENE, "" if alone else line, pcm


def record(per: int, alone: bool) -> None:
    loaded = engines(progress=False)
    assert loaded.whisper is not None
    rec = ClosedWhisperRecognizer(loaded.whisper, wake_check=None)
    every = list(clips(per, alone))
    for n, (wake, label, cond_name, scene, said, pcm) in enumerate(every, 1):
        heard = rec.hear(pcm, *heard_on(scene))
        row: dict[str, Any] = {"wake": wake, "voice": label, "cond": cond_name, "said": said,
                               "fixed": heard.wake, "text": heard.text, "kind": kind(heard)}
        if heard.wake:
            x = speech_of(pcm)
            row["evidence"] = rec.wake_evidence(*rec.scorer.encode(x)).__dict__
        print(json.dumps(row), flush=True)
        if n % 100 == 0:
            print(f"{n} of {len(every)}", file=sys.stderr, flush=True)


def woken(row: dict[str, Any], sure: WakeCheck, if_command: WakeCheck | None,
          kinds: frozenset[str]) -> bool:
    if not row["fixed"]:
        return False
    ev = WakeEvidence(**row["evidence"])
    if sure.passes(ev):
        return True
    return if_command is not None and if_command.passes(ev) and row["kind"] in kinds


def weigh(paths: list[Path]) -> None:
    rows = [json.loads(line) for p in paths for line in p.read_text().splitlines()]
    wake = [r for r in rows if r["wake"]]
    other = [r for r in rows if not r["wake"]]
    sentence = frozenset({"sentence"})
    command = WAKE_CHECKS["command"]
    rules: dict[str, tuple[WakeCheck, WakeCheck | None, frozenset[str]]] = {
        "fixed pass alone": (WakeCheck(-1e9, True, False), None, sentence),
        "strict": (STRICT, None, sentence),
        "lenient": (LENIENT, None, sentence),
        "command (WAKE_CHECKS)": (command.sure, command.if_command, COMMAND_KINDS),
    }
    for kinds in (sentence, frozenset({"sentence", "doubtful"}), COMMAND_KINDS,
                  COMMAND_KINDS | {"not_caught"}):
        for sure_m in (-2.25, -3.0):
            sure = WakeCheck(sure_m, word_only=False, no_speech_rejects=True)
            rules[f"strict {sure_m}, lenient before {'+'.join(sorted(kinds))}"] = (
                sure, LENIENT, kinds)
    # The wake items whose words were heard right: what a rejection loses.
    right = [r for r in wake if r["text"] == f"hey juniper {r['said']}"]
    out = {}
    for name, (sure, if_command, kinds) in rules.items():
        fr = [r for r in wake if not woken(r, sure, if_command, kinds)]
        fa = [r for r in other if woken(r, sure, if_command, kinds)]
        by_cond = collections.Counter(r["cond"] for r in fr)
        out[name] = {"false_rejects": f"{len(fr)} of {len(wake)}",
                     "heard_right_rejected": f"{sum(r in fr for r in right)} of {len(right)}",
                     "fr_by_condition": dict(by_cond),
                     "fr_female_variants": sum("+" in r["voice"] for r in fr),
                     "false_accepts": f"{len(fa)} of {len(other)}",
                     "fa_said": collections.Counter(r["said"] for r in fa).most_common(5)}
    print(json.dumps(out, indent=1))


def main() -> None:
    record_then_weigh(__doc__, lambda args: record(args.per, args.alone), weigh, per=6,
                      record_options=lambda p: p.add_argument("--alone", action="store_true"))


if __name__ == "__main__":
    main()
