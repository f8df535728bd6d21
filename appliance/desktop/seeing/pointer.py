"""Clicks on the kiosk's output (Wayland): a uinput absolute pointer whose range is the output's
size, so the compositor puts the pointer on the very pixel grim captured.

Under wlroots an absolute pointer's position is read by libinput as a fraction of its range and
laid over the whole output layout; a range of the output's own size in layout pixels is then
pixel for pixel. The AT-SPI adapter's pointer (desktop/atspi/input_devices.py) has a fixed
1024x768 range, right for its X11 screens, and falls back to the registry's synthetic events,
which no Wayland client receives: seeing under Wayland clicks with its own pointer, and says
when there is no uinput rather than clicking where nothing arrives.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

SETTLE_S = 0.5
"""A new input device is picked up by the compositor (udev, then libinput) a moment after it
is made; events sent before that are lost."""


class AbsolutePointer(Protocol):
    width: int
    height: int

    def click(self, x: int, y: int) -> None: ...

    def close(self) -> None: ...


def _uinput_pointer(width: int, height: int) -> AbsolutePointer:
    from appliance.desktop.uinput.devices import VirtualPointer

    return VirtualPointer(width, height)


class OutputPointer:
    """Clicks at a point of the output; the device is made on the first click, and again when
    the output's size changed."""

    def __init__(
        self, size: Callable[[], tuple[int, int]], *,
        open_pointer: Callable[[int, int], AbsolutePointer] = _uinput_pointer,
        settle: float = SETTLE_S,
    ) -> None:
        self.size = size
        self.open_pointer = open_pointer
        self.settle = settle
        self._pointer: AbsolutePointer | None = None

    def click(self, x: int, y: int) -> str:
        """Click at (x, y) in output pixels; returns "uinput" (the seeing desktop's `Click`).
        Without uinput it raises DesktopError: nothing else reaches a Wayland client."""
        width, height = self.size()
        pointer = self._pointer
        if pointer is None or (pointer.width, pointer.height) != (width, height):
            if pointer is not None:
                self._pointer = None
                pointer.close()
            pointer = self.open_pointer(width, height)
            self._pointer = pointer
            time.sleep(self.settle)
        pointer.click(x, y)
        return "uinput"

    def close(self) -> None:
        if self._pointer is not None:
            self._pointer.close()
            self._pointer = None
