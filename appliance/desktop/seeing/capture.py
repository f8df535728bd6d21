"""The active window and its pixels, on X11: python-xlib for which window and where, Pillow's
ImageGrab (XCB) for the pixels. A kiosk under a Wayland compositor captures differently
(docs/device.md); everything after the image is the same."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from appliance.desktop.model import DesktopError

if TYPE_CHECKING:
    from PIL.Image import Image

Box = tuple[int, int, int, int]
"""x, y, width, height on screen."""


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
