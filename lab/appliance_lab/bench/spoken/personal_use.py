"""What the person's use teaches their profile (issue 44, build item 4), measured: the test
items heard with each voice's profile as enrolled, and with a copy of it after a spell of use.

In the spell of use the voice says each command of each scene that acts on its own (not "yes",
"no", "cancel" or "undo that", which answer or undo the item before), the scene's names twice,
in takes no enrolment or test take is (USE) and in a condition drawn for each, through the real
pipeline with the profile as enrolled. What the product's learning keeps is then taught to the
copy through `VoiceProfile.learn`, under the words heard and with the wake phrase before it
(split where the person's wake takes end, as the product splits it): a command Whisper heard
and carried out, which the person did not undo because it was right, and a right one the
appliance asked about, which the person confirms with a yes; nothing said in a noisy room
(`heard_in_noise`). The product learns a command
carried out only after a minute in which it was not undone; a bench cannot wait that minute
after every take, so it applies the same rule once the spell is over. A phrase's first learned
take waits for a second (pending), as in the product. With `--style slow` the slow person
(personal.py) enrols, uses and is tested in slow speech, in a quiet room.

`PYTHONPATH=$PWD:$PWD/lab python -m appliance_lab.bench.spoken.personal_use --part tune`
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.voice.errors import BadTake
from appliance.voice.hearing.profile import TakeKind, TakeSource, VoiceProfile
from appliance.voice.hearing.take_audio import heard_in_noise
from appliance_lab.bench.spoken.conditions import NOISES, NoiseKind
from appliance_lab.bench.spoken.corpus import (
    WAKE,
    Part,
    load_part,
    seed_of,
)
from appliance_lab.bench.spoken.personal import (
    COMMON,
    CORPUS_CONDITIONS,
    NAMES,
    SCENES,
    ConditionName,
    SpokenItem,
    Style,
    Variant,
    item_audio,
    make_profile,
    sample_items,
    spoken_clip,
    used_path,
)
from appliance_lab.bench.spoken.personal_bench import default_workdir, hear_items, summarize_arm
from appliance_lab.bench.spoken.runs import Progress
from appliance_lab.bench.spoken.voices import Voice
from appliance_lab.bench.stats import peak_rss_mb

USE: tuple[Variant, ...] = (Variant(0.92, -30), Variant(1.15, 90), Variant(0.84, 70),
                            Variant(1.04, -120))
"""How the voice says a command in use: rates and pitches no enrolment or test take has."""
USE_SLOW: tuple[Variant, ...] = (Variant(0.73, -20, (5.5, 22), gaps=(0.28, 0.48)),
                                 Variant(0.77, 60, (5.5, 22), gaps=(0.3, 0.45)),
                                 Variant(0.69, -90, (6.5, 18), gaps=(0.32, 0.52)),
                                 Variant(0.75, 170, (5.0, 25), gaps=(0.3, 0.5)))
"""How the slow person says a command in use, likewise."""
USES: dict[Style, tuple[Variant, ...]] = {"normal": USE, "slow": USE_SLOW}
USE_CONDITIONS: tuple[ConditionName, ...] = ("clean", "snr10", "snr5", "reverb")
"""What the room holds when a command is used; the same conditions the items are tested in."""
NOT_IN_USE = ("yes", "no", "cancel", "undo that")
"""Commands that answer or undo the one before: in a run of commands they would change what
the others teach."""
NAME_USES = 2
"""How many times each of a scene's names is said in the spell (a learned take waits for a
second one of its phrase)."""
USE_ROW = ("id", "condition", "noise", "woke", "outcome", "engine", "heard")
"""What is kept of each use in the report."""
LEARNED_ENGINES = ("closed:whisper", "closed:templates")
"""The engines whose transcripts the product's learning hears."""


@dataclass(frozen=True)
class UseItem(SpokenItem):
    """One command said in a spell of use (`variant`: an index into USE; `n`: which use on
    its scene; `spell`: which spell)."""

    n: int = 0
    spell: int = 0

    @property
    def item_id(self) -> str:
        return f"use/{super().item_id}/{self.n}" + (f"/spell {self.spell}" if self.spell else "")

    @property
    def noise(self) -> NoiseKind | None:
        if CORPUS_CONDITIONS[self.condition].snr_db is None:
            return None
        return NOISES[seed_of("use noise", self.item_id) % len(NOISES)]


def use_items(part: Part, voice: Voice, spell: int = 0, style: Style = "normal"
              ) -> list[UseItem]:
    """The voice's spell of use: every scene's commands that act on their own, its names
    NAME_USES times, each in a condition and a take drawn with a fixed seed (one a spell); the
    slow person speaks slowly in a quiet room."""
    rng = random.Random(seed_of("personal use", voice.label, *([spell] if spell else []),
                                *([style] if style != "normal" else [])))
    takes = USES[style]
    out: list[UseItem] = []
    for scene in SCENES:
        phrases = [p for p in COMMON if p not in NOT_IN_USE]
        phrases += [name for name in NAMES[scene] for _ in range(NAME_USES)]
        for n, phrase in enumerate(phrases):
            condition: ConditionName = "slow" if style == "slow" else rng.choice(USE_CONDITIONS)
            out.append(UseItem(part, voice, scene, phrase, condition,
                               rng.randrange(len(takes)), n, spell))
    return out


def use_audio(item: SpokenItem) -> bytes:
    """The use's 16 kHz PCM16, cached: said as its take of USES, in its condition."""
    assert isinstance(item, UseItem)
    return spoken_clip(item, USES[item.style][item.variant], "use")


def teaches(row: dict[str, Any]) -> bool:
    """Whether the product's learning keeps this use: a command Whisper heard and carried out
    right, or one heard right and asked about (the person says yes)."""
    if row["engine"] not in LEARNED_ENGINES:
        return False
    if row["outcome"] == "right":
        return bool(row["engine"] == "closed:whisper")  # the takes' own: nothing new
    asked_right = (row["got"] or {}).get("intent") == row["expected"].get("intent")
    return bool(row["outcome"] == "asked" and asked_right)


@dataclass
class Taught:
    """What one voice's spell of use taught its profile."""

    uses: int = 0
    kept: int = 0  # uses the learning rule keeps
    noisy: int = 0  # kept, but said in a noisy room: nothing learned
    not_split: int = 0  # kept, but the wake takes did not fit its start: nothing learned
    commands: int = 0  # command takes learned (pending or in use)
    wakes: int = 0
    refused: int = 0  # takes `learn` refused (BadTake)


def teach(profile: VoiceProfile, item: UseItem, heard: str, taught: Taught) -> None:
    """The use's command and the wake phrase before it, learned as the product learns them:
    under the words heard ("click on delete" for "click delete": the same meaning), and
    nothing from one said in a noisy room (read from the whole clip, not the pipeline's cut)."""
    audio = use_audio(item)
    if heard_in_noise(audio):
        taught.noisy += 1
        return
    split = profile.template_set().wake_split(audio)
    if split is None:
        taught.not_split += 1
        return
    wake, command = split
    for phrase, pcm, kind in ((heard, command, TakeKind.COMMAND),
                              (WAKE, wake, TakeKind.WAKE)):
        try:
            profile.learn(phrase, pcm, kind)
        except BadTake:
            taught.refused += 1
            continue
        if kind == TakeKind.COMMAND:
            taught.commands += 1
        else:
            taught.wakes += 1


def used_profile(workdir: Path, part: Part, voice: Voice, enrolled: Path,
                 style: Style = "normal") -> Path:
    """A fresh copy of the voice's profile as enrolled (`enrolled`)."""
    path = used_path(workdir, part, voice, style)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(enrolled, path)
    return path


def changed(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items whose outcome or engine the spell of use changed."""
    was = {r["id"]: r for r in before}
    return [{"id": r["id"], "before": [was[r["id"]]["outcome"], was[r["id"]]["engine"]],
             "after": [r["outcome"], r["engine"]], "heard": r["heard"]}
            for r in after if r["id"] in was
            and (was[r["id"]]["outcome"], was[r["id"]]["engine"]) != (r["outcome"], r["engine"])]


def _of(profiles: dict[str, Path]) -> Callable[[SpokenItem], Path]:
    return lambda item: profiles[item.voice.label]


def bench_use(part: Part, per: int, voices: int, workdir: Path, progress: Progress,
              spells: int = 1, enrolled_rows: list[dict[str, Any]] | None = None,
              style: Style = "normal") -> dict[str, Any]:
    """The spells of use and what they taught (each heard with the profile as the spells
    before left it), then the test items with each voice's profile as enrolled (or
    `enrolled_rows`, an earlier run's of the same items) and as used."""
    chosen = load_part(part).voices
    chosen = chosen[:voices] if voices else chosen
    used: dict[str, Path] = {}
    enrolled: dict[str, Path] = {}
    for voice in chosen:
        enrolled[voice.label] = make_profile(workdir, part, voice, style, True, True)
        used[voice.label] = used_profile(workdir, part, voice, enrolled[voice.label], style)
    use_rows: list[dict[str, Any]] = []
    taught: list[dict[str, Taught]] = []
    for n in range(spells):
        spell = [item for voice in chosen for item in use_items(part, voice, n, style)]
        rows = hear_items(spell, use_audio, _of(used), f"use, spell {n + 1}", progress,
                          pace=None, room=True)
        taught.append({v.label: Taught() for v in chosen})
        for item, row in zip(spell, rows, strict=True):
            count = taught[-1][item.voice.label]
            count.uses += 1
            if teaches(row):
                count.kept += 1
                assert isinstance(item, UseItem)
                teach(VoiceProfile(used[item.voice.label]), item, row["heard"], count)
        use_rows += rows
        progress(f"use, spell {n + 1}: taught " + ", ".join(
            f"{k}: {v.commands} commands, {v.wakes} wakes" for k, v in taught[-1].items()))
    items = sample_items(part, per, ("slow",) if style == "slow" else USE_CONDITIONS, voices)
    arms: dict[str, list[dict[str, Any]]] = {}
    if enrolled_rows is not None:
        if sorted(r["id"] for r in enrolled_rows) != sorted(i.item_id for i in items):
            raise SystemExit("personal_use: the earlier run's enrolled rows are of other items")
        arms["enrolled"] = enrolled_rows
    else:
        arms["enrolled"] = hear_items(items, item_audio, _of(enrolled), "enrolled", progress,
                                      room=True)
    arms["used"] = hear_items(items, item_audio, _of(used), "used", progress, room=True)
    return {
        "part": part, "style": style, "per": per, "spells": spells,
        "enrolled_rows_reused": enrolled_rows is not None,
        "use": {"items": len(use_rows), "outcomes": Counter(r["outcome"] for r in use_rows),
                "engines": Counter(str(r["engine"]) for r in use_rows),
                "taught": [{k: vars(v) for k, v in spell.items()} for spell in taught],
                "takes_in_use": {label: takes_in_use(path) for label, path in used.items()},
                "rows": [{k: r[k] for k in USE_ROW} for r in use_rows]},
        "arms": {arm: {**summarize_arm({"rows": rows}), "rows": rows}
                 for arm, rows in arms.items()},
        "changed": changed(arms["enrolled"], arms["used"]),
        "peak_rss_mb": peak_rss_mb(),
    }


def takes_in_use(path: Path) -> dict[str, int]:
    """How many learned takes the used profile holds: in use and pending, commands and wakes."""
    return dict(Counter(f"{t.kind.value} {'pending' if t.pending else 'in use'}"
                        for t in VoiceProfile(path).takes() if t.source == TakeSource.LEARNED))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", choices=("heldout", "tune"), default="tune")
    parser.add_argument("--per", type=int, default=4)
    parser.add_argument("--voices", type=int, default=0)
    parser.add_argument("--work", type=Path, default=default_workdir())
    parser.add_argument("--spells", type=int, default=1, help="spells of use, one after another")
    parser.add_argument("--style", choices=("normal", "slow"), default="normal",
                        help="slow: the slow person, in slow speech")
    parser.add_argument("--enrolled-from", type=Path,
                        help="an earlier run's JSON whose enrolled rows are reused")
    args = parser.parse_args()
    rows = (json.loads(args.enrolled_from.read_text())["arms"]["enrolled"]["rows"]
            if args.enrolled_from else None)

    def progress(line: str) -> None:
        print(f"bench personal-use: {line}", file=sys.stderr, flush=True)

    part: Part = "tune" if args.part == "tune" else "heldout"
    style: Style = "slow" if args.style == "slow" else "normal"
    print(json.dumps(bench_use(part, args.per, args.voices, args.work, progress, args.spells,
                               rows, style)))


if __name__ == "__main__":
    main()
