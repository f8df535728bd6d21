"""The health page: is each part of the appliance able to do its job, in one line each."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

from appliance.journal.application import Journal

State = Literal["ok", "problem", "unknown"]
LOW_DISK_BYTES = 1 << 30


@dataclass(frozen=True)
class Check:
    what: str
    state: State
    detail: str


def checks(journal: Journal, folder: Path, verified: Check | None) -> list[Check]:
    """Every check that answers quickly; `verified` is the last journal check the page ran."""
    out = [Check("Version", "ok", _version()), _journal(journal), verified or Check(
        "Journal check", "unknown", "not run since this page started: press Check now")]
    out += [_device(journal, "microphone", "Microphone"), _device(journal, "switch", "Switch")]
    out += [_speech_models(), _language_model(journal), _disk(folder), _fleet(folder)]
    return out


def verify(journal: Journal) -> Check:
    """The hash chain and snapshots, checked now (what `appliance audit verify` does)."""
    breaks = journal.verify(None)
    head = journal.head()
    if breaks:
        return Check("Journal check", "problem", f"damaged: {breaks[0]}")
    return Check("Journal check", "ok",
                 f"intact: {head.count} events, hash chain verified; head {head}")


def _version() -> str:
    try:
        return f"appliance {metadata.version('appliance')}"
    except metadata.PackageNotFoundError:
        return "appliance (not installed as a package)"


def _journal(journal: Journal) -> Check:
    try:
        head = journal.head()
    except Exception as e:  # a damaged journal: said, not raised
        return Check("Journal", "problem", str(e))
    return Check("Journal", "ok", f"{head.count} events, head {head}")


def _device(journal: Journal, name: str, label: str) -> Check:
    device = journal.device(name)
    if device.faults:
        return Check(label, "problem", f"{device.faults} fault(s) recorded; see Today")
    counted = f", {device.presses} presses" if name == "switch" else ""
    return Check(label, "ok", f"no faults recorded{counted}")


def _speech_models() -> Check:
    from appliance.voice.models import status  # the registry alone: no speech stack loaded

    rows = status()
    have = [str(r["name"]) for r in rows if r["installed"]]
    kinds = {str(r["kind"]).split("-")[0] for r in rows if r["installed"]}
    state: State = "ok" if {"stt", "tts"} <= kinds else "problem"
    missing = [str(r["name"]) for r in rows if not r["installed"]]
    detail = "installed: " + (", ".join(have) or "none")
    return Check("Speech models", state, detail + (f"; not installed: {', '.join(missing)}"
                                                   if missing else ""))


def _language_model(journal: Journal) -> Check:
    settings = journal.settings()
    if settings.llm == "off":
        return Check("Language model", "ok", "off: the grammar alone plans")
    if settings.llm == "llama-cpp":
        from appliance.intents.llm_models import embedded_status

        found = [m for m in embedded_status()["models"] if m.get("installed")]
        state: State = "ok" if found else "problem"
        return Check("Language model", state, "embedded model " + (
            "installed" if found else "missing: appliance models install"))
    try:
        from appliance.intents.ollama import ollama_status
    except ImportError:
        return Check("Language model", "unknown", "the Ollama client is not installed")
    status = ollama_status(settings.ollama_host, timeout_s=1.0)
    if not status["reachable"]:
        return Check("Language model", "problem",
                     f"Ollama not reachable at {settings.ollama_host}: the grammar alone plans")
    return Check("Language model", "ok", f"Ollama at {settings.ollama_host}")


def _disk(folder: Path) -> Check:
    usage = shutil.disk_usage(folder)
    free_gb = usage.free / (1 << 30)
    state: State = "problem" if usage.free < LOW_DISK_BYTES else "ok"
    return Check("Disk", state, f"{free_gb:.1f} GB free of {usage.total / (1 << 30):.1f} GB")


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
