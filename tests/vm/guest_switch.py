"""Runs inside the throwaway QEMU guest: a uinput-made switch read by SwitchSource + Gestures.

Each phase drives the virtual switch like a person (or a bad cable) would and records what the
appliance made of it. Prints one line `RESULT <json>` for tests/vm/test_switch_vm.py.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import stat
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import evdev
from evdev import ecodes

from appliance.settings import Settings
from appliance.switch.devices import SwitchError, probe
from appliance.switch.evdev_source import SwitchInput, SwitchSource
from appliance.switch.model import Edge, Press

NAME = "Test Switch Interface"
SPACE, ENTER = ecodes.KEY_SPACE, ecodes.KEY_ENTER
SETTINGS = Settings(switch_hold_s=0.5, switch_long_hold_s=1.2, switch_debounce_ms=40,
                    switch_ignore_repeat_ms=250)


def plug() -> evdev.UInput:
    return evdev.UInput({ecodes.EV_KEY: [SPACE, ENTER]}, name=NAME, vendor=0x1209,
                        product=0x5157)


def key(ui: evdev.UInput, code: int, value: int) -> None:
    ui.write(ecodes.EV_KEY, code, value)
    ui.syn()


def device_path(name: str) -> str:
    for _ in range(100):
        for path in evdev.list_devices():
            if evdev.InputDevice(path).name == name:
                return path
        time.sleep(0.05)
    raise SystemExit(f"no input device named {name}")


class Recorder:
    """What the kiosk would be told: SwitchInput's edges and presses, and its faults."""

    def __init__(self) -> None:
        self.out: list[dict[str, Any]] = []
        self.faults: list[str] = []
        self.lock = threading.Lock()

    def fault(self, message: str) -> None:
        with self.lock:
            self.faults.append(message)
            self.out.append({"fault": message})

    def event(self, e: Edge | Press) -> None:
        with self.lock:
            if isinstance(e, Press):
                self.out.append({"press": e.gesture, "switch": e.switch,
                                 "held_s": round(e.held_s, 3)})
            else:
                self.out.append({"edge": "down" if e.down else "up", "switch": e.switch})

    def phase(self, action: Any, settle: float = 0.6) -> list[dict[str, Any]]:
        with self.lock:
            start = len(self.out)
        action()
        time.sleep(settle)
        with self.lock:
            return self.out[start:]


def main() -> None:
    result: dict[str, Any] = {}
    ui = plug()
    path = device_path(NAME)
    found = probe(SETTINGS)
    result["probe"] = [{"name": c.name, "keys": list(c.keys), "key_count": c.key_count,
                        "chosen": c.chosen} for c in found]
    keyboard = next(c.path for c in found if c.key_count > 50)
    result["udev"] = udev_check({"uinput": "/dev/uinput", "switch": path, "keyboard": keyboard})
    try:
        SwitchSource(SETTINGS.model_copy(update={"switch_device": "Big Red Button"}),
                     lambda e: None).open()
        result["missing"] = "opened"
    except SwitchError as exc:
        result["missing"] = str(exc)

    rec = Recorder()
    # No switch_device: chosen by capability (the guest's PS/2 keyboard has KEY_SPACE too).
    switch = SwitchInput(SETTINGS, rec.event, rec.fault, poll_s=0.2)
    switch.start()
    source = switch.source
    result["chosen"] = source.name
    result["chosen_path_matches"] = source.chosen is not None and source.chosen.path == path
    other = evdev.InputDevice(path)  # another reader: the grab must keep the switch from it

    def tap(code: int = SPACE, hold: float = 0.1) -> None:
        key(ui, code, 1)
        time.sleep(hold)
        key(ui, code, 0)

    result["tap"] = rec.phase(tap)
    result["other_reader_events"] = len(select.select([other.fd], [], [], 0.1)[0])

    def hold_with_autorepeat() -> None:
        key(ui, SPACE, 1)
        for _ in range(5):
            time.sleep(0.15)
            key(ui, SPACE, 2)  # what the kernel sends for a held key on a device with EV_REP
        time.sleep(0.1)
        key(ui, SPACE, 0)

    result["hold"] = rec.phase(hold_with_autorepeat)
    result["long_hold"] = rec.phase(lambda: tap(hold=1.6))

    def bouncy_tap() -> None:
        # Contact chatter: down/up/down within a few ms, a real 0.2 s press, chatter on release.
        for value in (1, 0, 1):
            key(ui, SPACE, value)
            time.sleep(0.003)
        time.sleep(0.2)
        for value in (0, 1, 0):
            key(ui, SPACE, value)
            time.sleep(0.003)

    result["bounce"] = rec.phase(bouncy_tap)

    def double_tap() -> None:
        tap(hold=0.1)
        time.sleep(0.08)  # pressed again 80 ms after the release: inside ignore-repeat
        tap(hold=0.1)

    result["repeat"] = rec.phase(double_tap)
    result["second_switch"] = rec.phase(lambda: tap(ENTER))

    def unplug_while_held() -> None:
        key(ui, SPACE, 1)
        time.sleep(0.1)
        ui.close()

    result["unplug"] = rec.phase(unplug_while_held, settle=1.0)
    result["connected_while_gone"] = source.connected
    replugged: list[evdev.UInput] = []
    result["replug"] = rec.phase(lambda: replugged.append(plug()), settle=1.0)
    result["connected_again"] = source.connected
    time.sleep(0.3)  # ignore-repeat after the release the unplug made
    result["after_replug"] = rec.phase(lambda: tap_on(replugged[0]))
    switch.stop()

    # Started before its switch is plugged in: says so, then finds it without a restart.
    late = Recorder()
    named = SETTINGS.model_copy(update={"switch_device": "Late Switch"})
    waiting = SwitchInput(named, late.event, late.fault, poll_s=0.2)
    result["late_before"] = late.phase(lambda: waiting.start(wait=True), settle=0.5)
    late_ui: list[evdev.UInput] = []
    result["late_plugged"] = late.phase(lambda: late_ui.append(evdev.UInput(
        {ecodes.EV_KEY: [SPACE]}, name="Late Switch")), settle=1.0)
    result["late_tap"] = late.phase(lambda: tap_on(late_ui[0]))
    waiting.stop()
    late_ui[0].close()
    result["faults"] = rec.faults
    replugged[0].close()
    print("RESULT " + json.dumps(result), flush=True)


def udev_check(nodes: dict[str, str]) -> dict[str, Any]:
    """Run hardware/70-appliance.rules (the only rules in the guest) on real devices with
    `udevadm test`, which applies the owner and mode it decides; report what each node got."""
    if shutil.which("udevadm") is None:
        return {"error": "udevadm missing in the guest (apt-get install udev on the host)"}
    out: dict[str, Any] = {}
    for label, node in nodes.items():
        sysfs = f"/sys/class/{'misc' if node == '/dev/uinput' else 'input'}/{Path(node).name}"
        run = subprocess.run(["udevadm", "test", "--action=add", sysfs], capture_output=True,
                             text=True, check=False)
        st = os.stat(node)
        out[label] = {"gid": st.st_gid, "mode": oct(stat.S_IMODE(st.st_mode)),
                      "rc": run.returncode,
                      "rule_lines": [ln for ln in (run.stdout + run.stderr).splitlines()
                                     if "70-appliance.rules" in ln]}
    return out


def tap_on(ui: evdev.UInput) -> None:
    key(ui, SPACE, 1)
    time.sleep(0.1)
    key(ui, SPACE, 0)


if __name__ == "__main__":
    main()
