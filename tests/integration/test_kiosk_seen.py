"""Seeing under the device's Wayland kiosk compositor: cage, headless, showing an application with
no accessibility tree, captured by grim and read by tesseract (appliance/desktop/seeing/).

The application is the GTK test application on Wayland with its AT-SPI bridge off
(NO_AT_BRIDGE=1), so nothing but its pixels says what it shows. A click is recorded, not sent:
this machine has no /dev/uinput (the uinput pointer is tested in tests/vm); what is checked is
that a seen button is clicked at its middle and that the look again after it goes through grim.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from appliance.desktop.model import Action, ActionResult, Node, Snapshot
from appliance.desktop.seeing.capture import (
    KIOSK_APP,
    KIOSK_WINDOW,
    WaylandCapture,
    open_eyes,
)
from appliance.desktop.seeing.desktop import SeeingDesktop
from appliance.desktop.seeing.ocr import read_image
from tests.apps.real_apps import stop, wait_for

GTK_APP = Path(__file__).parent.parent / "apps" / "gtk_test_app.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with PyGObject and GTK (the venv's may be elsewhere)
NOBODY = 65534

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("cage", "grim", "tesseract")) or not Path(
        SYSTEM_PYTHON).exists(),
    reason="needs cage, grim and tesseract (scripts/setup.sh, the dev extra)",
)


@contextmanager
def headless_cage(app: list[str]) -> Iterator[dict[str, str]]:
    """cage on wlroots' headless backend and pixman, running `app`; yields the environment a
    Wayland client needs to reach it. cage refuses to run as root: as root it runs as nobody."""
    runtime = Path(tempfile.mkdtemp(prefix="appliance-cage-"))
    command = ["cage", "-d", "--", *app]  # -d: server-side decorations, as on the device
    if os.getuid() == 0:
        os.chown(runtime, NOBODY, NOBODY)
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                   *command]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(runtime), "XDG_RUNTIME_DIR": str(runtime),
           "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman",
           "GDK_BACKEND": "wayland", "NO_AT_BRIDGE": "1", "GTK_A11Y": "none"}
    log = (runtime / "cage.log").open("w")
    proc = subprocess.Popen(command, env=env, stdout=log, stderr=log, text=True)
    try:
        assert wait_for(lambda: (runtime / "wayland-0").exists(), 20), (
            f"cage did not start: {(runtime / 'cage.log').read_text()[-2000:]}")
        yield {"WAYLAND_DISPLAY": "wayland-0", "XDG_RUNTIME_DIR": str(runtime)}
    finally:
        stop(proc)
        log.close()
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture()
def kiosk(monkeypatch: pytest.MonkeyPatch) -> Iterator[WaylandCapture]:
    with headless_cage([SYSTEM_PYTHON, str(GTK_APP), "--title", "Form"]) as env:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("DISPLAY", raising=False)
        eyes = open_eyes()
        assert isinstance(eyes, WaylandCapture)

        seen: list[set[str]] = []

        def read() -> set[str]:
            image = eyes.grab((0, 0, *eyes.size()))
            seen.append({p.text for p in read_image(image).phrases})
            return seen[-1]

        # Its first frames are drawn in parts: waits for its top and its bottom. (Without -d,
        # GTK's own title bar on wlroots 0.15 at times left a frame drawn askew for good.)
        assert wait_for(lambda: {"Send", "Neighbour"} <= read(), 30), (
            f"the app never showed: {seen[-3:]}")
        yield eyes


class TreeOnly:
    """The AT-SPI adapter's part, as a kiosk with no tree gives it (or names the app)."""

    def __init__(self, app: str | None = None, window: str | None = None) -> None:
        self.app, self.window = app, window

    def snapshot(self) -> Snapshot:
        return Snapshot(nodes=(), applications=(self.app,) if self.app else (),
                        active_app=self.app, active_window=self.window)

    def perform(self, action: Action) -> ActionResult:
        raise AssertionError(f"nothing in the tree to act on: {action}")

    def problems(self) -> list[str]:
        return []


def _seen(snap: Snapshot, name: str) -> Node:
    return next(n for n in snap.nodes if n.source == "seen" and n.name == name)


def test_the_kiosk_output_is_captured_and_read(kiosk: WaylandCapture) -> None:
    window = kiosk.active_window()
    assert window is not None and window.bounds[:2] == (0, 0)
    width, height = window.bounds[2:]
    image = kiosk.grab(window.bounds)
    assert image.size == (width, height) and image.mode == "RGB"
    texts = {p.text for p in read_image(image).phrases}
    # (its grey labels, "Delete" and "Not sent", are read with too little confidence to keep)
    assert {"Send", "Normal", "Grandma", "Doctor", "Neighbour"} <= texts, texts


def test_a_seen_button_is_clicked_at_its_middle_and_looked_at_again(
    kiosk: WaylandCapture,
) -> None:
    clicks: list[tuple[int, int]] = []

    def click(x: int, y: int) -> str:
        clicks.append((x, y))
        return "uinput"

    desktop = SeeingDesktop(TreeOnly(), kiosk, click, verify_timeout=0.5)
    snap = desktop.snapshot()
    assert (snap.active_app, snap.active_window) == (KIOSK_APP, KIOSK_WINDOW)
    send = _seen(snap, "Send")
    assert send.app == KIOSK_APP and send.bounds is not None
    x, y, w, h = send.bounds
    result = desktop.perform(Action(kind="activate", target=send.id))
    assert clicks == [(x + w // 2, y + h // 2)]
    # Only recorded, so the application did not change: a click that changed nothing fails.
    assert not result.verified and "nothing in the window changed" in (result.detail or "")


def test_the_tree_names_the_kiosk_application_when_it_can(kiosk: WaylandCapture) -> None:
    desktop = SeeingDesktop(TreeOnly("Juniper Test", "Form"), kiosk, lambda x, y: "uinput")
    snap = desktop.snapshot()
    assert (snap.active_app, snap.active_window) == ("Juniper Test", "Form")
    assert _seen(snap, "Send").app == "Juniper Test"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
