"""The spoken corpus's items: (voice, sentence, scene, condition), their audio cached under
.cache/voice-corpus keyed by everything that makes it, and the part each belongs to."""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field

from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, write_wav
from appliance_lab import REPO
from appliance_lab.bench.spoken.conditions import (
    CONDITIONS,
    NOISES,
    Condition,
    NoiseKind,
    babble_at,
    make_babble,
    mix_at_snr,
    noise_seconds,
    reverberate,
    sox_noise,
    trim_silence,
)
from appliance_lab.bench.spoken.voices import Voice, synthesize

Part = Literal["tune", "heldout"]
PARTS: dict[Part, Path] = {
    "tune": Path(__file__).with_name("voice_tune.yaml"),
    "heldout": Path(__file__).with_name("voice_heldout.yaml"),
}
WAKE = "hey juniper"
GENERATOR_VERSION = 1
"""Bump when the audio for the same inputs would change (a new mix, a new trim)."""


def with_wake(command: str) -> str:
    """A command as a person says it to the appliance: the wake phrase first, one sentence."""
    return f"Hey juniper, {command}."


def as_sentence(words: str) -> str:
    """How words without the wake phrase are written for the TTS: a sentence."""
    return words[:1].upper() + words[1:] + "."


def item_id(part: Part, voice: Voice, condition: str, scene: str, words: str) -> str:
    """How the reports name an item of any spoken corpus."""
    return f"{part}/{voice.label}/{condition}/{scene}/{words}"


def cache_key(doc: object) -> str:
    """The cache's name for audio made from `doc`, which holds everything the audio depends on."""
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:24]


def seed_of(*parts: object) -> int:
    """A seed for the noise and the variations: the same parts, the same audio."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:4],
                          "little")


def cache_dir() -> Path:
    return Path(os.environ.get("APPLIANCE_VOICE_CORPUS_CACHE", REPO / ".cache" / "voice-corpus"))


class PartDefinition(BaseModel):
    """One part's file: its voices, its command sentences by family and scene, and speech
    without the wake phrase (for false accepts)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    voices: tuple[Voice, ...] = Field(min_length=1)
    sentences: dict[str, dict[str, tuple[str, ...]]]
    non_wake: tuple[str, ...] = ()


@cache
def load_part(part: Part) -> PartDefinition:
    return PartDefinition.model_validate(yaml.safe_load(PARTS[part].read_text(encoding="utf-8")))


@dataclass(frozen=True)
class CorpusItem:
    """One spoken command: who says what on which screen, heard through which condition."""

    part: Part
    family: str
    scene: str
    sentence: str  # the command as written, without the wake phrase
    voice: Voice
    condition: Condition
    noise: NoiseKind | None

    @property
    def spoken(self) -> str:
        return with_wake(self.sentence)

    @property
    def item_id(self) -> str:
        return item_id(self.part, self.voice, self.condition.name, self.scene, self.sentence)

    def key(self) -> str:
        """The cache key: everything the audio depends on."""
        doc = {"v": GENERATOR_VERSION, "voice": self.voice.model_dump(), "text": self.spoken,
               "condition": self.condition.model_dump(), "noise": self.noise,
               "seed": self.seed(), "part": self.part}
        return cache_key(doc)

    def seed(self) -> int:
        return seed_of(self.voice.label, self.sentence)


def noise_for(voice: Voice, sentence: str, condition: Condition) -> NoiseKind | None:
    """The noise this voice saying this sentence is mixed with under `condition` (None: none)."""
    if condition.snr_db is None:
        return None
    digest = hashlib.sha256(f"{voice.label}|{sentence}".encode()).digest()
    return NOISES[digest[0] % len(NOISES)]


def items(part: Part, conditions: Iterable[Condition] = CONDITIONS) -> list[CorpusItem]:
    """Every item of `part`: each voice says each sentence under each condition."""
    definition = load_part(part)
    conds = tuple(conditions)
    out = []
    for voice in definition.voices:
        for family, scenes in definition.sentences.items():
            for scene, sentences in scenes.items():
                for sentence in sentences:
                    for condition in conds:
                        out.append(CorpusItem(part, family, scene, sentence, voice, condition,
                                              noise_for(voice, sentence, condition)))
    return out


def sample(
    all_items: list[CorpusItem], per_voice_condition: int, seed: int = 15
) -> list[CorpusItem]:
    """`per_voice_condition` items for each (voice, condition), sentences drawn at random
    (fixed seed) so every family still turns up across voices."""
    groups: dict[tuple[str, str], list[CorpusItem]] = {}
    for item in all_items:
        groups.setdefault((item.voice.label, item.condition.name), []).append(item)
    rng = random.Random(seed)
    picked: list[CorpusItem] = []
    for key in sorted(groups):
        group = groups[key]
        picked += rng.sample(group, min(per_voice_condition, len(group)))
    return picked


def cached_pcm(key: str, make: Callable[[], bytes]) -> bytes:
    """The corpus cache's audio for `key`, made by `make` and kept the first time."""
    path = cache_dir() / f"{key}.pcm"
    if path.exists():
        return path.read_bytes()
    data = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Processes making the corpus in shards share clips (a voice's words under each condition).
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return data


def clean_speech(voice: Voice, text: str) -> bytes:
    """`text` said by `voice`, silence trimmed, cached."""
    doc = {"v": GENERATOR_VERSION, "voice": voice.model_dump(), "text": text, "what": "clean"}
    return cached_pcm(cache_key(doc), lambda: trim_silence(synthesize(voice, text)))


@cache
def babble(part: Part) -> np.ndarray:
    """Four of the part's espeak-ng voices (or its first four) talking at once, about 20 s."""
    definition = load_part(part)
    voices = [v for v in definition.voices if v.engine == "espeak"][:4] or list(
        definition.voices[:4])
    streams = []
    for i, voice in enumerate(voices):
        lines = definition.non_wake[i::len(voices)] or definition.non_wake
        gap = bytes(int(0.15 * PIPELINE_RATE) * 2)
        streams.append(b"".join(clean_speech(voice, line) + gap for line in lines))
    return make_babble(streams)


def audio(item: CorpusItem) -> bytes:
    """The item's 16 kHz PCM16: the words under its condition, cached by `item.key()`."""

    def make() -> bytes:
        speech = clean_speech(item.voice, item.spoken)
        return heard_in(item.part, speech, item.condition, item.noise, item.seed())

    return cached_pcm(item.key(), make)


def heard_in(part: Part, speech: bytes, condition: Condition, noise: NoiseKind | None,
             seed: int) -> bytes:
    """The words through `condition`: in its room, or padded and mixed with `noise` at its SNR."""
    if condition.reverb is not None:
        return reverberate(speech, condition.reverb)
    pad = bytes(int(0.3 * PIPELINE_RATE) * 2)
    if condition.snr_db is None or noise is None:
        return pad + speech + pad
    seconds = noise_seconds(speech)
    sound = (babble_at(babble(part), seconds, seed) if noise == "babble"
             else sox_noise(noise, seconds, seed))
    return mix_at_snr(speech, sound, condition.snr_db)


def non_wake_items(part: Part) -> list[tuple[Voice, str, Condition, NoiseKind | None]]:
    """Speech without the wake phrase: each voice says each non-wake line and each command
    without the wake phrase, under each condition."""
    definition = load_part(part)
    lines = [*definition.non_wake,
             *(s for scenes in definition.sentences.values() for ss in scenes.values() for s in ss)]
    out = []
    for voice in definition.voices:
        for line in lines:
            for condition in CONDITIONS:
                out.append((voice, line, condition, noise_for(voice, line, condition)))
    return out


def non_wake_audio(part: Part, voice: Voice, line: str, condition: Condition,
                   noise: NoiseKind | None) -> bytes:
    """One line of speech without the wake phrase, under `condition`, cached."""
    item = CorpusItem(part, "non_wake", "", line, voice, condition, noise)
    doc = {"v": GENERATOR_VERSION, "non_wake": item.key()}

    def make() -> bytes:
        speech = clean_speech(voice, as_sentence(line))
        return heard_in(part, speech, condition, noise, item.seed())

    return cached_pcm(cache_key(doc), make)


def write_corpus(out: Path, part: Part, limit: int | None = None,
                 progress: Callable[[str], None] | None = None) -> int:
    """WAVs of `part` and a manifest.jsonl (audio, scene, sentence, expected outcome)."""
    from appliance_lab.bench.spoken.outcome import planned

    chosen = items(part)
    if limit is not None:
        chosen = sample(chosen, max(1, limit // max(1, len(load_part(part).voices) * 5)))[:limit]
    out.mkdir(parents=True, exist_ok=True)
    with (out / "manifest.jsonl").open("w", encoding="utf-8") as manifest:
        for i, item in enumerate(chosen):
            wav = out / f"{i:05d}.wav"
            write_wav(wav, Pcm(audio(item), PIPELINE_RATE))
            manifest.write(json.dumps({
                "audio": wav.name, "part": part, "voice": item.voice.label,
                "condition": item.condition.name, "noise": item.noise, "family": item.family,
                "scene": item.scene, "spoken": item.spoken, "sentence": item.sentence,
                "expected": planned(item.scene, item.sentence),
            }) + "\n")
            if progress is not None and (i + 1) % 50 == 0:
                progress(f"{i + 1}/{len(chosen)} items")
    return len(chosen)
