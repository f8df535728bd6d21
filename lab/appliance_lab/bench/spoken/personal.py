"""The personal-templates benchmark's audio (issue 44): each voice's enrolment takes, its test
takes, and the profiles made from the enrolment through the product's public API
(`VoiceProfile.add`).

A person never says a phrase the same way twice, so no test take is an enrolment take: every
take is the voice's words changed by sox (tempo, pitch, a tremolo) and heard in its own room or
noise, the enrolment's and the test's drawn from disjoint sets (ENROL, TEST). The "slow" person
says each word on its own, about 0.7 times the rate, with 300-500 ms between words and a mild
tremolo; they enrol that way too (their own takes are slow), with other gaps, rates and
tremolo than they are tested with.

As the kiosk's enrolment does, it may end with half a minute of the person talking freely
(`speech`: everyday talk written for it, which no test or false-accept clip says) and half a
minute of their room, no one speaking (`room`: one kind of noise per voice, pink, brown, or
the other part's voices talking, never the samples any test item is mixed with).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import random
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import yaml

from appliance.voice.audio.pcm import PIPELINE_RATE, float_to_pcm16
from appliance.voice.errors import BadTake
from appliance.voice.hearing.profile import FREE_SPEECH, THE_ROOM, TakeKind, VoiceProfile
from appliance_lab.bench.spoken.conditions import (
    NOISES,
    Condition,
    NoiseKind,
    babble_at,
    reverberate,
    through_sox,
    trim_silence,
)
from appliance_lab.bench.spoken.corpus import (
    WAKE,
    Part,
    as_sentence,
    babble,
    cache_key,
    cached_pcm,
    clean_speech,
    heard_in,
    item_id,
    load_part,
    noise_for,
    seed_of,
    with_wake,
)
from appliance_lab.bench.spoken.voices import Voice

VERSION = 1
"""Bump when the audio for the same inputs would change."""

COMMON = ("yes", "no", "stop", "cancel", "undo that", "show numbers", "scroll up",
          "scroll down", "read it")
"""The commands a person enrols whatever the screen (each is a sentence of every scene)."""
NAMES: dict[str, tuple[str, ...]] = {
    "messages": ("click send", "select grandma", "select doctor"),
    "radio": ("select jazz fm", "click play", "select radio 4"),
    "settings": ("click save", "select sound", "tick high contrast"),
    "mail": ("click reply", "click forward", "click delete"),
}
"""Each scene's most used names, as the person would enrol them."""
SCENES = tuple(NAMES)
WAKE_TAKES = 5
COMMAND_TAKES = 3

Style = Literal["normal", "slow"]
ConditionName = Literal["clean", "snr10", "snr5", "reverb", "slow"]
CONDITIONS: tuple[ConditionName, ...] = ("clean", "snr10", "snr5", "reverb", "slow")


@dataclass(frozen=True)
class Variant:
    """How one take differs from the voice's own words: tempo (1.1: 10 % faster), pitch in
    cents, a tremolo (Hz, depth %), and the room or noise it was said in; for slow speech,
    the silence between words (seconds, drawn from `gaps`)."""

    tempo: float = 1.0
    cents: int = 0
    tremolo: tuple[float, float] | None = None
    room: int | None = None  # sox reverberance, 0-100
    snr_db: float | None = None  # pink noise this far below the words
    gaps: tuple[float, float] | None = None  # slow: each word alone, these seconds apart


# Enrolment: a clean take, one faster and higher, one slower and lower in a small room; the wake
# phrase two more, in a room and in a little noise. Commands take the first COMMAND_TAKES.
ENROL: dict[Style, tuple[Variant, ...]] = {
    "normal": (Variant(), Variant(1.12, 80), Variant(0.9, -60, room=30),
               Variant(1.05, -100, room=40), Variant(0.95, 120, snr_db=20)),
    "slow": (Variant(0.75, 0, (6.0, 20), gaps=(0.3, 0.45)),
             Variant(0.68, 90, (6.0, 20), gaps=(0.35, 0.5)),
             Variant(0.8, -70, (6.0, 20), room=30, gaps=(0.25, 0.4)),
             Variant(0.72, -120, (6.0, 20), room=40, gaps=(0.3, 0.5)),
             Variant(0.7, 140, (6.0, 20), snr_db=20, gaps=(0.3, 0.45))),
}
# Test: rates and pitches no enrolment take has (at least 10 % from the clean take's rate).
TEST: dict[Style, tuple[Variant, ...]] = {
    "normal": (Variant(0.87, 40), Variant(1.1, -40), Variant(1.2, 150), Variant(0.8, -150)),
    "slow": (Variant(0.7, 40, (5.0, 25), gaps=(0.3, 0.5)),
             Variant(0.7, -50, (5.0, 25), gaps=(0.3, 0.5)),
             Variant(0.66, 110, (5.0, 25), gaps=(0.3, 0.5))),
}


def _effects(variant: Variant, tremolo: bool = True) -> list[str]:
    effects: list[str] = []
    if variant.tempo != 1.0:
        effects += ["tempo", "-s", f"{variant.tempo:g}"]
    if variant.cents:
        effects += ["pitch", str(variant.cents)]
    if tremolo and variant.tremolo is not None:
        effects += ["tremolo", f"{variant.tremolo[0]:g}", f"{variant.tremolo[1]:g}"]
    return effects


def _words(text: str) -> list[str]:
    return [w.strip(",.") for w in text.split() if w.strip(",.")]


def said(voice: Voice, text: str, variant: Variant, seed: int = 0) -> bytes:
    """`text` said by `voice` the way `variant` says it, without room or noise, cached."""
    doc = {"v": VERSION, "voice": voice.model_dump(), "text": text, "variant": variant,
           "seed": seed if variant.gaps else 0, "what": "said"}

    def make() -> bytes:
        if variant.gaps is None:
            return trim_silence(through_sox(clean_speech(voice, text), *_effects(variant)))
        rng = random.Random(seed)
        out = bytearray()
        words = _words(text)
        for n, word in enumerate(words):
            out += trim_silence(through_sox(clean_speech(voice, word), *_effects(variant, False)))
            if n + 1 < len(words):
                out += bytes(int(rng.uniform(*variant.gaps) * PIPELINE_RATE) * 2)
        tremolo = _effects(Variant(tremolo=variant.tremolo))
        return trim_silence(through_sox(bytes(out), *tremolo))

    return cached_pcm(cache_key(doc), make)


def take(part: Part, voice: Voice, text: str, variant: Variant, seed: int = 0) -> bytes:
    """One take: said as `variant` says, in its room or noise."""
    doc = {"v": VERSION, "voice": voice.model_dump(), "text": text, "variant": variant,
           "seed": seed, "what": "take", "part": part}

    def make() -> bytes:
        words = said(voice, text, variant, seed)
        if variant.room is not None:
            return reverberate(words, variant.room)
        if variant.snr_db is not None:
            cond = Condition(name="enrol", snr_db=variant.snr_db)
            return heard_in(part, words, cond, "pink", seed)
        pad = bytes(int(0.3 * PIPELINE_RATE) * 2)
        return pad + words + pad

    return cached_pcm(cache_key(doc), make)


def enrolled_phrases() -> list[str]:
    return [*COMMON, *(name for names in NAMES.values() for name in names)]


def enrol(profile: VoiceProfile, part: Part, voice: Voice, style: Style) -> int:
    """The enrolment protocol: WAKE_TAKES takes of the wake phrase and COMMAND_TAKES of each
    command, added through `VoiceProfile.add`; how many takes were added."""
    variants = ENROL[style]
    added = 0
    for n, variant in enumerate(variants[:WAKE_TAKES]):
        profile.add(WAKE, TakeKind.WAKE, take(part, voice, as_sentence(WAKE), variant, n))
        added += 1
    for phrase in enrolled_phrases():
        for n, variant in enumerate(variants[:COMMAND_TAKES]):
            clip = take(part, voice, as_sentence(phrase), variant, n)
            profile.add(phrase, TakeKind.COMMAND, clip)
            added += 1
    return added


def profile_path(workdir: Path, voice: Voice, style: Style, room: bool = False,
                 speech: bool = False) -> Path:
    doc = {"v": VERSION, "voice": voice.model_dump(), "style": style,
           "enrol": ENROL[style], "phrases": enrolled_phrases()}
    if room:
        doc["room"] = ROOM_VERSION
    if speech:
        doc["speech"] = SPEECH_VERSION
    return workdir / "profiles" / f"{cache_key(doc)}.voice.sqlite"


def used_path(workdir: Path, part: Part, voice: Voice, style: Style = "normal") -> Path:
    """Where the voice's profile after personal_use's spells of use is kept."""
    name = f"{part}{'-slow' if style == 'slow' else ''}-{cache_key({'voice': voice.model_dump()})}"
    return workdir / "used" / f"{name}.voice.sqlite"


SPEECH_S = 30.0
"""Free speech enrolled, as the kiosk asks for."""
SPEECH_VERSION = 5
"""Bump when the free speech enrolled for the same inputs would change."""
ENROLMENT_TALK: tuple[str, ...] = tuple(yaml.safe_load(
    Path(__file__).with_name("personal_nonwake.yaml").read_text(encoding="utf-8"))[
        "enrolment_talk"])
"""What each voice says when asked to talk freely (personal_nonwake.yaml)."""


def free_speech(part: Part, voice: Voice, style: Style) -> list[bytes]:
    """About half a minute of the voice talking freely, line by line, said as its first
    enrolment take is (then as its second, should the lines run out)."""
    takes: list[bytes] = []
    for n, (variant, line) in enumerate(itertools.product(ENROL[style][:2], ENROLMENT_TALK)):
        takes.append(take(part, voice, as_sentence(line), variant, n))
        if sum(len(trim_silence(t)) for t in takes) / 2 / PIPELINE_RATE >= SPEECH_S:
            break
    return takes


ROOM_S = 30.0
"""The room's sound enrolled, as the kiosk listens for."""
ROOM_RMS = 0.01
"""A quiet room's level as a microphone records it (the product scales it to each take)."""
ROOM_VERSION = 3
"""Bump when the room enrolled for the same inputs would change."""


def room_kind(voice: Voice) -> NoiseKind:
    """The one kind of noise this voice's room has."""
    return NOISES[hashlib.sha256(f"room|{voice.label}".encode()).digest()[0] % len(NOISES)]


def room_sound(part: Part, voice: Voice) -> bytes:
    """Half a minute of the voice's room, no one speaking: pink or brown noise made here (not
    sox's, whose samples the test items are mixed with), or the other part's voices talking."""
    kind = room_kind(voice)
    n = int(ROOM_S * PIPELINE_RATE)
    seed = int.from_bytes(hashlib.sha256(voice.label.encode()).digest()[:4], "little")
    if kind == "babble":
        other: Part = "tune" if part == "heldout" else "heldout"
        sound = babble_at(babble(other), ROOM_S, seed).astype(np.float64)
    else:
        spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(n))
        power = 1 if kind == "pink" else 2  # 1/f or 1/f^2
        spectrum /= np.maximum(np.arange(len(spectrum), dtype=np.float64) ** (power / 2), 1.0)
        sound = np.fft.irfft(spectrum, n=n)
    sound *= ROOM_RMS / max(float(np.sqrt(np.mean(sound ** 2))), 1e-12)
    return float_to_pcm16(sound.astype(np.float32))


def make_profile(workdir: Path, part: Part, voice: Voice, style: Style,
                 room: bool = False, speech: bool = False) -> Path:
    """The voice's profile in `workdir`, enrolled once (kept across runs: same inputs); with
    `speech` and `room`, that profile and then the free speech and the room's sound."""
    path = profile_path(workdir, voice, style, room, speech)
    if path.exists() and VoiceProfile(path).takes():
        return path
    tmp = path.with_suffix(f".{os.getpid()}.making")  # two processes may make it at once
    tmp.unlink(missing_ok=True)
    if room or speech:
        shutil.copyfile(make_profile(workdir, part, voice, style), tmp)
        profile = VoiceProfile(tmp)
        for talk in free_speech(part, voice, style) if speech else []:
            try:
                profile.add(FREE_SPEECH, TakeKind.SPEECH, talk)
            except BadTake:  # a line too long said slowly: the rest make up the half minute
                continue
        if room:
            profile.add(THE_ROOM, TakeKind.ROOM, room_sound(part, voice))
    else:
        enrol(VoiceProfile(tmp), part, voice, style)
    tmp.replace(path)
    return path


@dataclass(frozen=True)
class SpokenItem:
    """One test utterance: "hey juniper, PHRASE" by `voice` on `scene` under `condition`."""

    part: Part
    voice: Voice
    scene: str
    phrase: str
    condition: ConditionName
    variant: int  # index into TEST[style]

    @property
    def style(self) -> Style:
        return "slow" if self.condition == "slow" else "normal"

    @property
    def item_id(self) -> str:
        return item_id(self.part, self.voice, self.condition, self.scene, self.phrase)

    @property
    def text(self) -> str:
        return with_wake(self.phrase)

    @property
    def noise(self) -> NoiseKind | None:
        """The noise it is mixed with (None: none)."""
        return noise_for(self.voice, self.phrase, CORPUS_CONDITIONS[self.condition])


CORPUS_CONDITIONS: dict[ConditionName, Condition] = {
    "clean": Condition(name="clean"),
    "snr10": Condition(name="snr10", snr_db=10),
    "snr5": Condition(name="snr5", snr_db=5),
    "reverb": Condition(name="reverb", reverb=70),
    "slow": Condition(name="slow"),
}


def item_audio(item: SpokenItem) -> bytes:
    """The item's 16 kHz PCM16, cached."""
    return spoken_clip(item, TEST[item.style][item.variant], "test")


def spoken_clip(item: SpokenItem, variant: Variant, what: str) -> bytes:
    """The item's words said as `variant`, in its condition: 16 kHz PCM16, cached as `what`."""
    seed = seed_of(item.item_id)
    doc = {"v": VERSION, "id": item.item_id, "variant": variant, "what": what}

    def make() -> bytes:
        words = said(item.voice, item.text, variant, seed)
        cond = CORPUS_CONDITIONS[item.condition]
        return heard_in(item.part, words, cond, item.noise, seed)

    return cached_pcm(cache_key(doc), make)


def pairs() -> list[tuple[str, str]]:
    """Every (scene, phrase) the person enrolled that the scene has."""
    return [(scene, phrase) for scene in SCENES for phrase in (*COMMON, *NAMES[scene])]


def sample_items(part: Part, per: int, conditions: Iterable[ConditionName] = CONDITIONS,
               voices: int = 0) -> list[SpokenItem]:
    """`per` items for each voice (the first `voices`; 0: all) and condition, drawn with a
    fixed seed from the enrolled (scene, phrase) pairs."""
    chosen = list(load_part(part).voices)
    if voices:
        chosen = chosen[:voices]
    out = []
    for voice in chosen:
        for condition in conditions:
            rng = random.Random(seed_of("personal", voice.label, condition))
            for scene, phrase in rng.sample(pairs(), per):
                count = len(TEST["slow" if condition == "slow" else "normal"])
                out.append(SpokenItem(part, voice, scene, phrase, condition,
                                    rng.randrange(count)))
    return out
