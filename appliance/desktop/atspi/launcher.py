"""Open only allowlisted applications (their .desktop entries) and wait for their window."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from appliance.desktop.atspi.bus import A11yBus, BusError
from appliance.desktop.atspi.gi_modules import Gio, GLib
from appliance.desktop.model import DesktopError

EXPOSE_ENV = {"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "ACCESSIBILITY_ENABLED": "1"}
"""What makes Qt and Chromium join the accessibility bus from their start; GTK needs nothing."""


@dataclass(frozen=True)
class Entry:
    name: str
    path: Path


class Launcher:
    """The allowlist: .desktop files (or folders of them) a caregiver chose."""

    def __init__(self, allowed: list[Path]) -> None:
        self.entries: dict[str, Entry] = {}
        for item in allowed:
            files = sorted(item.glob("*.desktop")) if item.is_dir() else [item]
            for path in files:
                info = Gio.DesktopAppInfo.new_from_filename(str(path))
                if info is None:
                    continue  # not a valid entry: not launchable
                self.entries[str(info.get_name()).casefold()] = Entry(str(info.get_name()), path)
        self.launched: dict[str, int] = {}  # entry name -> pid

    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entries.values())

    def entry(self, name: str) -> Entry:
        found = self.entries.get(name.casefold())
        if found is None:
            raise DesktopError(f"{name} is not on the list of applications I may open.")
        return found

    def launch(self, name: str) -> int:
        """Start the application; its process id."""
        entry = self.entry(name)
        info = Gio.DesktopAppInfo.new_from_filename(str(entry.path))
        pids: list[int] = []
        context = Gio.AppLaunchContext()
        for name, value in EXPOSE_ENV.items():
            context.setenv(name, value)
        try:
            info.launch_uris_as_manager(
                [], context, GLib.SpawnFlags.SEARCH_PATH, None, None,
                lambda _info, pid, _data: pids.append(int(pid)), None,
            )
        except GLib.Error as exc:
            raise DesktopError(f"{entry.name} did not start: {exc.message}.") from None
        if not pids:
            raise DesktopError(f"{entry.name} did not start.")
        self.launched[entry.name] = pids[0]
        return pids[0]

    def close(self, name: str) -> bool:
        """Stop an application this launcher started (for undo); False if it did not start it."""
        pid = self.launched.pop(self.entry(name).name, None)
        if pid is None:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        return True


def bus_pid(bus: A11yBus, bus_name: str) -> int | None:
    try:
        reply = bus.call(
            ("org.freedesktop.DBus", "/org/freedesktop/DBus"), "org.freedesktop.DBus",
            "GetConnectionUnixProcessID", GLib.Variant("(s)", (bus_name,)),
        )
    except BusError:
        return None
    return int(reply[0])


def deadline_after(seconds: float) -> float:
    return time.monotonic() + seconds
