"""Seeing under the kiosk's Wayland compositor without one: which capture a session gets, grim's
command line, frames decoded and cropped, the kiosk's window named, and the output's pointer.
(Captured and read for real under headless cage in tests/integration/test_kiosk_seen.py.)"""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw

from appliance.desktop.model import DesktopError, Snapshot
from appliance.desktop.seeing.capture import (
    KIOSK_APP,
    KIOSK_WINDOW,
    WaylandCapture,
    WindowInfo,
    decode_frame,
    grim_command,
    wayland_session,
)
from appliance.desktop.seeing.desktop import kiosk_window
from appliance.desktop.seeing.pointer import OutputPointer


@pytest.mark.parametrize(("env", "wayland"), [
    ({"WAYLAND_DISPLAY": "wayland-0"}, True),  # the kiosk's user unit: no DISPLAY
    ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland"}, True),
    ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, False),  # Xvfb inside a desktop
    ({"DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland"}, False),  # no compositor to ask
    ({}, False),
])
def test_a_wayland_session_is_told_by_its_environment(env: dict[str, str], wayland: bool) -> None:
    assert wayland_session(env) is wayland


def test_grim_captures_every_output_at_layout_scale_as_ppm_to_stdout() -> None:
    assert grim_command("/usr/bin/grim") == ["/usr/bin/grim", "-s", "1", "-t", "ppm", "-"]


def _frame(size: tuple[int, int] = (64, 48), fmt: str = "PPM") -> bytes:
    image = Image.new("RGB", size, "white")
    ImageDraw.Draw(image).rectangle((10, 10, 19, 19), fill=(200, 0, 0))
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def test_frames_decode_from_ppm_and_png_and_garbage_is_an_error() -> None:
    for fmt in ("PPM", "PNG"):
        image = decode_frame(_frame(fmt=fmt))
        assert image.size == (64, 48) and image.mode == "RGB"
        assert image.getpixel((15, 15)) == (200, 0, 0)
    with pytest.raises(DesktopError):
        decode_frame(b"grim: compositor doesn't support wlr-screencopy-unstable-v1")


class Grim:
    def __init__(self, *frames: bytes) -> None:
        self.frames = list(frames)
        self.commands: list[list[str]] = []

    def __call__(self, command: list[str]) -> bytes:
        self.commands.append(command)
        return self.frames.pop(0) if len(self.frames) > 1 else self.frames[0]


def test_the_window_is_the_output_captured_once_a_look(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    grim = Grim(_frame())
    eyes = WaylandCapture("grim", run=grim)
    window = eyes.active_window()
    assert window == WindowInfo(0, KIOSK_WINDOW, KIOSK_APP, None, (0, 0, 64, 48))
    assert eyes.grab(window.bounds).size == (64, 48)
    assert len(grim.commands) == 1  # the frame that told the size is the one grabbed
    part = eyes.grab((10, 10, 10, 10))
    assert part.size == (10, 10) and part.getpixel((5, 5)) == (200, 0, 0)
    assert len(grim.commands) == 2 and grim.commands[0] == grim_command("grim")


def test_a_resized_output_is_known_from_the_next_look(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    eyes = WaylandCapture("grim", run=Grim(_frame(), _frame((80, 60))))
    assert eyes.size() == (64, 48)
    eyes.grab((0, 0, 64, 48))
    eyes.grab((0, 0, 64, 48))
    assert eyes.size() == (80, 60)


def test_no_compositor_or_no_screencopy_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(DesktopError):
        WaylandCapture("grim")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")

    def fails(command: list[str]) -> bytes:
        raise DesktopError("I couldn't capture the screen.")

    with pytest.raises(DesktopError):
        WaylandCapture("grim", run=fails).active_window()


def test_the_kiosk_window_is_named_by_the_tree_else_by_the_kiosk() -> None:
    window = WindowInfo(0, KIOSK_WINDOW, KIOSK_APP, None, (0, 0, 800, 600))
    named = kiosk_window(window, Snapshot(nodes=(), applications=("Chromium",),
                                          active_app="Chromium", active_window="Mail"))
    assert (named.app, named.title, named.bounds) == ("Chromium", "Mail", (0, 0, 800, 600))
    bare = kiosk_window(window, Snapshot(nodes=(), applications=()))
    assert (bare.app, bare.title) == (KIOSK_APP, KIOSK_WINDOW)


class FakePointer:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.clicks: list[tuple[int, int]] = []
        self.closed = False

    def click(self, x: int, y: int) -> None:
        self.clicks.append((x, y))

    def close(self) -> None:
        self.closed = True


def test_clicks_go_through_a_pointer_the_size_of_the_output() -> None:
    size = [(1920, 1080)]
    opened: list[FakePointer] = []

    def open_pointer(width: int, height: int) -> FakePointer:
        opened.append(FakePointer(width, height))
        return opened[-1]

    pointer = OutputPointer(lambda: size[0], open_pointer=open_pointer, settle=0)
    assert pointer.click(1500, 900) == "uinput"
    assert pointer.click(10, 10) == "uinput"
    assert [(p.width, p.height) for p in opened] == [(1920, 1080)]
    assert opened[0].clicks == [(1500, 900), (10, 10)]
    size[0] = (1280, 720)
    pointer.click(5, 5)
    assert opened[0].closed and (opened[1].width, opened[1].height) == (1280, 720)


def test_without_uinput_a_kiosk_click_is_refused_not_faked() -> None:
    def no_uinput(width: int, height: int) -> FakePointer:
        raise DesktopError("The virtual pointer is not available on this device.")

    with pytest.raises(DesktopError):
        OutputPointer(lambda: (800, 600), open_pointer=no_uinput, settle=0).click(1, 1)
