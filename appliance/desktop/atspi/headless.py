"""A private X display and D-Bus session (Xvfb + dbus-daemon) for tests and the benchmark."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appliance.desktop.model import DesktopError


@dataclass
class HeadlessSession:
    """Xvfb on a free display and a session bus; `env` holds what a client needs to join them."""

    env: dict[str, str] = field(default_factory=dict)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    runtime_dir: Path | None = None

    @classmethod
    def start(cls, timeout: float = 10.0, screen: str = "1024x768") -> HeadlessSession:
        for tool in ("Xvfb", "dbus-daemon"):
            if shutil.which(tool) is None:
                raise DesktopError(f"{tool} is not installed.")
        session = cls(runtime_dir=Path(tempfile.mkdtemp(prefix="appliance-xdg-")))
        try:
            session._start_x(timeout, screen)
            session._start_bus(timeout)
        except BaseException:
            session.stop()
            raise
        return session

    def _start_x(self, timeout: float, screen: str) -> None:
        read_fd, write_fd = os.pipe()
        xvfb = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", f"{screen}x24", "-nolisten",
             "tcp", "-noreset"],
            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        os.close(write_fd)
        self.procs.append(xvfb)
        with os.fdopen(read_fd) as pipe:
            display = _read_line(pipe.fileno(), timeout)
        if not display:
            raise DesktopError("The virtual screen did not start.")
        self.env["DISPLAY"] = f":{display}"

    def _start_bus(self, timeout: float) -> None:
        assert self.runtime_dir is not None
        env = {**os.environ, **self.env, "XDG_RUNTIME_DIR": str(self.runtime_dir)}
        bus = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            start_new_session=True,  # the services it starts (a11y bus, registry) join its group
        )
        self.procs.append(bus)
        assert bus.stdout is not None
        address = _read_line(bus.stdout.fileno(), timeout)
        if not address:
            raise DesktopError("The session bus did not start.")
        self.env.update(
            DBUS_SESSION_BUS_ADDRESS=address,
            XDG_RUNTIME_DIR=str(self.runtime_dir),
            GTK_A11Y="atspi",
            NO_AT_BRIDGE="0",
        )

    def apply(self) -> None:
        """Point this process at the session (before AT-SPI is first used)."""
        os.environ.update(self.env)
        os.environ.pop("NO_AT_BRIDGE", None)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        self.procs.clear()
        if self.runtime_dir is not None:
            shutil.rmtree(self.runtime_dir, ignore_errors=True)
            self.runtime_dir = None


def _read_line(fd: int, timeout: float) -> str:
    """One line from a pipe, or "" if none comes within `timeout` seconds."""
    import select

    data = b""
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return ""
        chunk = os.read(fd, 256)
        if not chunk:
            break
        data += chunk
    return data.decode().strip()


def stop_process(proc: subprocess.Popen[Any], grace: float = 5.0) -> None:
    """Asked to end, then made to: a program that ignores SIGTERM for `grace` seconds is
    killed."""
    for end in (proc.terminate, proc.kill):
        if proc.poll() is not None:
            return
        end()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
