"""The health page: is the kiosk listening now, and can each part do its job, in plain words,
with the technical detail (digests, paths, commands to run on the device) folded away.

The checks are appliance/health's, the same `appliance doctor` runs; the page shows the quick
ones (what the journal recorded of the devices rather than opening them under the kiosk), and
the kiosk's heartbeat (appliance/health/heartbeat.py) for what is happening now."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from importlib import metadata
from pathlib import Path
from typing import Literal

from appliance.health import journal as journal_health
from appliance.health.check import Check, State
from appliance.health.heartbeat import Beat, Liveness, heartbeat_path, liveness, loudness, read_beat
from appliance.health.language_model import in_words, language_model
from appliance.health.speech import installed
from appliance.journal.application import Journal

__all__ = ["Check", "Part", "State", "checks", "kiosk_now", "parts", "verify"]

Shown = Literal["ok", "problem", "unknown", "off"]
SAID = {"ok": "Working", "problem": "Needs attention", "unknown": "Not known now",
        "off": "Not used"}
ICONS = {"ok": "check", "problem": "alert", "unknown": "question", "off": "blocked"}
TONES = {"ok": "done", "problem": "failed", "unknown": "cancelled", "off": "cancelled"}


@dataclass(frozen=True)
class Part:
    """One part of the appliance as a caregiver reads it; `technical` is for the folded detail."""

    name: str
    state: Shown
    words: str
    technical: str

    @property
    def said(self) -> str:
        return SAID[self.state]

    @property
    def icon(self) -> str:
        return ICONS[self.state]

    @property
    def tone(self) -> str:
        return TONES[self.state]


def checks(journal: Journal, folder: Path, verified: Check | None) -> list[Check]:
    """Every check that answers quickly; `verified` is the last journal check the page ran."""
    out = [Check("Version", "ok", version()), journal_health.head(journal), verified or Check(
        "Journal check", "unknown", "not run since this page started: press Check now"),
        journal_health.set_aside(folder, journal)]
    out += [journal_health.recorded_faults(journal, "microphone", "Microphone"),
            journal_health.recorded_faults(journal, "switch", "Switch")]
    out += [installed(), language_model(journal.settings(), journal.chosen_settings()),
            journal_health.disk(folder), _fleet(folder)]
    return out


def kiosk_now(folder: Path, now: float, zone: tzinfo) -> tuple[Beat | None, Liveness]:
    """The kiosk's last heartbeat beside the journal in `folder`, and what it says at `now`."""
    beat = read_beat(heartbeat_path(folder))
    return beat, liveness(beat, now, zone)


def parts(journal: Journal, folder: Path, verified: tuple[Check, float] | None, now: float,
          zone: tzinfo) -> list[Part]:
    """Each part in plain words: what is known, and what is not (never "OK" for a device
    nothing is reading). `verified`: the last journal check run from the page, and when."""
    beat, live = kiosk_now(folder, now, zone)
    out = [_microphone(journal, beat, live), _switch(journal), _speech()]
    settings, chosen = journal.settings(), journal.chosen_settings()
    model = in_words(settings, chosen)
    shown: Shown = "problem" if model.state != "ok" else "off" if model.used == "off" else "ok"
    out.append(Part("Language model", shown, model.words, model.technical))
    out += _record(journal, folder, verified, zone)
    disk = journal_health.disk(folder)
    free = disk.detail.split(" free", 1)[0]
    out.append(Part("Space for the record", "ok", f"Plenty: {free} free.", disk.detail)
               if disk.state == "ok" else Part("Space for the record", "problem", (
                   f"Almost full: only {free} free. When it is full nothing more is recorded "
                   "and commands stop: ask whoever set the device up to free some space."),
                   disk.detail))
    fleet = _fleet(folder)
    if fleet.state == "unknown":
        out.append(Part("Care home server", "off", "Not joined: nothing leaves this device.",
                        fleet.detail))
    else:
        out.append(Part("Care home server", fleet.state, "Sending its record to the care "
                        "home's server." if fleet.state == "ok" else "Joined to a care home's "
                        "server, but the record is not reaching it now.", fleet.detail))
    return out


def _microphone(journal: Journal, beat: Beat | None, live: Liveness) -> Part:
    device = journal.device("microphone")
    faults = (f" It has recorded {device.faults} microphone "
              f"problem{'s' if device.faults != 1 else ''} in all (under Logins and devices)."
              if device.faults else "")
    technical = f"{live.technical}; {device.faults} fault(s) recorded"
    if live.ok:
        level = beat.level_dbfs if beat else None
        return Part("Microphone", "ok", f"It hears {loudness(level)} now.{faults}", technical)
    if live.kind in ("silent", "muted"):
        return Part("Microphone", "problem", live.words + faults, technical)
    return Part("Microphone", "unknown", (
        "Not known: the kiosk is not listening, so nothing is reading the microphone." + faults),
        technical)


def _switch(journal: Journal) -> Part:
    device = journal.device("switch")
    technical = journal_health.recorded_faults(journal, "switch", "Switch").detail
    if device.faults:
        return Part("Switch", "problem", (
            f"The kiosk recorded {device.faults} switch problem"
            f"{'s' if device.faults != 1 else ''} (not found, unplugged, or back): see Logins "
            "and devices."), technical)
    used = (f"It has been pressed {device.presses} time{'s' if device.presses != 1 else ''}. "
            if device.presses else "")
    return Part("Switch", "unknown", (
        f"No switch problems recorded. {used}Whether a switch is plugged in now is checked "
        "only on the device itself."), technical)


def _speech() -> Part:
    check = installed()
    if check.state == "ok":
        return Part("Speech", "ok", "Installed: it can hear what is said and speak back.",
                    check.detail)
    return Part("Speech", "problem", (
        "Some of what it needs to hear or to speak is not installed: it cannot do both until "
        "it is. Ask whoever set the device up."), check.detail)


def _record(journal: Journal, folder: Path, verified: tuple[Check, float] | None,
            zone: tzinfo) -> list[Part]:
    """The journal, in words: it is readable, when it was last checked, any damaged file."""
    head = journal_health.head(journal)
    if head.state != "ok":
        out = [Part("Record of what happened", "problem", (
            "It cannot be read now: keep the device as it is and ask whoever set it up."),
            head.detail)]
    elif verified is None:
        count = journal.head().count
        out = [Part("Record of what happened", "unknown", (
            f"It holds {count:,} entries. Not checked for changes since this page started: "
            "press Check the record now."), head.detail)]
    else:
        check, at = verified
        when = datetime.fromtimestamp(at, zone).strftime("%H:%M")
        out = [Part("Record of what happened", "ok", (
            f"Checked at {when}: nothing in it was changed or removed."), check.detail)
               if check.state == "ok" else Part("Record of what happened", "problem", (
                   f"Checked at {when}: it is damaged or was changed. Keep the device as it is "
                   "and ask whoever set it up; the technical detail says where."), check.detail)]
    aside = journal_health.set_aside(folder, journal)
    if aside.state != "ok":
        out.append(Part("Damaged record file", "problem", (
            "A damaged record file was put aside and a new one started; commands go on. What "
            "is left of the old one can still be read on the device."), aside.detail))
    return out


def verify(journal: Journal) -> Check:
    """The hash chain and snapshots, checked now (what `appliance audit verify` does)."""
    return journal_health.verified(journal)


def version() -> str:
    try:
        return f"appliance {metadata.version('appliance')}"
    except metadata.PackageNotFoundError:
        return "appliance (not installed as a package)"


def _fleet(folder: Path) -> Check:
    """The uplink's last word: how far the central copy is behind, or why it is not moving."""
    from appliance.fleet.uplink import read_status

    status = read_status(folder)
    if status is None:
        return Check("Central server", "unknown", "not joined, or the uplink never ran")
    behind = (f"{status['lag_events']} events ({status['lag_s']:.0f} s) not yet at "
              f"{status['central']}")
    if status["state"] == "ok":
        return Check("Central server", "ok", f"sending as {status['kiosk']}; {behind}")
    return Check("Central server", "problem", f"{status['state']}: {status['detail']}; {behind}")
