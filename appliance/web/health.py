"""The health page: is each part of the appliance able to do its job, in one line each.

The checks are appliance/health's, the same `appliance doctor` runs; the page shows the quick
ones (what the journal recorded of the devices rather than opening them under the kiosk)."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from appliance.health import journal as journal_health
from appliance.health.check import Check, State
from appliance.health.language_model import language_model
from appliance.health.speech import installed
from appliance.journal.application import Journal

__all__ = ["Check", "State", "checks", "verify"]


def checks(journal: Journal, folder: Path, verified: Check | None) -> list[Check]:
    """Every check that answers quickly; `verified` is the last journal check the page ran."""
    out = [Check("Version", "ok", _version()), journal_health.head(journal), verified or Check(
        "Journal check", "unknown", "not run since this page started: press Check now"),
        journal_health.set_aside(folder, journal)]
    out += [journal_health.recorded_faults(journal, "microphone", "Microphone"),
            journal_health.recorded_faults(journal, "switch", "Switch")]
    out += [installed(), language_model(journal.settings(), journal.chosen_settings()),
            journal_health.disk(folder), _fleet(folder)]
    return out


def verify(journal: Journal) -> Check:
    """The hash chain and snapshots, checked now (what `appliance audit verify` does)."""
    return journal_health.verified(journal)


def _version() -> str:
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
