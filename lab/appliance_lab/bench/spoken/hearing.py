"""The product's hearing as the spoken benches use it: Whisper with the wake spotter's rule, and
the person's hearing of one profile, which learns nothing (the lab only listens)."""

from __future__ import annotations

from pathlib import Path

from appliance.voice.commands import engines
from appliance.voice.hearing.closed_whisper import WAKE_CHECKS, ClosedWhisperRecognizer
from appliance.voice.hearing.personal import PersonalHearing, PersonalOptions
from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.wake_spotter import WakeSpotter


def spotter_whisper(tool: str) -> ClosedWhisperRecognizer:
    """Whisper tiny.en with the `spotter` wake rule; exits with a line when either is missing."""
    loaded = engines("whisper")
    if loaded.whisper is None or WakeSpotter.load("hey juniper") is None:
        raise SystemExit(f"{tool}: Whisper and the wake spotter are needed")
    return ClosedWhisperRecognizer(loaded.whisper, wake_check=WAKE_CHECKS["spotter"])


def personal_hearing(profile: Path, whisper: ClosedWhisperRecognizer) -> PersonalHearing:
    """The takes and Whisper together, as the STT hears with this profile."""
    return PersonalHearing(VoiceProfile(profile), whisper, lambda *a: None, lambda _s: None,
                           PersonalOptions(learning=False))
