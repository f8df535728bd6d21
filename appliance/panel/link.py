"""How the kiosk talks to the panel process: one JSON line per state, never blocking, never raising.

Policy when the panel is gone: `show` restarts it at most once per call and at most once every
`restart_every` seconds (doubling, up to `MAX_RESTART_EVERY`, while it keeps dying young, as
it does with no display); in between, states are dropped. Nothing is lost by dropping, because
every state is the full picture: the restarted panel shows the newest one at once.
One link is used from one thread.
A panel that is alive but slow never blocks the kiosk either: the pipe is non-blocking, and the
states it has not taken yet are replaced by the newest (only an already started line is finished).
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from appliance.panel.state import PanelState

PANEL_COMMAND = (sys.executable, "-m", "appliance.panel")
MAX_RESTART_EVERY = 60.0


class Panel(Protocol):
    def show(self, state: PanelState) -> None: ...

    def close(self) -> None: ...


class NullPanel:
    """The panel of a headless run: shows nothing, remembers the last state for tests and logs."""

    def __init__(self) -> None:
        self.last: PanelState | None = None

    def show(self, state: PanelState) -> None:
        self.last = state

    def close(self) -> None:
        pass


class PanelLink:
    """Runs `python -m appliance.panel` and feeds it states."""

    def __init__(
        self, *, command: Sequence[str] = PANEL_COMMAND, env: dict[str, str] | None = None,
        corner: str | None = None, acknowledge: bool = False, restart_every: float = 5.0,
        clock: Callable[[], float] = time.monotonic, bridge: bool = False,
    ) -> None:
        """`acknowledge` pipes the panel's "shown N" lines back for `wait_shown`; `bridge` lets
        the panel join the accessibility bus (off: it must never show up in a snapshot)."""
        self.command = [*command, *(["--corner", corner] if corner else [])]
        self.env = dict(os.environ if env is None else env)
        if not bridge:
            self.env["NO_AT_BRIDGE"] = "1"
        self.acknowledge = acknowledge
        self.restart_every = restart_every
        self.wait_between = restart_every  # grows while restarts fail
        self.clock = clock
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.sent = 0  # lines written to the current process
        self.shown = 0  # the highest "shown N" read back from it
        self._last_start = -float("inf")
        self._partial = b""  # the unwritten tail of a line already begun
        self._pending = b""  # the newest whole line not begun yet
        self._acks = b""
        self._start()

    # -- process -------------------------------------------------------------------------

    def _start(self) -> bool:
        self._last_start = self.clock()
        try:
            proc = subprocess.Popen(
                self.command, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE if self.acknowledge else subprocess.DEVNULL,
                stderr=None, env=self.env, close_fds=True,
            )
        except OSError as exc:
            print(f"appliance: the status panel did not start ({exc})", file=sys.stderr)
            return False
        assert proc.stdin is not None
        os.set_blocking(proc.stdin.fileno(), False)
        self.proc, self.starts, self.sent, self.shown = proc, self.starts + 1, 0, 0
        self._partial, self._acks = b"", b""
        return True

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _restart(self) -> bool:
        """Start a new panel in place of a dead one, unless the last start was too recent."""
        self._reap()
        lived = self.clock() - self._last_start
        if lived < self.wait_between:
            return False
        if lived < 2 * self.wait_between:  # died soon after its start: wait longer next time
            self.wait_between = min(max(self.wait_between, 0.1) * 2, MAX_RESTART_EVERY)
        else:
            self.wait_between = self.restart_every
        return self._start()

    def _reap(self) -> None:
        if self.proc is not None:
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    # -- the protocol --------------------------------------------------------------------

    def show(self, state: PanelState) -> None:
        """Send the state; returns at once whatever the panel is doing, and never raises."""
        self._pending = state.model_dump_json().encode() + b"\n"
        restarted = False
        if not self.alive():
            if not self._restart():
                self._pending = b""
                return
            restarted = True
        try:
            self._flush()
        except OSError:
            # It died after the check (a broken pipe): one restart per call at most.
            if restarted or not self._restart():
                self._pending = b""
                return
            try:
                self._flush()
            except OSError:
                self._reap()
                self._pending = b""

    def _flush(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        while self._partial or self._pending:
            if not self._partial:
                self._partial, self._pending = self._pending, b""
            try:
                written = os.write(fd, self._partial)
            except BlockingIOError:
                return  # the panel is behind: the newest state waits in _pending
            self._partial = self._partial[written:]
            if not self._partial:
                self.sent += 1

    def wait_shown(self, timeout: float = 10.0) -> bool:
        """Wait until the panel has drawn everything sent (needs `acknowledge=True`)."""
        if not self.acknowledge:
            raise ValueError("this link was made without acknowledge=True")
        deadline = time.monotonic() + timeout
        while True:
            if self._partial or self._pending:
                try:
                    self._flush()
                except OSError:
                    return False
            if self.shown >= self.sent and not (self._partial or self._pending):
                return True
            if self.proc is None or self.proc.stdout is None:
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([self.proc.stdout], [], [], min(left, 0.05))
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    return False
                self._acks += chunk
                *lines, self._acks = self._acks.split(b"\n")
                for line in lines:
                    if line.startswith(b"shown "):
                        self.shown = max(self.shown, int(line.split()[1]))

    def close(self) -> None:
        """End of input makes the panel quit; one that does not is terminated, then killed."""
        if self.proc is None:
            return
        proc = self.proc
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        self.proc = None
