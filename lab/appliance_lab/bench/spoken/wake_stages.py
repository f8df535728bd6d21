"""Which stage of the wake decision turns the person's own wake phrase away in noise, and which
turns near misses away (issue 44): for each test item and each near miss a voice says, whether
the person's takes heard the wake phrase and a command, whether Whisper's wake check took it
(with the spotter's log-odds), how far its start is from the person's wake takes against the
bound for the room it was heard in, and that room's estimated signal to noise. Each stage on the
whole clip, not the pipeline's segment of it:
`python -m appliance_lab.bench.spoken.wake_stages --part tune --per 4`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from appliance.voice.hearing.closed_whisper import (
    SPOTTER_SURE,
    SPOTTER_VETO,
    ClosedWhisperRecognizer,
)
from appliance.voice.hearing.personal import wake_bound
from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.take_audio import NOISY_ROOM_DB, signal_to_noise_db
from appliance.voice.hearing.templates import TemplateSet
from appliance_lab.bench.spoken.corpus import Part, load_part
from appliance_lab.bench.spoken.hearing import spotter_whisper
from appliance_lab.bench.spoken.outcome import heard_on
from appliance_lab.bench.spoken.personal import (
    ConditionName,
    item_audio,
    make_profile,
    sample_items,
)
from appliance_lab.bench.spoken.personal_fa import FA_CONDITIONS, FA_VARIANTS, line_in, lines
from appliance_lab.bench.stats import share

CONDITIONS: tuple[ConditionName, ...] = ("snr10", "snr5")
"""Noise only: slow speech's wake phrase is the takes' alone (the spotter vetoes it, and is
then not asked), which this does not model."""
NEAR_SCENE = "messages"


@dataclass(frozen=True)
class Stages:
    """One utterance: the person's wake phrase ("wake") or a near miss ("near"), and what each
    stage made of it."""

    kind: str
    condition: str
    voice: str
    said: str
    takes_woke: bool  # the takes heard the wake phrase and a command (decided), no spotter veto
    whisper_woke: bool  # Whisper's wake check (the spotter rule) took it
    whisper_wrote: str
    spot: float
    fit: float
    bound: float
    snr_db: float

    @property
    def vetoed(self) -> bool:
        return self.spot < SPOTTER_VETO

    @property
    def refused(self) -> bool:
        """The person's wake verifier turns it away."""
        return self.fit > self.bound

    @property
    def woke(self) -> bool:
        return self.takes_woke or (self.whisper_woke and not self.refused)


@cache
def _templates(profile: Path) -> TemplateSet:
    """A profile's takes, read once a run (each is heard against many utterances)."""
    return VoiceProfile(profile).template_set()


def _stages(kind: str, condition: str, voice: str, line: str, pcm: bytes, scene: str,
            profile: Path, whisper: ClosedWhisperRecognizer) -> Stages:
    templates = _templates(profile)
    sentences, words = heard_on(scene)
    found = templates.hear(pcm, lambda phrase: phrase in sentences)
    heard = whisper.hear(pcm, sentences, words)
    spot = heard.spot if heard.spot is not None else 0.0
    fit = templates.wake_fit(pcm)
    return Stages(kind, condition, voice, line,
                  found is not None and found.decided and found.wake and spot >= SPOTTER_VETO,
                  heard.wake,
                  heard.greedy, round(spot, 2), round(fit if fit is not None else 0.0, 2),
                  round(wake_bound(pcm, templates), 2), round(signal_to_noise_db(pcm), 1))


def measure(part: Part, per: int, near_per: int, workdir: Path) -> list[Stages]:
    """`per` test items a condition for each voice, and `near_per` near misses each voice says
    (in the false-accept run's rooms), each heard with the voice's whole enrolment."""
    whisper = spotter_whisper("wake_stages")
    out: list[Stages] = []
    for item in sample_items(part, per, CONDITIONS):
        profile = make_profile(workdir, part, item.voice, item.style, True, True)
        out.append(_stages("wake", item.condition, item.voice.label, item.phrase,
                           item_audio(item), item.scene, profile, whisper))
    rng = random.Random(f"wake-stages|{part}")
    near = [line for kind, line in lines(part) if kind in ("near", "near+command")]
    for voice in load_part(part).voices:
        profile = make_profile(workdir, part, voice, "normal", True, True)
        for _ in range(near_per):
            line, room = rng.choice(near), rng.choice(FA_CONDITIONS)
            pcm = line_in(part, voice, line, rng.choice(FA_VARIANTS), room,
                          rng.randrange(1 << 30))
            out.append(_stages("near", room.name, voice.label, line, pcm, NEAR_SCENE, profile,
                               whisper))
        print(f"wake_stages: {voice.label} done", file=sys.stderr, flush=True)
    return out


def report(found: list[Stages]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for condition in CONDITIONS:
        rows = [s for s in found if s.kind == "wake" and s.condition == condition]
        lost = [s for s in rows if not s.woke]
        out[condition] = {
            "n": len(rows),
            "woken": share(len(rows) - len(lost), len(rows)),
            "by_the_takes": sum(s.takes_woke for s in rows),
            "lost": {
                "whisper_did_not_wake": sum(not s.whisper_woke for s in lost),
                "of_them_the_verifier_would_pass": sum(not s.whisper_woke and not s.refused
                                                       for s in lost),
                "the_verifier_refused": sum(s.whisper_woke and s.refused for s in lost),
                "of_them_in_a_room_judged_quiet": sum(
                    s.whisper_woke and s.refused and s.snr_db >= NOISY_ROOM_DB for s in lost),
            },
            "spotter_vetoes": sum(s.vetoed for s in rows),
        }
    near = [s for s in found if s.kind == "near"]
    out["near_misses"] = {
        "n": len(near),
        "accepted": share(sum(s.woke for s in near), len(near)),
        "whisper_woke": sum(s.whisper_woke for s in near),
        "verifier_passes": share(sum(not s.refused for s in near), len(near)),
        "spotter_sure": sum(s.spot >= SPOTTER_SURE for s in near),
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", choices=("heldout", "tune"), default="tune")
    parser.add_argument("--per", type=int, default=4)
    parser.add_argument("--near", type=int, default=12)
    parser.add_argument("--work", type=Path, default=Path(".cache/personal-templates"))
    args = parser.parse_args()
    part: Part = "tune" if args.part == "tune" else "heldout"
    found = measure(part, args.per, args.near, args.work)
    print(json.dumps({"part": part, **report(found), "rows": [asdict(s) for s in found]}))


if __name__ == "__main__":
    main()
