"""The clips the wake tuning runs hear, from the spoken corpus's TUNING part only (issue 15):
wake items, and the tuning voices' speech without the wake phrase, near misses included."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from appliance.voice.hearing.stt_whisper import RATE, TRAILING_SILENCE_S
from appliance_lab.bench.spoken.conditions import Condition
from appliance_lab.bench.spoken.corpus import (
    CorpusItem,
    audio,
    items,
    load_part,
    noise_for,
    non_wake_audio,
    sample,
)
from appliance_lab.bench.spoken.voices import Voice

COND_NAMES = ("clean", "snr10", "snr5", "reverb")
NEAR_MISSES = (
    # The tuning part's own near misses are few; these are more of the same kind (a name like
    # the wake word after "hey", the wake word inside a sentence), written for tuning.
    "hey junior, where are my keys",
    "hey jennie, come and look at this",
    "hey julia, the bus is here",
    "hey jasper, sit down",
    "hi juno, how are you",
    "the juniper berries are ripe",
    "okay, juniper is a lovely name",
    "hey judy, pass the milk",
    "hey you, pick that up",
    "we cut the juniper hedge",
    "hey genie, make a wish",
    "hey jenny, click save",
)
VAD_TAIL = bytes(int(TRAILING_SILENCE_S * RATE) * 2)
"""The silence after speech that the VAD hands over with it (16 kHz PCM16)."""


def tuning_sentences() -> list[str]:
    """Every command sentence of the TUNING part, family by family and scene by scene."""
    return [s for fam in load_part("tune").sentences.values() for ss in fam.values() for s in ss]


def non_wake_lines() -> list[str]:
    """What the tuning voices say without the wake phrase: the part's own lines, NEAR_MISSES,
    and every eighth command sentence."""
    return [*load_part("tune").non_wake, *NEAR_MISSES, *tuning_sentences()[::8]]


def wake_clips(per: int, conds: Sequence[Condition]) -> Iterator[tuple[CorpusItem, bytes]]:
    """`per` wake items for each tuning voice and condition, each with its audio."""
    for item in sample(items("tune", conds), per):
        yield item, audio(item) + VAD_TAIL


def non_wake_clips(lines: Sequence[str], conds: Sequence[Condition]
                   ) -> Iterator[tuple[Voice, Condition, str, bytes]]:
    """Each tuning voice saying each of `lines` under each condition, with its audio."""
    for voice in load_part("tune").voices:
        for line in lines:
            for cond in conds:
                pcm = non_wake_audio("tune", voice, line, cond, noise_for(voice, line, cond))
                yield voice, cond, line, pcm + VAD_TAIL
