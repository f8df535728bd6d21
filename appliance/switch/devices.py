"""Which /dev/input device is the switch: key names to codes, choosing a device, and a probe."""

from __future__ import annotations

import errno
import re
from dataclasses import dataclass

import evdev
from evdev import ecodes

from appliance.settings import Settings

# The appliance's own uinput devices type for it; reading them back as a switch would loop.
OWN_DEVICE_PREFIX = "appliance virtual"


class SwitchError(Exception):
    """A short, speakable reason the switch cannot be used."""


@dataclass(frozen=True)
class Candidate:
    """An input device with keys, and which of the configured switch keys it has."""

    path: str
    name: str
    keys: tuple[str, ...]  # configured keys it has, switch 1's first
    key_count: int  # every key it has: a switch box has few, a full keyboard about a hundred
    chosen: bool = False


def key_codes(settings: Settings) -> dict[int, int]:
    """Code -> switch number (1 or 2) for the configured key names."""
    codes: dict[int, int] = {}
    for switch, names in ((2, settings.switch_second_keys), (1, settings.switch_keys)):
        for name in names:
            code = ecodes.ecodes.get(name.strip().upper())
            if code is None or not name.strip().upper().startswith(("KEY_", "BTN_")):
                raise SwitchError(
                    f"Unknown switch key {name!r}: use a name like KEY_SPACE or BTN_0."
                )
            codes[code] = switch  # a key in both lists is switch 1's
    if not codes:
        raise SwitchError("No switch keys are set: set switch_keys, e.g. KEY_SPACE.")
    return codes


def _event_number(path: str) -> int:
    found = re.search(r"(\d+)$", path)
    return int(found.group(1)) if found else 1 << 30


def _name_of(code: int) -> str:
    name = ecodes.KEY.get(code) or ecodes.BTN.get(code) or str(code)
    # Some codes have two names (BTN_0 is also BTN_MISC): the first is the usual one.
    return name if isinstance(name, str) else name[0]


def _describe(path: str, wanted: dict[int, int]) -> Candidate | None:
    try:
        dev = evdev.InputDevice(path)
    except OSError:
        return None  # gone, or not ours to read (the udev rule decides)
    try:
        keys = set(dev.capabilities().get(ecodes.EV_KEY, []))
        name = dev.name
    finally:
        dev.close()
    if not keys:
        return None
    have = sorted((code for code in wanted if code in keys), key=lambda c: (wanted[c], c))
    return Candidate(path, name, tuple(_name_of(c) for c in have), len(keys))


def _matches(candidate: Candidate, device: str) -> bool:
    if device.startswith("/dev/"):
        return candidate.path == device
    return device.lower() in candidate.name.lower()


def probe(settings: Settings) -> list[Candidate]:
    """Every readable input device with keys, the one `choose` would take marked `chosen`."""
    wanted = key_codes(settings)
    found = [c for p in evdev.list_devices() if (c := _describe(p, wanted)) is not None]
    found.sort(key=lambda c: _event_number(c.path))
    try:
        chosen = pick(found, settings.switch_device.strip())
    except SwitchError:
        return found
    return [Candidate(c.path, c.name, c.keys, c.key_count, c is chosen) for c in found]


def pick(found: list[Candidate], device: str) -> Candidate:
    """The rules of `choose`, on devices already described."""
    usable = [c for c in found if c.keys and not c.name.lower().startswith(OWN_DEVICE_PREFIX)]
    if device:
        named = [c for c in found if _matches(c, device)]
        if not named:
            raise SwitchError(f"No switch named {device!r} is plugged in.")
        usable = [c for c in named if c in usable]
        if not usable:
            raise SwitchError(f"The switch {device!r} has none of the switch keys.")
    if not usable:
        raise SwitchError("No switch found: plug one in or set switch_device.")
    # A switch box or the gpio-key overlay has a few keys, a keyboard a hundred: prefer the
    # smallest, so a caregiver's keyboard is not taken for the switch (set switch_device to be
    # sure); then the lowest event number.
    return min(usable, key=lambda c: (c.key_count, _event_number(c.path)))


def choose(settings: Settings) -> Candidate:
    """The device to read: by path, by name part, or the first with a configured key."""
    wanted = key_codes(settings)
    device = settings.switch_device.strip()
    if device.startswith("/dev/"):
        described = _describe(device, wanted)
        if described is None:
            raise SwitchError(f"The switch device {device} is not there or not readable.")
        return pick([described], device)
    found = [c for p in evdev.list_devices() if (c := _describe(p, wanted)) is not None]
    return pick(found, device)


def is_gone(exc: OSError) -> bool:
    """The device was unplugged (rather than some other I/O trouble)."""
    return exc.errno in (errno.ENODEV, errno.ENOENT, errno.ENXIO, errno.EBADF, errno.EIO)
