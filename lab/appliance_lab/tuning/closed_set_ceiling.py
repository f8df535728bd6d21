"""How many TUNING commands Whisper tiny.en's two opinions could get right at all (issue 15).

For each sampled item: what the recognizer does now (the `spotter` rule, every threshold as
frozen), and two oracles on the same full-window pass. The closed oracle is right when a
sentence that plans the right action scores best of the candidates: the sentences nearest
what was said and what Whisper wrote, and dictation's templates around each. Fewer candidates
than the whole set only make this an upper bound; an item with no candidate that plans the
right action is counted right in `either_upper_bound`. The open oracle is right when either
free transcript plans the right action. No rule choosing between the two opinions beats
"either is right" once the wake phrase is heard. Never run on the held-out part.
    python -m appliance_lab.tuning.closed_set_ceiling record --per 3 --seed 101 > ceiling.jsonl
    python -m appliance_lab.tuning.closed_set_ceiling tally ceiling.jsonl
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from appliance.desktop.model import Snapshot
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar.planner import GrammarPlanner
from appliance.voice.commands import engines
from appliance.voice.hearing.closed_whisper import (
    FRAMED,
    FULL_WINDOW,
    WAKE_CHECKS,
    ClosedWhisperRecognizer,
    written,
)
from appliance.voice.hearing.stt_whisper import speech_of
from appliance.voice.hearing.wake import words
from appliance_lab.bench.spoken.corpus import audio, items, sample
from appliance_lab.bench.spoken.outcome import heard_on, normalized, scene_path
from appliance_lab.tuning.record_then_weigh import record_then_weigh

NEAR = 24
"""Candidates taken nearest each of: the sentence said, and the two free transcripts."""


@functools.cache
def _screen(scene: str) -> Snapshot:
    return SimDesktop.from_file(scene_path(scene)).snapshot()


@functools.cache
def _planner() -> GrammarPlanner:
    return GrammarPlanner()


@functools.cache
def _plan(scene: str, text: str) -> str:
    """The grammar's intent for the words as the wake gate passes them on ("none": no intent);
    the planner alone, without the session's journal, as there are thousands to plan."""
    intent = _planner().parse(" ".join(words(text)), _screen(scene)) if text.strip() else None
    return "none" if intent is None else json.dumps(
        normalized(intent.model_dump(mode="json")), sort_keys=True)


def record(per: int, seed: int) -> None:
    loaded = engines(progress=False)
    assert loaded.whisper is not None
    rec = ClosedWhisperRecognizer(loaded.whisper, wake_check=WAKE_CHECKS["spotter"])
    tok = rec.scorer.tokenizer
    for item in sample(items("tune"), per, seed=seed):
        want = _plan(item.scene, item.sentence)
        if want == "none":
            continue
        sentences, vocabulary = heard_on(item.scene)
        pcm = audio(item)
        heard = rec.hear(pcm, sentences, vocabulary)
        now = (heard.wake and not heard.doubtful
               and _plan(item.scene, rec.command_words(heard.text, True)) == want)
        samples = speech_of(pcm)
        fixed = rec.fixed_pass(samples, FULL_WINDOW, vocabulary)
        if heard.wake and rec.wake_check is not None and rec.wake_check.spotted(heard.spot):
            fixed = rec.woken(fixed)
        command = rec.command_words(fixed.text, heard.wake)
        screen_command = rec.command_words(fixed.screen[0], heard.wake)
        said = " ".join(rec.command_words(item.sentence, False).split())
        candidates = list(dict.fromkeys(
            [*sentences.nearest(said, NEAR), *sentences.nearest(command, NEAR),
             *sentences.nearest(screen_command, NEAR)]
            + [s for text in (said, command, screen_command)
               for s in sentences.framed(text, FRAMED)]))
        right = [s for s in candidates if _plan(item.scene, s) == want]
        wake_text = rec.wake_phrase.title() + ", " if heard.wake else ""
        scores = rec.scorer.score(fixed.encoded, fixed.frames, rec.plain_prompt, [
            tok.encode(" " + written(s, fixed.text, wake_text)) for s in candidates])
        best_right = max((sc for s, sc in zip(candidates, scores, strict=True) if s in right),
                         default=None)
        best_other = max((sc for s, sc in zip(candidates, scores, strict=True)
                          if s not in right), default=None)
        row = {
            "id": item.item_id, "condition": item.condition.name, "voice": item.voice.label,
            "family": item.family, "wake": heard.wake, "now": now, "heard": heard.text,
            "right_candidates": len(right),
            "closed": best_right is not None and (best_other is None or best_right > best_other),
            "open": want in (_plan(item.scene, command), _plan(item.scene, screen_command)),
            "best_right": best_right, "best_other": best_other,
        }
        print(json.dumps(row), flush=True)


def tally(paths: list[Path]) -> None:
    rows = [json.loads(line) for p in paths for line in p.read_text().splitlines()]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups["all"].append(row)
        groups[row["condition"]].append(row)

    def share(rs: list[dict[str, Any]], test: Any) -> float:
        return round(sum(1 for r in rs if test(r)) / len(rs), 3)

    for name in ["all", "clean", "snr20", "snr10", "snr5", "reverb"]:
        rs = groups.get(name, [])
        if not rs:
            continue
        print(json.dumps({
            "condition": name, "acting_items": len(rs),
            "right_at_once_now": share(rs, lambda r: r["now"]),
            "wake_heard": share(rs, lambda r: r["wake"]),
            "closed_oracle": share(rs, lambda r: r["wake"] and r["closed"]),
            "open_oracle": share(rs, lambda r: r["wake"] and r["open"]),
            "either_oracle": share(rs, lambda r: r["wake"] and (r["closed"] or r["open"])),
            "either_given_wake": share(rs, lambda r: r["closed"] or r["open"]),
            # No candidate planning the right action: counted right, as the set may hold one.
            "either_upper_bound": share(rs, lambda r: r["wake"] and (
                r["closed"] or r["open"] or not r["right_candidates"])),
        }))


def main() -> None:
    record_then_weigh(__doc__, lambda args: record(args.per, args.seed), tally, per=3,
                      record_options=lambda p: p.add_argument("--seed", type=int, default=101),
                      weigh_verb="tally")


if __name__ == "__main__":
    main()
