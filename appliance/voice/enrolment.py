"""Enrolment from recordings (`appliance enroll`): takes from WAV files added to the voice profile
of a journal, checked whole before any is added."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from appliance.voice.audio.pcm import PIPELINE_RATE, load_wav
from appliance.voice.errors import VoiceError
from appliance.voice.hearing.closed_set import closed_set
from appliance.voice.hearing.profile import (
    BadTake,
    Take,
    TakeKind,
    VoiceProfile,
    check_take,
)
from appliance.voice.hearing.wake import WakeGate

LONGEST_PHRASE_WORDS = 8
"""A phrase longer than this is not one command."""
LONGEST_NAME_WORDS = 3
"""The longest name a phrase may give a control ("tick the urgent box": "the urgent box")."""


def sayable(phrase: str) -> bool:
    """Whether some screen's closed set could hold `phrase`: a command of the grammar whose
    names are taken from its own words (a longer phrase is never one name said bare)."""
    said = phrase.casefold().split()
    if not said or len(said) > LONGEST_PHRASE_WORDS:
        return False
    spans = {(i, j) for i in range(len(said))
             for j in range(i + 1, min(len(said), i + LONGEST_NAME_WORDS) + 1)}
    if len(said) > 1:
        spans.discard((0, len(said)))
    names = tuple(sorted({" ".join(said[i:j]) for i, j in spans}))
    return " ".join(said) in closed_set(names, names, names)


@dataclass(frozen=True)
class Enrolled:
    phrase: str
    kind: TakeKind
    takes: list[Take]


def enrol_files(profile: VoiceProfile, phrase: str | None, wake_phrase: str,
                files: Sequence[Path]) -> Enrolled:
    """Each WAV file a take of `phrase` (None: of the wake phrase); a bad file or phrase is one
    VoiceError naming it, and then nothing is added."""
    if not files:
        raise VoiceError("give at least one WAV file of the person saying it")
    if phrase is None:
        kind, said = TakeKind.WAKE, " ".join(WakeGate(wake_phrase).phrase_words)
    else:
        kind, said = TakeKind.COMMAND, " ".join(phrase.casefold().split())
        if not sayable(said):
            raise VoiceError(f"'{said}' is not a command the appliance knows; enrol what the "
                             "person says to it, such as 'click send' or 'scroll down'")
    pcms = []
    for path in files:
        pcm = load_wav(path, PIPELINE_RATE).data
        try:
            check_take(pcm)
        except BadTake as e:
            raise VoiceError(f"{path.name}: {e}; nothing was added") from None
        pcms.append(pcm)
    return Enrolled(said, kind, [profile.add(said, kind, pcm) for pcm in pcms])
