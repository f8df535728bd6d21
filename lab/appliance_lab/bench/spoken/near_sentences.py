"""How sure the person's takes are when they hear their own command, and when they hear a
sentence of the screen that is not enrolled but spelt near one that is ("tick send" beside an
enrolled "click send"): whether a least sureness could replace the doubt `spelt_near` raises
(voice/hearing/personal.py; it could not). Templates only, no pipeline:
`python -m appliance_lab.bench.spoken.near_sentences --part tune`. With `--whisper`, also
Whisper's forced choice between what the takes heard and its rivals (`choice_rivals`,
`ClosedWhisperRecognizer.choose`), and whether a least margin of it could.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.voice.commands import engines
from appliance.voice.hearing.closed_whisper import Choice, ClosedWhisperRecognizer
from appliance.voice.hearing.personal import choice_rivals, spelt_near
from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.templates import TemplateSet
from appliance_lab import REPO
from appliance_lab.bench.spoken.corpus import Part, load_part, seed_of
from appliance_lab.bench.spoken.outcome import heard_on
from appliance_lab.bench.spoken.personal import (
    CONDITIONS,
    TEST,
    SpokenItem,
    Style,
    enrolled_phrases,
    item_audio,
    make_profile,
    pairs,
    sample_items,
)
from appliance_lab.bench.spoken.voices import Voice
from appliance_lab.bench.stats import wilson

THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
"""The least sureness tried for acting at once despite a near sentence not enrolled."""
MARGINS = (0.0, 0.5, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)
"""The least margin of Whisper's forced choice tried for the same."""


@dataclass(frozen=True)
class Heard:
    """One utterance the takes heard: whether it was an enrolled command ("own") or a near
    sentence not enrolled ("near"), what they took it for, how surely, and whether a sentence
    not enrolled is spelt near what they took it for (the doubt `spelt_near` raises)."""

    kind: str
    condition: str
    said: str
    heard: str | None
    sureness: float
    near_spelt: bool
    choice: Choice | None = None  # Whisper's, when it was made to choose

    @property
    def right(self) -> bool:
        return self.heard == self.said


def near_triples() -> list[tuple[str, str, str]]:
    """Every (scene, enrolled phrase, sentence not enrolled spelt near it)."""
    enrolled = enrolled_phrases()
    out = []
    for scene, phrase in pairs():
        sentences, _ = heard_on(scene)
        out += [(scene, phrase, near) for near in spelt_near(phrase, sentences, enrolled)]
    return out


def near_items(part: Part, voice: Voice, per: int, triples: list[tuple[str, str, str]],
               seed: str) -> list[SpokenItem]:
    """`per` sentences a condition spelt near an enrolled one (`near_triples`), said by `voice`
    as its test items are, drawn with `seed`."""
    out = []
    for condition in CONDITIONS:
        rng = random.Random(seed_of(seed, voice.label, condition))
        style: Style = "slow" if condition == "slow" else "normal"
        for scene, _phrase, near in rng.sample(triples, per):
            out.append(SpokenItem(part, voice, scene, near, condition,
                                  rng.randrange(len(TEST[style]))))
    return out


def _heard(templates: TemplateSet, item: SpokenItem, kind: str,
           recognizer: ClosedWhisperRecognizer | None) -> Heard:
    sentences, _ = heard_on(item.scene)
    pcm = item_audio(item)
    found = templates.hear(pcm, lambda phrase: phrase in sentences)
    if found is None or not found.decided:  # undecided between phrases: `undecided.py`
        return Heard(kind, item.condition, item.phrase, None, 0.0, False)
    near = spelt_near(found.phrase, sentences, templates.phrases)
    choice = None
    if near and recognizer is not None:
        rivals = choice_rivals(found.phrase, sentences, templates.phrases, near)
        choice = recognizer.choose(pcm, found.phrase, rivals, found.wake)
    return Heard(kind, item.condition, item.phrase, found.phrase, found.sureness, bool(near),
                 choice)


def hear_all(part: Part, per: int, near_per: int, workdir: Path,
             recognizer: ClosedWhisperRecognizer | None = None) -> list[Heard]:
    """Each voice's test items (`per` a condition) and `near_per` near sentences a condition,
    said as its test items are, heard by its own profile."""
    out: list[Heard] = []
    triples = near_triples()
    for voice in load_part(part).voices:
        profiles = {style: VoiceProfile(make_profile(workdir, part, voice, style)).template_set()
                    for style in ("normal", "slow")}
        for item in sample_items(part, per, CONDITIONS, voices=0):
            if item.voice == voice:
                out.append(_heard(profiles[item.style], item, "own", recognizer))
        for item in near_items(part, voice, near_per, triples, "near-sentences"):
            out.append(_heard(profiles[item.style], item, "near", recognizer))
        print(f"near-sentences: {voice.label} done", file=sys.stderr, flush=True)
    return out


def _rounded(choice: Choice) -> list[float]:
    return [round(choice.score, 3), round(choice.margin, 3)]


def _share(k: int, n: int) -> dict[str, Any]:
    return {"count": f"{k}/{n}", "ci95": wilson(k, n)}


def report(heard: list[Heard]) -> dict[str, Any]:
    """For each least sureness: the person's own commands the takes heard right that would act
    at once though a near sentence is spelt (rather than go to Whisper), and the near sentences
    they would take for an enrolled command and act on at once (wrong actions)."""
    own = [h for h in heard if h.kind == "own" and h.right and h.near_spelt]
    near = [h for h in heard if h.kind == "near"]
    rows = []
    for least in THRESHOLDS:
        rows.append({
            "least_sureness": least,
            "own_acting_at_once": _share(sum(h.sureness >= least for h in own), len(own)),
            "near_acted_wrongly": _share(sum(h.heard is not None and h.sureness >= least
                                             for h in near), len(near)),
        })
    taken = [h for h in near if h.heard is not None]
    chosen = {}
    if any(h.choice is not None for h in heard):
        chosen = {"whisper_choice": [{
            "least_margin": least,
            "own_acting_at_once": _share(sum(h.choice is not None and h.choice.margin >= least
                                             for h in own), len(own)),
            "near_acted_wrongly": _share(sum(h.heard is not None and h.choice is not None
                                             and h.choice.margin >= least for h in near),
                                         len(near)),
        } for least in MARGINS],
            "own_choices": sorted([h.condition, h.said, *_rounded(h.choice)] for h in own
                                  if h.choice is not None),
            "near_choices": sorted([h.condition, h.said, h.heard, *_rounded(h.choice)]
                                   for h in taken if h.choice is not None)}
    return {**chosen,
        "own_heard_right_with_a_near_sentence": len(own),
        "own_heard_right": sum(h.right for h in heard if h.kind == "own"),
        "own": sum(h.kind == "own" for h in heard),
        "near_said": len(near),
        "near_taken_for_an_enrolled_command": len(taken),
        "thresholds": rows,
        "near_taken": sorted(([h.condition, h.said, h.heard, round(h.sureness, 3)]
                              for h in taken), key=lambda r: -float(str(r[3]))),
        "own_sureness": sorted(round(h.sureness, 3) for h in own),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=("tune", "heldout"), default="tune")
    parser.add_argument("--per", type=int, default=4, help="own commands per voice and condition")
    parser.add_argument("--near", type=int, default=6,
                        help="near sentences per voice and condition")
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "personal-templates")
    parser.add_argument("--whisper", action="store_true",
                        help="also Whisper's forced choice where a near sentence is spelt")
    parser.add_argument("--choice-window", type=int, default=None,
                        help="feature frames Whisper chooses through (default: the product's)")
    args = parser.parse_args()
    recognizer = None
    if args.whisper:
        whisper = engines("whisper").whisper
        assert whisper is not None
        recognizer = ClosedWhisperRecognizer(whisper)
        if args.choice_window is not None:
            recognizer.choice_window = args.choice_window
    heard = hear_all(args.part, args.per, args.near, args.work, recognizer)
    print(json.dumps({"part": args.part, "per": args.per, "near_per": args.near,
                      **report(heard)}, indent=2))


if __name__ == "__main__":
    main()
