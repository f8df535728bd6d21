"""Start the GTK test app in a private Xvfb + D-Bus session and read its own state back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.desktop.atspi.headless import HeadlessSession
from appliance.desktop.model import Desktop, Node, Snapshot

APP = Path(__file__).with_name("gtk_test_app.py")
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, which has python3-gi and GTK

# scripts/setup.sh installs these: a missing one fails the tests rather than skipping them.
assert shutil.which("Xvfb"), "Xvfb missing: run scripts/setup.sh"
assert Path(SYSTEM_PYTHON).exists(), "Debian python3 (for the GTK test app) missing"


@dataclass
class RunningApp:
    proc: subprocess.Popen[bytes]
    state_path: Path

    def state(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.state_path.read_text())
            return data
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def wait_state(self, check: Callable[[dict[str, Any]], bool], timeout: float = 5.0) -> dict:
        """The app's state once `check` holds (the app writes it from an idle callback)."""
        deadline = time.monotonic() + timeout
        state = self.state()
        while not check(state) and time.monotonic() < deadline:
            time.sleep(0.02)
            state = self.state()
        return state

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def app_command(state: Path, *args: str) -> list[str]:
    return [SYSTEM_PYTHON, str(APP), "--state", str(state), *args]


def calendar_allowlist(tmp: Path) -> Path:
    """A folder of .desktop entries allowing one app, "Calendar" (the test app, retitled)."""
    apps = tmp / "apps"
    apps.mkdir()
    calendar = " ".join(app_command(tmp / "calendar-state.json", "--app-name", "Calendar",
                                    "--title", "Calendar"))
    (apps / "calendar.desktop").write_text(
        f"[Desktop Entry]\nType=Application\nName=Calendar\nExec={calendar}\n"
    )
    return apps


def start_app(tmp: Path, *args: str, tag: str = "form") -> RunningApp:
    state = tmp / f"{tag}-state.json"
    proc = subprocess.Popen(app_command(state, *args), env=os.environ.copy(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app = RunningApp(proc, state)
    app.wait_state(lambda s: "pid" in s, timeout=20)
    return app


def wait_for_app(desktop: Desktop, name: str, timeout: float = 20.0) -> Snapshot:
    """A snapshot in which `name` shows its window's contents."""
    deadline = time.monotonic() + timeout
    while True:
        invalidate = getattr(getattr(desktop, "screen", None), "invalidate", None)
        if invalidate is not None:
            invalidate()
        snap = desktop.snapshot()
        if any(n.app == name for n in snap.nodes):
            return snap
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} did not appear over AT-SPI: {snap.applications}")
        time.sleep(0.05)


def find(snap: Snapshot, app: str, role: str, name: str) -> Node:
    for node in snap.nodes:
        if node.app == app and node.role == role and node.name == name:
            return node
    raise AssertionError(f"no {role} {name!r} in {app}")


@contextmanager
def headless_session() -> Iterator[HeadlessSession]:
    """Xvfb and a session bus for this process; the environment is restored afterwards."""
    saved = dict(os.environ)
    session = HeadlessSession.start()
    session.apply()
    try:
        yield session
    finally:
        session.stop()
        os.environ.clear()
        os.environ.update(saved)
