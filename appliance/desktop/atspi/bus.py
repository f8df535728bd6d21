"""The accessibility bus: every call into another process has a timeout, and many can be pipelined.

The AT-SPI protocol is spoken directly over Gio's D-Bus client (Debian's PyGObject) rather than
through libatspi's synchronous object-at-a-time calls, so a whole window comes in one
`Cache.GetItems` reply and the follow-up reads go out together instead of one round trip each.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from appliance.desktop.atspi.gi_modules import Gio, GLib

REGISTRY = "org.a11y.atspi.Registry"
ROOT_PATH = "/org/a11y/atspi/accessible/root"
CACHE_PATH = "/org/a11y/atspi/cache"
ACCESSIBLE = "org.a11y.atspi.Accessible"
PROPERTIES = "org.freedesktop.DBus.Properties"
EVENTS = ("object:", "window:", "focus:")

Ref = tuple[str, str]
"""An accessible object on the bus: (unique bus name, object path)."""


class BusError(Exception):
    """A call into an application failed: `timed_out` if it stopped answering, `gone` if it
    left the bus (closed or crashed) before replying."""

    def __init__(self, message: str, *, timed_out: bool = False, gone: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        self.gone = gone


@dataclass(frozen=True)
class Call:
    """One method call to pipeline with others."""

    ref: Ref
    interface: str
    method: str
    args: Any = None  # a GLib.Variant tuple or None

    @classmethod
    def reading(cls, ref: Ref, interface: str, name: str) -> Call:
        """The call that reads one D-Bus property of `ref`."""
        return cls(ref, PROPERTIES, "Get", _variant("(ss)", (interface, name)))


def _variant(signature: str, values: tuple[Any, ...]) -> Any:
    return GLib.Variant(signature, values)


class A11yBus:
    """A client connection to the accessibility bus of the current session."""

    def __init__(self, timeout: float = 1.0) -> None:
        self.timeout_ms = max(1, int(timeout * 1000))
        try:
            # A fresh connection (not Gio's per-process singleton), so the address is read now.
            session = Gio.DBusConnection.new_for_address_sync(
                Gio.dbus_address_get_for_bus_sync(Gio.BusType.SESSION, None),
                Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
                | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None,
            )
            reply = session.call_sync(
                "org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, self.timeout_ms * 5, None,
            )
            address = reply.unpack()[0]
            switch_on_accessibility(session, self.timeout_ms * 5)
            flags = (
                Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
                | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
            )
            self.conn = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
            session.close_sync(None)
        except GLib.Error as exc:
            raise BusError(f"the accessibility bus is not reachable ({exc.message})") from None
        self.context = GLib.MainContext.default()
        self._subscriptions: list[int] = []

    # -- calls ---------------------------------------------------------------------------

    def call(
        self, ref: Ref, interface: str, method: str, args: Any = None,
        timeout: float | None = None,
    ) -> tuple[Any, ...]:
        """One synchronous call with a timeout; the unpacked reply tuple."""
        timeout_ms = self.timeout_ms if timeout is None else max(1, int(timeout * 1000))
        try:
            reply = self.conn.call_sync(
                ref[0], ref[1], interface, method, args, None, Gio.DBusCallFlags.NONE,
                timeout_ms, None,
            )
        except GLib.Error as exc:
            raise _bus_error(exc) from None
        result: tuple[Any, ...] = reply.unpack()
        return result

    def get(self, ref: Ref, interface: str, name: str, timeout: float | None = None) -> Any:
        read = Call.reading(ref, interface, name)
        return self.call(ref, read.interface, read.method, read.args, timeout)[0]

    def call_many(
        self, calls: Sequence[Call], timeout: float | None = None,
    ) -> list[tuple[Any, ...] | BusError]:
        """Send all calls at once and wait for every reply (or error) until one deadline."""
        timeout_s = self.timeout_ms / 1000 if timeout is None else timeout
        results: list[tuple[Any, ...] | BusError | None] = [None] * len(calls)
        pending = len(calls)

        def done(index: int) -> Callable[[Any, Any], None]:
            def finish(conn: Any, task: Any) -> None:
                nonlocal pending
                try:
                    results[index] = conn.call_finish(task).unpack()
                except GLib.Error as exc:
                    results[index] = _bus_error(exc)
                pending -= 1

            return finish

        timeout_ms = max(1, int(timeout_s * 1000))
        for i, c in enumerate(calls):
            self.conn.call(
                c.ref[0], c.ref[1], c.interface, c.method, c.args, None,
                Gio.DBusCallFlags.NONE, timeout_ms, None, done(i),
            )
        deadline = time.monotonic() + timeout_s + 0.5
        while pending and time.monotonic() < deadline:
            self.context.iteration(True)
        return [r if r is not None else BusError("no reply", timed_out=True) for r in results]

    # -- events --------------------------------------------------------------------------

    def listen(self, callback: Callable[[str, str, str, str, Any], None]) -> None:
        """Ask applications to emit events; deliver them as (sender, path, iface, signal, args)."""

        def on_signal(
            _conn: Any, sender: str, path: str, iface: str, signal: str, params: Any,
        ) -> None:
            callback(sender, path, iface, signal, params)

        for prefix in ("org.a11y.atspi.Event.Object", "org.a11y.atspi.Event.Window",
                       "org.a11y.atspi.Event.Focus", "org.a11y.atspi.Cache"):
            self._subscriptions.append(
                self.conn.signal_subscribe(
                    None, prefix, None, None, None, Gio.DBusSignalFlags.NONE, on_signal,
                )
            )
        for event in EVENTS:
            # Toolkits emit events and build their bulk cache only once a listener registers.
            self.call((REGISTRY, "/org/a11y/atspi/registry"), REGISTRY, "RegisterEvent",
                      _variant("(s)", (event,)))

    def pump(self, max_events: int = 10_000) -> None:
        """Deliver the events already received, without waiting for more."""
        for _ in range(max_events):
            if not self.context.iteration(False):
                break

    def close(self) -> None:
        for sub in self._subscriptions:
            self.conn.signal_unsubscribe(sub)
        self._subscriptions.clear()


def switch_on_accessibility(session: Any, timeout_ms: int) -> None:
    """Set the session's accessibility switch, as a screen reader does on start.

    Qt and Chromium join the accessibility bus only once `org.a11y.Status.IsEnabled` is true
    (Qt also watches `ScreenReaderEnabled`); GTK joins regardless. Best effort: a session bus
    without a settable switch still has GTK's applications.
    """
    for name in ("IsEnabled", "ScreenReaderEnabled"):
        try:
            session.call_sync(
                "org.a11y.Bus", "/org/a11y/bus", PROPERTIES, "Set",
                _variant("(ssv)", ("org.a11y.Status", name, GLib.Variant("b", True))),
                None, Gio.DBusCallFlags.NONE, timeout_ms, None,
            )
        except GLib.Error:
            continue


GONE_ERRORS = ("ServiceUnknown", "disconnected", "NameHasNoOwner")


def _bus_error(exc: Any) -> BusError:
    gone = any(word in exc.message for word in GONE_ERRORS)
    timed_out = not gone and (
        exc.matches(Gio.io_error_quark(), Gio.IOErrorEnum.TIMED_OUT)
        or "NoReply" in exc.message or "Timeout" in exc.message
    )
    return BusError(exc.message, timed_out=bool(timed_out), gone=gone)
