"""How often the person's takes of the other answer are nearer an answer said alone than their
takes of it (issue 44, `other_answer_nearer` in voice/hearing/personal.py): each voice says
"yes" and "no" alone in every condition. Where Whisper writes the answer said, the product
then asks again for nothing (`doubted_when_right`); where Whisper writes the other answer
("yeah" for a "no" at 5 dB), the product asks rather than acts (`caught_when_wrong`).
Templates only, no pipeline and no Whisper:
`python -m appliance_lab.bench.spoken.answer_takes --part tune`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from appliance.voice.hearing.personal import ANSWERS, other_answer_nearer
from appliance.voice.hearing.profile import VoiceProfile
from appliance_lab import REPO
from appliance_lab.bench.spoken.answer_end import ANSWER_WORDS, SCENE, answer_audio
from appliance_lab.bench.spoken.corpus import Part, load_part
from appliance_lab.bench.spoken.outcome import heard_on
from appliance_lab.bench.spoken.personal import CONDITIONS, TEST, Style, make_profile
from appliance_lab.bench.stats import share


@dataclass(frozen=True)
class AnswerTakes:
    """One answer said alone, and how near the person's takes of each answer come to it."""

    condition: str
    voice: str
    said: str
    nearest: dict[str, float]
    doubted_when_right: bool  # the takes of the other answer are nearer
    caught_when_wrong: bool  # heard as the other answer, the takes of what was said are nearer


def weighed(part: Part, workdir: Path) -> list[AnswerTakes]:
    """Every answer said alone by the part's voices, weighed against their own takes."""
    sentences, _vocabulary = heard_on(SCENE)
    other = dict(zip(ANSWER_WORDS, reversed(ANSWER_WORDS), strict=True))
    out: list[AnswerTakes] = []
    for voice in load_part(part).voices:
        templates = {style: VoiceProfile(make_profile(workdir, part, voice, style, True, True))
                     .template_set() for style in ("normal", "slow")}
        for condition in CONDITIONS:
            style: Style = "slow" if condition == "slow" else "normal"
            mine = templates[style]
            answers = [p for p in mine.phrases if sentences.intent_of(p) in ANSWERS]
            for word in ANSWER_WORDS:
                for variant in range(len(TEST[style])):
                    pcm = answer_audio(part, voice.label, condition, word, variant)
                    nearest = mine.nearest_takes(pcm, answers)
                    out.append(AnswerTakes(
                        condition, voice.label, word,
                        {p: round(d, 4) for p, d in nearest.items()},
                        other_answer_nearer(word, nearest, sentences),
                        other_answer_nearer(other[word], nearest, sentences)))
        print(f"answer-takes: {voice.label} done", file=sys.stderr, flush=True)
    return out


def report(found: list[AnswerTakes]) -> dict[str, Any]:
    """For each condition and answer: the share a right Whisper answer would be asked about
    again, and the share a wrong one would be caught."""
    rows = []
    for condition in (*CONDITIONS, "all"):
        for word in (*ANSWER_WORDS, "both"):
            mine = [a for a in found if condition in ("all", a.condition)
                    and word in ("both", a.said)]
            rows.append({
                "condition": condition, "said": word,
                "doubted_when_right": share(sum(a.doubted_when_right for a in mine), len(mine)),
                "caught_when_wrong": share(sum(a.caught_when_wrong for a in mine), len(mine)),
            })
    return {"rows": rows, "answers": [asdict(a) for a in found]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("tune", "heldout"), default="tune")
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "personal-templates")
    args = parser.parse_args()
    print(json.dumps({"part": args.part, **report(weighed(args.part, args.work))}, indent=2))


if __name__ == "__main__":
    main()
