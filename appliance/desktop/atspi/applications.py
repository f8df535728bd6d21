"""Applications as a whole: whether one is running, opening an allowlisted one, and closing it
again (the undo of opening it)."""

from __future__ import annotations

import contextlib
import os
import signal

from appliance.desktop.atspi.launcher import Launcher, bus_pid, deadline_after
from appliance.desktop.atspi.readback import action_result
from appliance.desktop.atspi.screen import Screen, wait_until
from appliance.desktop.model import ActionResult, DesktopError, ElementState


def running(screen: Screen, name: str) -> bool:
    """Whether the application is on the bus with something on screen."""
    snap = screen.snapshot()
    return any(a.casefold() == name.casefold() for a in snap.applications) and any(
        n.app.casefold() == name.casefold() for n in snap.nodes)


def open_app(screen: Screen, launcher: Launcher, name: str, *, timeout: float) -> ActionResult:
    """Start an allowlisted application and wait for its window."""
    entry = launcher.entry(name)
    key = f"app:{entry.name}"
    before = {key: ElementState(running=running(screen, entry.name))}
    if before[key].running:
        return action_result(before, before, True, "already open")
    pid = launcher.launch(entry.name)

    def window_up() -> bool:
        name_launched(screen, pid, entry.name)
        return running(screen, entry.name)

    if not wait_until(window_up, deadline_after(timeout), step=0.05):
        raise DesktopError(f"{entry.name} did not open in time.")
    after = {key: ElementState(running=True)}
    return action_result(before, after, True, "opened")


def name_launched(screen: Screen, pid: int, name: str) -> None:
    """Call the launched process's AT-SPI application by its .desktop name."""
    screen.invalidate()
    screen.snapshot()
    for bus_name in screen.app_order:
        if bus_name not in screen.aliases and bus_pid(screen.bus, bus_name) == pid:
            screen.aliases[bus_name] = name
            screen.invalidate(bus_name)


def close_app(screen: Screen, launcher: Launcher, name: str, *, timeout: float) -> None:
    """Stop an allowlisted application (undo of opening it), by the process behind it."""
    entry = launcher.entry(name)
    if not launcher.close(entry.name):
        pids = {bus_pid(screen.bus, b) for b, v in screen.apps.items()
                if v.tree.name.casefold() == entry.name.casefold()}
        pids.discard(None)
        if not pids or os.getpid() in pids:
            raise DesktopError(f"I can't close {entry.name}.")
        for pid in pids:
            assert pid is not None
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    if not wait_until(lambda: not running(screen, name), deadline_after(timeout)):
        raise DesktopError(f"{name} did not close.")
    for bus_name, app in list(screen.gone.items()):
        if app.casefold() == entry.name.casefold():
            del screen.gone[bus_name]  # closed on purpose: nothing to tell
