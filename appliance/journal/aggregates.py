"""Aggregates other than the turn: the caregiver's settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event

SETTINGS_ID = uuid5(NAMESPACE_URL, "appliance:settings")
RETENTION_ID = uuid5(NAMESPACE_URL, "appliance:retention")
EPOCH_ID = uuid5(NAMESPACE_URL, "appliance:epoch")
TAUGHT_ID = uuid5(NAMESPACE_URL, "appliance:taught")
ALIASES_ID = uuid5(NAMESPACE_URL, "appliance:aliases")


class OneOfAKind(Aggregate):
    """An aggregate a journal holds one of, under the fixed id its class names (`ID`)."""

    ID: ClassVar[UUID]

    @classmethod
    def create_id(cls) -> UUID:
        return cls.ID


class DeviceSettings(OneOfAKind):
    """Every change names who changed what from what to what."""

    ID = SETTINGS_ID

    @event("Created")
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    @event("SettingChanged")
    def change(self, key: str, old: Any, new: Any, by: str) -> None:
        self.values[key] = new


class TaughtTargets(OneOfAKind):
    """Spots on screen a person named ("call 7 Save"): who taught which, and each use's hit
    or miss (appliance/desktop/seeing/taught.py; folded in journal/taught_log.py)."""

    ID = TAUGHT_ID

    @event("TeachingStarted")
    def __init__(self) -> None:
        self.count = 0

    @event("TargetTaught")
    def taught(self, target: dict[str, Any], by: str) -> None:
        """`target`: the TaughtTarget's fields (app, window, name, offset, text, fingerprint);
        `by`: how it was taught (voice, text, switch) and in which turn."""
        self.count += 1

    @event("TargetUsed")
    def used(self, target: str, hit: bool) -> None:
        """A click on a taught target: `hit` when looking again saw the window change."""

    @event("TargetForgotten")
    def forgotten(self, target: str, by: str) -> None:
        """A taught target dropped, by whom."""


class Aliases(OneOfAKind):
    """Names a person gave elements ("call Doctor Patel my doctor"), per application: who
    taught which, in which turn, and who forgot it (folded in journal/alias_log.py)."""

    ID = ALIASES_ID

    @event("AliasesStarted")
    def __init__(self) -> None:
        self.count = 0

    @event("AliasTaught")
    def taught(self, alias: str, app: str, element: str, role: str, name: str, by: str,
               turn: str) -> None:
        """`alias`: its id; `name`, the person's words for the element called `element` (of
        `role`) in `app`; `by`: who (voice, text, switch, or a caregiver's name); `turn`: the
        turn it was said in ("" from the caregiver page)."""
        self.count += 1

    @event("AliasForgotten")
    def forgotten(self, alias: str, app: str, element: str, name: str, by: str,
                  turn: str) -> None:
        """An alias dropped: which (its app, element and name, so it reads on its own), by whom
        and in which turn ("" from the caregiver page)."""


class Device(Aggregate):
    """An input or output device (the microphone, a switch): its faults and its counters."""

    @staticmethod
    def create_id(name: str) -> UUID:
        return uuid5(NAMESPACE_URL, f"appliance:device:{name}")

    @event("DeviceRegistered")
    def __init__(self, name: str) -> None:
        self.name = name
        self.faults = 0
        self.ignored = 0
        self.presses = 0

    @event("DeviceFault")
    def fault(self, message: str) -> None:
        self.faults += 1

    @event("SpeechIgnored")
    def speech_ignored(self, count: int) -> None:
        """Speech heard without the wake phrase: only counted, never transcribed into the log."""
        self.ignored += count

    @event("WebAccess")
    def web_access(self, what: str, caregiver: str, address: str) -> None:
        """On the caregiver web page: paired, logged in, login failed, logged out. The
        caregiver's name and where from; never a password or a code."""

    @event("JournalChecked")
    def journal_checked(self, intact: bool, problem: str, head: str) -> None:
        """The journal's own check (what `audit verify` does), run by the fleet uplink: so the
        central server hears of a journal that failed it."""

    @event("SwitchPressed")
    def switch_pressed(self, switch: int, gesture: str, meaning: str) -> None:
        """`switch` 1 or 2; `gesture` tap/hold/long_hold; `meaning` what the moment made of it."""
        self.presses += 1

    @event("VoiceTakesAdded")
    def voice_takes_added(self, phrase: str, kind: str, takes: int, source: str, by: str) -> None:
        """Takes of the person's voice added to their profile (never the audio): of what,
        how many, enrolled or learned from a yes, and by whom."""

    @event("VoiceTakesRemoved")
    def voice_takes_removed(self, phrase: str, takes: int, by: str) -> None:
        """Takes removed from the profile ("" phrase: all of them), and by whom."""


class Retention(OneOfAKind):
    """Transcripts removed after the time a caregiver chose: each removal names the events it
    rewrote and the keyed digest of each one's new content, so `audit verify` can tell a
    removal recorded here from a change nobody recorded."""

    ID = RETENTION_ID

    @event("RetentionStarted")
    def __init__(self) -> None:
        self.removals = 0

    @event("TranscriptsRemoved")
    def removed(self, before: str, by: str, digests: dict[str, str]) -> None:
        self.removals += 1


@dataclass(frozen=True)
class Replaced:
    """A damaged journal file set aside: where it now is, its last head (NID:HASH16, from the
    file or else the device's witness of it; "" when neither could be read), and the damage."""

    file: str
    head: str
    damage: str


class JournalEpoch(OneOfAKind):
    """The journal's own random id, made when it is created (or first opened by a version that
    knows epochs): a re-flashed kiosk numbers its events from 1 again under a new epoch, so the
    central server never takes them for the old journal's."""

    ID = EPOCH_ID

    @event("EpochStarted")
    def __init__(
        self, epoch: str, replaces: str = "", replaced_head: str = "", damage: str = ""
    ) -> None:
        """`replaces`: the damaged journal file this one was started in place of (set aside
        beside it), its last head (NID:HASH16, "" when unreadable) and the damage found; an
        EpochStarted stored before these fields existed loads with them empty."""
        self.epoch = epoch
        self.replaces = replaces
        self.replaced_head = replaced_head
        self.damage = damage

    @event("EpochRestarted")
    def restart(self, epoch: str, reason: str) -> None:
        """A new epoch for a journal whose copy elsewhere went further than it (restored from
        a backup): what it records from now on is never taken for what the copy holds."""
        self.epoch = epoch
