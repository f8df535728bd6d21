"""The kernel's uinput: the appliance types and clicks through it where AT-SPI cannot reach."""

from __future__ import annotations

import os
from pathlib import Path

from appliance.desktop.model import DesktopError
from appliance.health.check import Check, current_user, first_line

DEVICE = Path("/dev/uinput")
RULE = "hardware/70-appliance.rules"


def uinput(device: Path = DEVICE) -> Check:
    """/dev/uinput is there and writable, and the appliance's virtual keyboard can be made."""
    if not device.exists():
        return Check("uinput", "problem", (
            f"{device} missing: load the uinput module (sudo modprobe uinput; at boot: "
            "/etc/modules-load.d/uinput.conf holding the line uinput)"))
    if not os.access(device, os.R_OK | os.W_OK):
        return Check("uinput", "problem", (
            f"{device} is not writable by {current_user()}: add the user to the group the "
            f"udev rule {RULE} gives it (appliance), then log in again"))
    from appliance.desktop.uinput.devices import VirtualKeyboard

    try:
        keyboard = VirtualKeyboard(delay=0)
    except DesktopError as e:
        cause = f" ({first_line(e.__cause__)})" if e.__cause__ else ""
        return Check("uinput", "problem", (
            f"{e}{cause}: pip install 'appliance[desktop]' for python-uinput, and check "
            f"that {device} accepts new devices"))
    keyboard.close()
    return Check("uinput", "ok", f"{device}: made and removed the appliance's virtual keyboard")
