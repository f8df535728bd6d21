"""Runs inside the throwaway QEMU guest: doctor's uinput and switch checks where the kernel has
uinput and input devices, as root and as users with and without the device's group.

Prints one line `RESULT <json>` for tests/integration/test_doctor.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import evdev
from evdev import ecodes

from appliance.health.check import Probe
from appliance.health.doctor import line, run_all
from appliance.health.switch import switch
from appliance.health.uinput import uinput
from appliance.settings import Settings

GROUP = 990  # the appliance group of the guest's /etc/group (the udev rule's)
NOBODY = 65534
SCANNING = Settings(scan_mode="auto")


def lines(*probes: Probe) -> list[str]:
    return [line(r) for r in run_all(list(probes))]


def as_user(groups: list[int]) -> str:
    """doctor's uinput line from a process of an unprivileged user with these groups."""
    code = ("from appliance.health.check import Probe\n"
            "from appliance.health.doctor import line, run_all\n"
            "from appliance.health.uinput import uinput\n"
            "print(line(run_all([Probe('uinput', uinput, 8.0, '-')])[0]))\n")
    done = subprocess.run([sys.executable, "-c", code], user=NOBODY, group=NOBODY,
                          extra_groups=groups, capture_output=True, text=True, timeout=60,
                          check=False)
    return (done.stdout + done.stderr).strip()


def main() -> None:
    out: dict[str, object] = {}
    out["root"] = lines(Probe("uinput", uinput, 8.0, "-"),
                        Probe("Switch", lambda: switch(SCANNING), 8.0, "-"))
    plugged = evdev.UInput({ecodes.EV_KEY: [ecodes.BTN_0]}, name="Test Switch Box")
    time.sleep(0.3)  # the kernel announces the new node
    out["plugged"] = lines(Probe("Switch", lambda: switch(SCANNING), 8.0, "-"))
    plugged.close()
    os.chown("/dev/uinput", 0, GROUP)  # what hardware/70-appliance.rules sets
    os.chmod("/dev/uinput", 0o660)
    out["outsider"] = as_user([])
    out["member"] = as_user([GROUP])
    print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
