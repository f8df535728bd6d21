"""Whether an answer said alone ("yes", "no", in a question's listening window) may end the
utterance at its pause (issue 44, `may_end_at_match` in voice/hearing/personal.py), when it
is clearly nearer the person's takes of it than to how their wake phrase begins: each
voice's answers, said alone in every condition, cut at their last pause (what would end
sooner), and every test item ("hey juniper, ...") cut at each of its pauses (a cut the rule
would end as an answer would cut the wake phrase off, or answer a question unasked). Only
cuts the product may end at all are counted: on the Messages screen "no" may go on as
"noisier", so it ends at its pause only in a question's listening window (`--answering`).
With `--after-wake` (in the window) the answers are said after the wake phrase ("hey juniper,
no"), and the cuts counted are those heard as the wake phrase and an answer, which the product
ends as the answer alone would, bar the wake phrase's start (`wake_ratio` reads 0).
Templates only, no pipeline:
`python -m appliance_lab.bench.spoken.answer_end --part tune [--answering [--after-wake]]`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from appliance.voice.hearing.personal import END_RIVAL_RATIO, END_START_RATIO
from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.stt_whisper import TRAILING_BYTES
from appliance.voice.hearing.templates import TemplateSet
from appliance.voice.hearing.vad import VadSettings
from appliance_lab import REPO
from appliance_lab.bench.spoken.corpus import (
    Part,
    as_sentence,
    heard_in,
    item_id,
    load_part,
    noise_for,
    seed_of,
)
from appliance_lab.bench.spoken.early_end import TAIL_MS, pauses
from appliance_lab.bench.spoken.outcome import heard_on
from appliance_lab.bench.spoken.personal import (
    CONDITIONS,
    CORPUS_CONDITIONS,
    TEST,
    ConditionName,
    SpokenItem,
    Style,
    item_audio,
    make_profile,
    said,
    sample_items,
)
from appliance_lab.bench.stats import share

ANSWER_WORDS = ("yes", "no")
SCENE = "messages"
"""The screen whose sentences say whether an answer may go on ("no" into "not that")."""
WAKE_RATIOS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The most an answer's distance may be of how near it comes to the start of a wake take, tried."""
SURENESS = (0.0, 0.3, 0.5)
"""The least sureness tried (1 at a take, 0 at the bound)."""


@dataclass(frozen=True)
class AnswerCut:
    """One cut the takes heard as an answer (said alone, or after the wake phrase with
    `--after-wake`): the end of an answer said (`own`), or a pause inside a wake-started item."""

    own: bool
    condition: str
    voice: str
    said: str
    heard: str
    after_ms: int  # voiced speech after the cut
    sureness: float
    rival_ratio: float
    start_ratio: float  # over the nearest start of another phrase's take
    wake_ratio: float  # over the nearest start of a wake take (`TemplateMatch.wake_start`)


def answer_audio(part: Part, voice_label: str, condition: ConditionName, word: str,
                 variant: int, after_wake: bool = False) -> bytes:
    """The voice saying the answer alone, as a test item would be said; `after_wake`: after
    the wake phrase, the test item itself ("hey juniper, no")."""
    voice = next(v for v in load_part(part).voices if v.label == voice_label)
    if after_wake:
        return item_audio(SpokenItem(part, voice, SCENE, word, condition, variant))
    style: Style = "slow" if condition == "slow" else "normal"
    ident = item_id(part, voice, condition, "answer", f"{word}/{variant}")
    seed = seed_of(ident)
    words = said(voice, as_sentence(word), TEST[style][variant], seed)
    cond = CORPUS_CONDITIONS[condition]
    return heard_in(part, words, cond, noise_for(voice, word, cond), seed)


def _cut(templates: TemplateSet, pcm: bytes, own: bool, condition: str, voice: str,
         what: str, after_ms: int, answering: bool, after_wake: bool) -> AnswerCut | None:
    found = templates.hear(pcm, lambda _phrase: True)
    if found is None or found.wake != after_wake or found.phrase not in ANSWER_WORDS:
        return None
    sentences, _vocabulary = heard_on(SCENE)
    if not sentences.said_in_full(found.phrase) or (
            sentences.runs_on(found.phrase) and not answering):
        return None  # a pause after "no" may be inside "noisier": the product waits
    wake_ratio = (0.0 if after_wake else
                  found.distance / found.wake_start if found.wake_start > 0 else math.inf)
    return AnswerCut(own, condition, voice, what, found.phrase, after_ms, found.sureness,
                     found.distance / found.rival, found.distance / found.start, wake_ratio)


def cuts(part: Part, per: int, workdir: Path, answering: bool = False,
         after_wake: bool = False) -> tuple[list[AnswerCut], dict[str, int], int]:
    """The cuts heard as answers; how many answers were said in each condition, and how many
    pauses the wake-started items have. `answering`: in a question's listening window;
    `after_wake`: the answers said after the wake phrase, as test items are."""
    settings = VadSettings()
    out: list[AnswerCut] = []
    answers: dict[str, int] = dict.fromkeys(CONDITIONS, 0)
    inner = 0
    for voice in load_part(part).voices:
        templates = {style: VoiceProfile(make_profile(workdir, part, voice, style, True, True))
                     .template_set() for style in ("normal", "slow")}
        for condition in CONDITIONS:
            style: Style = "slow" if condition == "slow" else "normal"
            for word in ANSWER_WORDS:
                for variant in range(len(TEST[style])):
                    pcm = answer_audio(part, voice.label, condition, word, variant, after_wake)
                    at_cuts = pauses(pcm, settings)
                    answers[condition] += 1
                    if not at_cuts:
                        continue
                    at, after_ms = at_cuts[-1]
                    cut = _cut(templates[style], pcm[:at] + bytes(TRAILING_BYTES), True,
                               condition, voice.label, word, after_ms, answering, after_wake)
                    if cut is not None:
                        out.append(cut)
        for item in sample_items(part, per, CONDITIONS):
            if item.voice != voice or (after_wake and item.phrase in ANSWER_WORDS):
                continue
            pcm = item_audio(item)
            for at, after_ms in pauses(pcm, settings):
                inner += 1
                cut = _cut(templates[item.style], pcm[:at] + bytes(TRAILING_BYTES), False,
                           item.condition, voice.label, item.text, after_ms, answering,
                           after_wake)
                if cut is not None:
                    out.append(cut)
        print(f"answer-end: {voice.label} done", file=sys.stderr, flush=True)
    return out, answers, inner


def _ends(cut: AnswerCut, least: float, wake_ratio: float) -> bool:
    """The product's rule for ending at a match (`ends_at_match`), and the answer's own."""
    return (cut.sureness >= least and cut.rival_ratio <= END_RIVAL_RATIO
            and cut.start_ratio <= END_START_RATIO and cut.wake_ratio <= wake_ratio)


def report(found: list[AnswerCut], answers: dict[str, int], inner: int) -> dict[str, Any]:
    """For each least sureness and most wake ratio: the answers said alone it ends at their
    last pause (right, wrong), and the wake-started items' cuts it would end as an answer."""
    rows = []
    for least in SURENESS:
        for ratio in WAKE_RATIOS:
            for condition in (*CONDITIONS, "all"):
                mine = [c for c in found if condition in ("all", c.condition)]
                own = [c for c in mine
                       if c.own and c.after_ms <= TAIL_MS and _ends(c, least, ratio)]
                said_alone = sum(answers.values()) if condition == "all" else answers[condition]
                harm = [c for c in mine if not c.own and _ends(c, least, ratio)]
                rows.append({
                    "least_sureness": least, "most_wake_ratio": ratio, "condition": condition,
                    "answers_ended_right": share(sum(c.heard == c.said for c in own), said_alone),
                    "by_answer": {word: share(sum(c.heard == c.said == word for c in own),
                                              said_alone // len(ANSWER_WORDS))
                                  for word in ANSWER_WORDS},
                    "answers_ended_wrong": sum(c.heard != c.said for c in own),
                    "wake_items_cut_as_answer": len(harm),
                    "cut": sorted(f"{c.voice}: {c.said} -> {c.heard} ({c.sureness:.2f}, wake "
                                  f"{c.wake_ratio:.2f}, {c.after_ms} ms more)" for c in harm),
                })
    return {"answers_said_alone": answers, "wake_item_pauses": inner, "rows": rows,
            "answer_cuts": [asdict(c) for c in found]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("tune", "heldout"), default="tune")
    parser.add_argument("--per", type=int, default=4, help="wake-started items per voice and "
                        "condition")
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "personal-templates")
    parser.add_argument("--answering", action="store_true",
                        help="said in a question's listening window, where \"no\" may end too")
    parser.add_argument("--after-wake", action="store_true",
                        help="in the window, each answer said after the wake phrase")
    args = parser.parse_args()
    if args.after_wake and not args.answering:
        parser.error("--after-wake needs --answering: outside the window Whisper decides")
    found, answers, inner = cuts(args.part, args.per, args.work, args.answering,
                                 args.after_wake)
    print(json.dumps({"part": args.part, "per": args.per, "answering": args.answering,
                      "after_wake": args.after_wake,
                      **report(found, answers, inner)}, indent=2))


if __name__ == "__main__":
    main()
