"""`appliance doctor`: every part of the device checked in turn, each bounded in time, each
answered in one line. The web Health page uses the same checks for the parts it shows."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from appliance.health.check import Check, Examined, Probe, examine, key_of, within
from appliance.settings import Settings

LABELS = {"ok": "ok", "problem": "PROBLEM", "unknown": "unknown"}
SETTINGS_TIMEOUT_S = 3.0  # well inside the Switch and Language model bounds


def probes(store: str | None) -> list[Probe]:
    """The checks in the order a person would look: hear, speak, press, understand, act, keep."""
    from appliance.health import atspi, audio, journal, language_model, speech, switch, uinput

    def read() -> tuple[Settings, frozenset[str]]:
        opened = journal.opened(store)
        if isinstance(opened, Check):
            return Settings(), frozenset()
        return opened.settings(), opened.chosen_settings()

    @cache
    def settings() -> tuple[Settings, frozenset[str]]:
        """The journal's settings (as the kiosk would start with), else the defaults: a journal
        that is damaged or does not answer is the Journal line's to name, not the switch's."""
        return within(read, SETTINGS_TIMEOUT_S) or (Settings(), frozenset())

    return [
        Probe("Microphone", audio.microphone, 8.0,
              "the audio device hangs: unplug and replug it, or restart the sound server"),
        Probe("Speaker", audio.speaker, 8.0,
              "the audio device hangs: unplug and replug it, or restart the sound server"),
        Probe("Switch", lambda: switch.switch(settings()[0]), 8.0,
              "an input device hangs: unplug the switch and plug it in again"),
        Probe("Speech models", speech.verified, 180.0,
              "reading the models is too slow: check the disk (dmesg for I/O errors)"),
        Probe("Language model", lambda: language_model.language_model(*settings()), 8.0,
              "the model's daemon hangs: restart it (systemctl restart ollama)"),
        Probe("AT-SPI", atspi.atspi, 8.0,
              "the session or accessibility bus hangs: restart the kiosk session"),
        Probe("uinput", uinput.uinput, 8.0,
              "the kernel's uinput hangs: reboot the device"),
        Probe("Disk", lambda: journal.journal_disk(store), 8.0,
              "the disk does not answer: check it (dmesg for I/O errors)"),
        Probe("Journal", lambda: journal.stored(store), 600.0,
              "verifying takes too long: run appliance audit verify on its own"),
    ]


class UnknownCheck(ValueError):
    """--only named a check doctor does not have."""


def only(found: list[Probe], names: str | None) -> list[Probe]:
    """The probes named in `names` (keys, comma-separated: "journal,disk"), in doctor's order."""
    if not names:
        return found
    wanted = {key_of(n) for n in names.split(",") if n.strip()}
    known = [key_of(p.what) for p in found]
    unknown = sorted(wanted - set(known))
    if unknown or not wanted:
        raise UnknownCheck(f"no check called {', '.join(unknown) or repr(names)}; "
                           f"choose from {', '.join(known)}")
    return [p for p in found if key_of(p.what) in wanted]


def run_all(found: list[Probe], each: Callable[[Examined], None] | None = None) -> list[Examined]:
    """Every probe's answer in order, `each` told as soon as one answers; a crash or a hang
    never stops the others."""
    results = []
    for probe in found:
        result = examine(probe)
        if each is not None:
            each(result)
        results.append(result)
    return results


def line(examined: Examined) -> str:
    c = examined.check
    return f"{LABELS[c.state]:<8} {c.what}: {c.detail}"


def report(results: list[Examined]) -> dict[str, Any]:
    """The --json shape: ok is false when any check found a problem."""
    return {
        "ok": not problems(results),
        "checks": [
            {"check": r.check.key, "what": r.check.what, "state": r.check.state,
             "detail": r.check.detail, "took_s": round(r.took_s, 3)}
            for r in results
        ],
    }


def problems(results: list[Examined]) -> list[str]:
    return [r.check.what for r in results if r.check.state == "problem"]
