"""Reads the switch from /dev/input on a background thread, surviving unplug and replug;
`SwitchInput` adds the gesture recogniser on a thread of its own.

Key events become `Edge`s stamped with `time.monotonic()` when read (the kernel's own timestamp
is on the realtime clock, which can jump). Autorepeat (value 2) never becomes an edge. Several
keys may belong to one switch; the switch is down while any of them is.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import evdev
from evdev import ecodes

from appliance.settings import Settings
from appliance.switch.devices import Candidate, SwitchError, choose, is_gone, key_codes
from appliance.switch.gestures import Gestures
from appliance.switch.model import Edge, Press

log = logging.getLogger(__name__)

POLL_S = 0.5  # how often a missing switch is looked for


class SwitchSource:
    """`open()` finds the device (SwitchError if none); `start()` reads it until `stop()`.

    `on_edge` and `on_fault` run on the reader thread. A device that goes away is reported once
    through `on_fault` (with `connected` already False), looked for every `poll_s`, and reported
    again when it is back. Keys held when it went get no release edge: the consumer abandons the
    press (`Gestures.abandon`, as `SwitchInput` does), so an unplug is neither a tap nor a hold.
    """

    def __init__(
        self,
        settings: Settings,
        on_edge: Callable[[Edge], None],
        on_fault: Callable[[str], None] | None = None,
        poll_s: float = POLL_S,
    ) -> None:
        self.settings = settings
        self.codes = key_codes(settings)
        self.on_edge = on_edge
        self.on_fault = on_fault
        self.poll_s = poll_s
        self.device: evdev.InputDevice[str] | None = None
        self.chosen: Candidate | None = None
        self.name = ""  # the switch's device name, kept while it is unplugged
        self._down_keys: set[int] = set()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()

    # -- lifecycle ------------------------------------------------------------------------------

    def open(self) -> None:
        self.chosen = choose(self.settings)
        self.device = self._open(self.chosen.path)
        self.name = self.chosen.name

    def start(self, wait: bool = False) -> None:
        """Start reading. No switch: SwitchError, or with `wait` report it through `on_fault`
        and keep looking, as for a switch that was unplugged."""
        if self.device is None:
            try:
                self.open()
            except SwitchError as exc:
                if not wait:
                    raise
                self._fault(str(exc))
        self._stop.clear()
        self._down_keys.clear()
        self._thread = threading.Thread(target=self._run, name="switch-reader", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._stop.is_set() and self._thread is None and self.device is None:
            return
        self._stop.set()
        os.write(self._wake_w, b"x")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._thread = None
        self._close()
        os.read(self._wake_r, 64)  # the pipe stays for a later start()

    @property
    def connected(self) -> bool:
        return self.device is not None

    def _open(self, path: str) -> evdev.InputDevice[str]:
        try:
            dev = evdev.InputDevice(path)
        except OSError as exc:
            raise SwitchError(f"The switch at {path} cannot be opened: {exc.strerror}.") from exc
        if self.settings.switch_grab:
            try:
                dev.grab()
            except OSError as exc:
                dev.close()
                raise SwitchError(f"Another program holds the switch {dev.name!r}.") from exc
        return dev

    def _close(self) -> None:
        dev, self.device = self.device, None
        if dev is None:
            return
        try:
            if self.settings.switch_grab:
                dev.ungrab()
        except OSError:
            pass  # already gone
        with contextlib.suppress(OSError):
            dev.close()

    # -- the reader thread --------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.device is None:
                self._wait_for_return()
                continue
            try:
                self._read_available()
            except OSError as exc:
                if not is_gone(exc):
                    log.warning("switch read failed: %s", exc)
                self._lost()

    def _read_available(self) -> None:
        assert self.device is not None
        ready, _, _ = select.select([self.device.fd, self._wake_r], [], [])
        if self._wake_r in ready or self._stop.is_set():
            return
        for event in self.device.read():
            if event.type == ecodes.EV_KEY:
                self._key(event.code, event.value, time.monotonic())
            elif event.type == ecodes.EV_SYN and event.code == ecodes.SYN_DROPPED:
                self._resync(time.monotonic())

    def _key(self, code: int, value: int, t: float) -> None:
        switch = self.codes.get(code)
        if switch is None or value not in (0, 1):
            return  # another key, or autorepeat
        before = self._switch_down(switch)
        if value:
            self._down_keys.add(code)
        else:
            self._down_keys.discard(code)
        if self._switch_down(switch) != before:
            self.on_edge(Edge(switch, not before, t))

    def _switch_down(self, switch: int) -> bool:
        return any(self.codes[code] == switch for code in self._down_keys)

    def _resync(self, t: float) -> None:
        """The kernel dropped events: take the keys' real state from the device."""
        assert self.device is not None
        active = set(self.device.active_keys())
        for code in self.codes:
            if (code in active) != (code in self._down_keys):
                self._key(code, 1 if code in active else 0, t)

    def _lost(self) -> None:
        self._down_keys.clear()  # no releases: see Gestures.abandon
        self._close()
        self._fault(f"The switch {self.name!r} was unplugged; waiting for it to come back.")

    def _wait_for_return(self) -> None:
        ready, _, _ = select.select([self._wake_r], [], [], self.poll_s)
        if ready or self._stop.is_set():
            return
        try:
            found = choose(self._same_switch())
            self.device = self._open(found.path)
        except SwitchError:
            return
        self.chosen = found
        if self.name:
            self._fault(f"The switch {self.name!r} is back.")
        else:
            self.name = found.name
            self._fault(f"The switch {self.name!r} is connected.")

    def _same_switch(self) -> Settings:
        """Look for the device that went away, by its name, unless a path was configured (or
        none was ever found: then as configured)."""
        if self.settings.switch_device.startswith("/dev/") or not self.name:
            return self.settings
        return self.settings.model_copy(update={"switch_device": self.name})

    def _fault(self, message: str) -> None:
        if self.on_fault is not None:
            self.on_fault(message)  # the kiosk journals it and says it: once is enough
        else:
            log.warning("%s", message)


class SwitchInput:
    """The switch as the kiosk uses it: the source's edges through `Gestures`, ticked on time.

    `on_event` gets accepted edges and presses, and `on_fault` the source's messages, in the
    order they happened, on one thread of its own, each as soon as it is known (a hold when
    the hold time passes, not at the next edge). An unplug abandons a press in progress.
    """

    def __init__(
        self,
        settings: Settings,
        on_event: Callable[[Edge | Press], None],
        on_fault: Callable[[str], None] | None = None,
        poll_s: float = POLL_S,
    ) -> None:
        self.gestures = Gestures(settings)
        self.on_event = on_event
        self.on_fault = on_fault
        # Edges and faults in the order they happened; None wakes the thread to stop.
        self._edges: queue.Queue[Edge | _Fault | None] = queue.Queue()
        self.source = SwitchSource(settings, self._edges.put, self._fault, poll_s)
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(self, wait: bool = False) -> None:
        """Open the switch and start reading it; no switch: see `SwitchSource.start`."""
        self.source.start(wait)
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="switch-gestures", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.source.stop()
        self._stopping.set()
        self._edges.put(None)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._thread = None

    def _fault(self, message: str) -> None:
        self._edges.put(_Fault(message, time.monotonic(), gone=not self.source.connected))

    def _run(self) -> None:
        while not self._stopping.is_set():
            due = self.gestures.next_due()
            wait = None if due is None else max(0.0, due - time.monotonic())
            try:
                item = self._edges.get(timeout=wait)
            except queue.Empty:
                item = None
            found: list[Edge | Press] = []
            if isinstance(item, Edge):
                found = self.gestures.feed(item)
            elif isinstance(item, _Fault) and item.gone:
                found = self.gestures.abandon(item.t)
            found += self.gestures.tick(time.monotonic())
            for event in found:
                self._deliver(self.on_event, event)
            if isinstance(item, _Fault) and self.on_fault is not None:
                self._deliver(self.on_fault, item.message)

    @staticmethod
    def _deliver(handler: Callable[[Any], None], what: object) -> None:
        try:
            handler(what)
        except Exception:
            # One failing handler must not stop the switch for good.
            log.exception("switch handler failed")


@dataclass(frozen=True)
class _Fault:
    message: str
    t: float
    gone: bool
