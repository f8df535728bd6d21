"""What a process under systemd tells its manager: READY once it can do its job, STATUS lines,
and the watchdog's ping only while its main loop is seen to run (docs/device.md).

Outside systemd (no NOTIFY_SOCKET) every call does nothing, so the same code runs by hand.
"""

from __future__ import annotations

import logging
import os
import threading
import time

import sdnotify

log = logging.getLogger(__name__)


def watchdog_interval() -> float | None:
    """The watchdog's period in seconds, if systemd set one for this very process."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return int(usec) / 1_000_000
    except ValueError:
        return None


class ServiceNotifier:
    """READY, STATUS and a watchdog that pings only while `beat()` is called often enough.

    The loop that must stay alive (the audio feeder) calls `beat()`; a hang there, or SIGSTOP,
    stops the pings and systemd restarts the service."""

    def __init__(self) -> None:
        self.enabled = bool(os.environ.get("NOTIFY_SOCKET"))
        self._notifier = sdnotify.SystemdNotifier()
        self.interval = watchdog_interval() if self.enabled else None
        self._last_beat = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _send(self, state: str) -> None:
        if self.enabled:
            self._notifier.notify(state)

    def ready(self, status: str) -> None:
        self._send(f"READY=1\nSTATUS={status}")

    def status(self, status: str) -> None:
        self._send(f"STATUS={status}")

    def stopping(self) -> None:
        self._send("STOPPING=1")

    def beat(self) -> None:
        self._last_beat = time.monotonic()

    def start_watchdog(self) -> None:
        """Ping at half the period while the last beat is younger than half the period."""
        if self.interval is None or self._thread is not None:
            return
        self._last_beat = time.monotonic()
        self._thread = threading.Thread(target=self._watch, name="watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        assert self.interval is not None
        half = self.interval / 2
        while not self._stop.wait(half / 2):
            quiet = time.monotonic() - self._last_beat
            if quiet < half:
                self._send("WATCHDOG=1")
            else:  # the loop stalled: no ping, and systemd restarts us if it stays so
                log.warning("main loop quiet for %.1f s: watchdog not pinged", quiet)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
