"""Enrolment from recordings (`appliance enroll`): takes from WAV files added to the voice profile
of a journal, checked whole before any is added."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from appliance.voice.audio.pcm import PIPELINE_RATE, load_wav
from appliance.voice.errors import BadTake, VoiceError
from appliance.voice.hearing.enrolling import sayable
from appliance.voice.hearing.profile import (
    FREE_SPEECH,
    THE_ROOM,
    Take,
    TakeKind,
    VoiceProfile,
    longest_take_s,
)
from appliance.voice.hearing.take_audio import check_room, check_take
from appliance.voice.hearing.wake import WakeGate


@dataclass(frozen=True)
class Enrolled:
    phrase: str
    kind: TakeKind
    takes: list[Take]


def enrol_files(profile: VoiceProfile, kind: TakeKind, phrase: str | None, wake_phrase: str,
                files: Sequence[Path]) -> Enrolled:
    """Each WAV file a take of the wake phrase, of the command `phrase`, or of the person
    talking freely, or the one file of the room's own sound; a bad file or phrase is one
    VoiceError naming it, and then nothing is added."""
    if not files:
        raise VoiceError("give at least one WAV file of the person saying it"
                         if kind != TakeKind.ROOM else "give the WAV file of the room")
    if kind == TakeKind.ROOM and len(files) > 1:
        raise VoiceError("give one WAV file of the room: a new one replaces the one before")
    if kind == TakeKind.WAKE:
        said = " ".join(WakeGate(wake_phrase).phrase_words)
    elif kind == TakeKind.SPEECH:
        said = FREE_SPEECH
    elif kind == TakeKind.ROOM:
        said = THE_ROOM
    else:
        assert phrase is not None
        said = " ".join(phrase.casefold().split())
        if not sayable(said):
            raise VoiceError(f"'{said}' is not a command the appliance knows; enrol what the "
                             "person says to it, such as 'click send' or 'scroll down'")
    pcms = []
    for path in files:
        pcm = load_wav(path, PIPELINE_RATE).data
        try:
            if kind == TakeKind.ROOM:
                check_room(pcm)
            else:
                check_take(pcm, longest_take_s(kind))
        except BadTake as e:
            raise VoiceError(f"{path.name}: {e}; nothing was added") from None
        pcms.append(pcm)
    return Enrolled(said, kind, [profile.add(said, kind, pcm) for pcm in pcms])
