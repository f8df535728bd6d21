"""The switch: which input device would be read (`appliance switch probe`), and why none."""

from __future__ import annotations

import os
from pathlib import Path

from appliance.health.check import Check, current_user
from appliance.settings import Settings

INPUT_DIR = Path("/dev/input")
RULE = "hardware/70-appliance.rules"
KEYBOARD_KEYS = 50  # a switch box or the gpio-key overlay has a few keys, a keyboard about 100


def switch(settings: Settings) -> Check:
    """The chosen switch; none is a problem only when a caregiver set the device up for one."""
    try:
        from appliance.switch.devices import SwitchError, pick, probe
    except ImportError:
        return Check("Switch", "problem", "python evdev is not installed: "
                     "pip install 'appliance[desktop]'")
    try:
        found = probe(settings)
    except SwitchError as e:
        return Check("Switch", "problem", f"{e} (appliance settings set ... --by NAME)")
    chosen = next((c for c in found if c.chosen), None)
    named = bool(settings.switch_device.strip())
    expected = named or settings.scan_mode != "off"
    if chosen is not None and (named or chosen.key_count < KEYBOARD_KEYS):
        others = len(found) - 1
        return Check("Switch", "ok", (
            f'"{chosen.name}" at {chosen.path}, keys {", ".join(chosen.keys)}'
            + (f"; {others} other input device(s) left alone" if others else "")))
    why = _why_none(len(found), settings)
    if chosen is None and named:
        try:
            pick(found, settings.switch_device.strip())
        except SwitchError as e:
            why = str(e).rstrip(".")
    if chosen is not None:  # only a full keyboard has the keys: it would be taken (and grabbed)
        why = (f'no switch found: only the keyboard "{chosen.name}" ({chosen.key_count} keys) '
               "has a switch key, and it would be taken for the switch")
    if not expected:
        return Check("Switch", "unknown", (
            f"{why}; none is set up (switch_device empty, scan_mode off), so the device is "
            "used by voice: plug a switch in for switch access"))
    return Check("Switch", "problem", (
        f"{why}: plug the switch in, or set switch_device and switch_keys "
        "(appliance switch probe lists the devices)"))


def _why_none(readable: int, settings: Settings) -> str:
    """What was seen: no devices at all, devices this user cannot read, or none with the keys."""
    if not INPUT_DIR.is_dir():
        return f"no switch found: {INPUT_DIR} is missing (no input devices at all)"
    events = sorted(INPUT_DIR.glob("event*"))
    closed = [p for p in events if not os.access(p, os.R_OK)]
    if closed:
        return (f"no switch found among {readable} readable input device(s); {len(closed)} "
                f"more are not readable by {current_user()} (the udev rule {RULE} gives "
                "the appliance group the switches)")
    keys = ", ".join(settings.switch_keys)
    return f"no switch found: none of {readable} input device(s) has a switch key ({keys})"
