"""The active window and its pixels. On X11: python-xlib for which window and where, Pillow's
ImageGrab (XCB) for the pixels. Under the device's Wayland kiosk compositor (cage, docs/device.md)
the one application is the whole output: grim (wlroots' screencopy) captures it. Everything
after the image is the same."""

from __future__ import annotations

import io
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from appliance.desktop.model import DesktopError

if TYPE_CHECKING:
    from PIL.Image import Image

log = logging.getLogger(__name__)

Box = tuple[int, int, int, int]
"""x, y, width, height on screen."""

KIOSK_APP = "kiosk application"
"""What the kiosk's one application is called where AT-SPI names no active application (a Tk or
Xaw program, a toolkit with its bridge off): taught targets are kept under this name."""
KIOSK_WINDOW = "kiosk"
GRIM_TIMEOUT_S = 5.0
KEPT_FRAME_S = 0.2
"""A frame captured to learn the output's size serves the grab that follows within this long."""


@dataclass(frozen=True)
class WindowInfo:
    """One top-level window: its X id, title, application (WM_CLASS) and place on screen."""

    xid: int
    title: str
    app: str
    pid: int | None
    bounds: Box


class X11Capture:
    """Reads the window manager's active window and captures windows from the X server."""

    whole_output = False

    def __init__(self, display: str | None = None) -> None:
        self.display_name = display or os.environ.get("DISPLAY", "")
        if not self.display_name:
            raise DesktopError("There is no X display to look at.")
        try:
            from Xlib import display as xdisplay
            from Xlib.error import DisplayError
        except ImportError:  # the desktop extra is not installed
            raise DesktopError("Seeing the screen needs python-xlib.") from None
        try:
            self._display: Any = xdisplay.Display(self.display_name)
        except (DisplayError, OSError):
            raise DesktopError("I can't reach the X display to look at it.") from None
        self._root = self._display.screen().root
        self._atoms = {
            name: self._display.intern_atom(name)
            for name in ("_NET_ACTIVE_WINDOW", "_NET_WM_NAME", "_NET_WM_PID", "UTF8_STRING")
        }

    def active_window(self) -> WindowInfo | None:
        """The window with the keyboard focus, as the window manager says (EWMH); None when no
        window manager says, or the window has gone."""
        from Xlib import X
        from Xlib.error import XError

        try:
            prop = self._root.get_full_property(self._atoms["_NET_ACTIVE_WINDOW"],
                                                X.AnyPropertyType)
            xid = int(prop.value[0]) if prop is not None and len(prop.value) else 0
            if not xid:
                return None
            return self._info(self._display.create_resource_object("window", xid))
        except XError:
            return None

    def _info(self, window: Any) -> WindowInfo | None:
        from Xlib import X

        geometry = window.get_geometry()
        # Where the window's own top-left is on the root: the frame a manager adds is left out.
        origin = window.translate_coords(self._root, 0, 0)
        name = window.get_full_property(self._atoms["_NET_WM_NAME"], self._atoms["UTF8_STRING"])
        title = _text(name.value) if name is not None else _text(window.get_wm_name() or "")
        wm_class = window.get_wm_class()
        app = str(wm_class[1]) if wm_class else title
        pid_prop = window.get_full_property(self._atoms["_NET_WM_PID"], X.AnyPropertyType)
        pid = int(pid_prop.value[0]) if pid_prop is not None and len(pid_prop.value) else None
        bounds = (-int(origin.x), -int(origin.y), int(geometry.width), int(geometry.height))
        if bounds[2] <= 0 or bounds[3] <= 0:
            return None
        return WindowInfo(int(window.id), title, app, pid, bounds)

    def grab(self, box: Box) -> Image:
        """The pixels of `box` on screen, in RGB."""
        from PIL import ImageGrab

        x, y, w, h = box
        try:
            image = ImageGrab.grab(bbox=(x, y, x + w, y + h), xdisplay=self.display_name)
        except OSError:
            raise DesktopError("I couldn't capture the window.") from None
        return image.convert("RGB")

    def close(self) -> None:
        self._display.close()


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def wayland_session(env: Mapping[str, str] | None = None) -> bool:
    """Whether the screen is a Wayland compositor's: WAYLAND_DISPLAY set, and either no X
    display or a session that says it is Wayland (the kiosk's, systemd/kiosk-session)."""
    env = os.environ if env is None else env
    if not env.get("WAYLAND_DISPLAY"):
        return False
    return not env.get("DISPLAY") or env.get("XDG_SESSION_TYPE") == "wayland"


def grim_command(grim: str = "grim") -> list[str]:
    """Every output, at the layout's scale (the pixels a pointer's absolute position and
    AT-SPI's extents are in), uncompressed to standard output, without the cursor."""
    return [grim, "-s", "1", "-t", "ppm", "-"]


def decode_frame(data: bytes) -> Image:
    """A captured frame (PPM, or any image Pillow reads) as RGB."""
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError

    try:
        with PILImage.open(io.BytesIO(data)) as image:
            return image.convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError):
        raise DesktopError("I couldn't capture the screen.") from None


Runner = Callable[[list[str]], bytes]
"""Runs a capture command; returns what it wrote to standard output."""


def _run(command: list[str]) -> bytes:
    try:
        done = subprocess.run(command, capture_output=True, timeout=GRIM_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("screen capture failed: %s", type(exc).__name__)
        raise DesktopError("I couldn't capture the screen.") from None
    if done.returncode != 0:
        log.warning("screen capture failed: %s", done.stderr.decode("utf-8", "replace")[:300])
        raise DesktopError("I couldn't capture the screen.")
    return done.stdout


class WaylandCapture:
    """The kiosk's output through grim. Under cage one application fills the output, so the
    window is the output, at (0, 0); which application it is comes from AT-SPI when it says
    (desktop.py), else it is the kiosk's application (KIOSK_APP)."""

    whole_output = True

    def __init__(self, grim: str | None = None, *, run: Runner = _run) -> None:
        if not os.environ.get("WAYLAND_DISPLAY"):
            raise DesktopError("There is no Wayland display to look at.")
        path = grim or shutil.which("grim")
        if path is None:
            raise DesktopError("Seeing the screen under Wayland needs grim.")
        self.command = grim_command(path)
        self._run = run
        self._size: tuple[int, int] | None = None
        self._kept: tuple[float, Image] | None = None

    def size(self) -> tuple[int, int]:
        """The output's size in layout pixels, captured once to learn it."""
        if self._size is None:
            self._kept = (time.monotonic(), self._capture())
        assert self._size is not None
        return self._size

    def active_window(self) -> WindowInfo | None:
        width, height = self.size()
        return WindowInfo(0, KIOSK_WINDOW, KIOSK_APP, None, (0, 0, width, height))

    def grab(self, box: Box) -> Image:
        """The pixels of `box` on the output, in RGB (black where it lies off the output)."""
        kept, self._kept = self._kept, None
        frame = kept[1] if kept and time.monotonic() - kept[0] <= KEPT_FRAME_S else (
            self._capture())
        x, y, w, h = box
        if (x, y, w, h) == (0, 0, *frame.size):
            return frame
        return frame.crop((x, y, x + w, y + h))

    def _capture(self) -> Image:
        frame = decode_frame(self._run(self.command))
        self._size = frame.size  # a changed output is known from the next look on
        return frame

    def close(self) -> None:
        pass


def open_eyes() -> X11Capture | WaylandCapture:
    """The capture for this session: grim under a Wayland compositor, else the X display.
    Under Wayland the output is captured once here, so a compositor without screencopy (a
    desktop's, not the kiosk's) is known at once and its X display used, if it has one."""
    if wayland_session():
        try:
            eyes = WaylandCapture()
            eyes.size()
            return eyes
        except DesktopError:
            if not os.environ.get("DISPLAY"):
                raise
    return X11Capture()
