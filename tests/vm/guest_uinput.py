"""Runs inside the throwaway QEMU guest: drive the uinput devices, read them back with evdev.

Prints one line `RESULT <json>` for the host test to check.
"""

from __future__ import annotations

import json
import select
import time

import evdev
from evdev import ecodes

from appliance.desktop.model import DesktopError
from appliance.desktop.uinput.devices import VirtualKeyboard, VirtualPointer


def device_named(name: str) -> evdev.InputDevice:
    for _ in range(100):
        for path in evdev.list_devices():
            dev = evdev.InputDevice(path)
            if dev.name == name:
                return dev
        time.sleep(0.05)
    raise SystemExit(f"no input device named {name}")


def drain(dev: evdev.InputDevice, quiet: float = 0.3) -> list[list[int]]:
    """Every event until the device has been quiet for `quiet` seconds: [type, code, value]."""
    events: list[list[int]] = []
    while select.select([dev.fd], [], [], quiet)[0]:
        events += [[e.type, e.code, e.value] for e in dev.read()]
    return events


def main() -> None:
    out: dict[str, object] = {}
    keyboard = VirtualKeyboard(delay=0)
    kbd = device_named("appliance virtual keyboard")
    kbd.grab()
    out["keyboard_has_keys"] = ecodes.KEY_Z in kbd.capabilities().get(ecodes.EV_KEY, [])
    keyboard.press("ctrl+z")
    out["chord"] = [e for e in drain(kbd) if e[0] == ecodes.EV_KEY]
    keyboard.type("Hi there!")
    out["typed"] = [e for e in drain(kbd) if e[0] == ecodes.EV_KEY]
    try:
        keyboard.type("ok é")
        out["bad_char"] = "typed"
    except DesktopError as exc:
        out["bad_char"] = str(exc)
    out["after_bad_char"] = drain(kbd, quiet=0.2)
    pointer = VirtualPointer(1024, 768)
    ptr = device_named("appliance virtual pointer")
    pointer.click(100, 200)
    out["click"] = [e for e in drain(ptr) if e[0] in (ecodes.EV_KEY, ecodes.EV_ABS)]
    out["key_names"] = {"KEY_LEFTCTRL": ecodes.KEY_LEFTCTRL, "KEY_Z": ecodes.KEY_Z}
    print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
