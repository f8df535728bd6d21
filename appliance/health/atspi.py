"""The screen reader's way in: the session bus, the accessibility bus it names, and the
applications on the desktop. Every call has a timeout; connecting is cancelled at the deadline."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from appliance.desktop.model import DesktopError
from appliance.health.check import Check

WHAT = "AT-SPI"
SESSION_HINT = ("run it in the kiosk user's graphical session (systemd --user starts the session "
                "bus), or set DBUS_SESSION_BUS_ADDRESS")
T = TypeVar("T")


class Unreachable(Exception):
    """One step of the way failed; the message says which and what to do."""


def atspi(timeout_s: float = 2.0) -> Check:
    try:
        from appliance.desktop.atspi.gi_modules import Gio, GLib
    except DesktopError as e:
        return Check(WHAT, "problem", str(e))
    try:
        return _examine(Gio, GLib, timeout_s)
    except Unreachable as e:
        return Check(WHAT, "problem", str(e))


def _examine(gio: Any, glib: Any, timeout_s: float) -> Check:
    from appliance.desktop.atspi.bus import ACCESSIBLE, REGISTRY, ROOT_PATH
    from appliance.desktop.atspi.screen import HIDDEN_APPS

    ms = max(1, int(timeout_s * 1000))

    def step(doing: Callable[[Any], T], failed: str) -> T:
        with _cancelled_after(gio, timeout_s) as cancellable:
            try:
                return doing(cancellable)
            except glib.Error as e:
                raise Unreachable(failed.format(e.message)) from None

    flags = (gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
             | gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
    address = step(lambda c: gio.dbus_address_get_for_bus_sync(gio.BusType.SESSION, c),
                   "no session bus ({}): " + SESSION_HINT)
    session = step(lambda c: gio.DBusConnection.new_for_address_sync(address, flags, None, c),
                   f"the session bus at {address} does not answer ({{}}): " + SESSION_HINT)
    try:
        a11y = step(lambda c: session.call_sync(
            "org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
            glib.VariantType("(s)"), gio.DBusCallFlags.NONE, ms, c).unpack()[0],
            "the session bus has no accessibility bus (org.a11y.Bus: {}): install at-spi2-core, "
            "whose at-spi-bus-launcher the session bus starts on demand")
        enabled = _enabled(session, gio, glib, ms)
    finally:
        session.close_sync(None)
    bus = step(lambda c: gio.DBusConnection.new_for_address_sync(a11y, flags, None, c),
               f"the accessibility bus at {a11y} does not answer ({{}}): restart the session")
    try:
        children = step(lambda c: bus.call_sync(
            REGISTRY, ROOT_PATH, ACCESSIBLE, "GetChildren", None, None, gio.DBusCallFlags.NONE,
            ms, c).unpack()[0],
            "the accessibility registry does not answer ({}): install at-spi2-core "
            "(at-spi2-registryd) and restart the session")
        names = [_name(bus, str(bus_name), str(path), gio, glib, ms)
                 for bus_name, path in children]
    finally:
        bus.close_sync(None)
    shown = [n for n in names if n not in HIDDEN_APPS]
    listed = f": {', '.join(n or '(unnamed)' for n in shown)}" if shown else ""
    switched = "" if enabled else "; accessibility not switched on yet (the appliance does it)"
    return Check(WHAT, "ok", (
        f"session bus and accessibility bus reachable; {len(shown)} application(s) on the "
        f"desktop{listed}{switched}"))


def _enabled(session: Any, gio: Any, glib: Any, ms: int) -> bool:
    """org.a11y.Status.IsEnabled: Qt and Chromium join the bus only once it is true."""
    try:
        reply = session.call_sync(
            "org.a11y.Bus", "/org/a11y/bus", "org.freedesktop.DBus.Properties", "Get",
            glib.Variant("(ss)", ("org.a11y.Status", "IsEnabled")), None,
            gio.DBusCallFlags.NONE, ms, None)
    except glib.Error:
        return False
    return bool(reply.unpack()[0])


def _name(bus: Any, bus_name: str, path: str, gio: Any, glib: Any, ms: int) -> str:
    """An application's accessible name; one that does not answer is counted, not named."""
    try:
        reply = bus.call_sync(
            bus_name, path, "org.freedesktop.DBus.Properties", "Get",
            glib.Variant("(ss)", ("org.a11y.atspi.Accessible", "Name")), None,
            gio.DBusCallFlags.NONE, ms, None)
    except glib.Error:
        return ""
    return str(reply.unpack()[0])


@contextmanager
def _cancelled_after(gio: Any, timeout_s: float) -> Iterator[Any]:
    """A Gio.Cancellable cancelled at the deadline: connecting has no timeout of its own."""
    cancellable = gio.Cancellable()
    timer = threading.Timer(timeout_s, cancellable.cancel)
    timer.daemon = True
    timer.start()
    try:
        yield cancellable
    finally:
        timer.cancel()
