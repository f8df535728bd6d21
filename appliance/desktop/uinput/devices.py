"""Virtual keyboard and pointer through the kernel's uinput (python-uinput).

For key chords, for typing where an element has no EditableText, and for a click at the centre
of an element that has no action. Every key is looked up before the first one is pressed.
"""

from __future__ import annotations

import time
from typing import Any

from appliance.desktop.model import DesktopError
from appliance.desktop.uinput.keymap import KEY_CODES, Stroke, parse_chord, text_strokes

EV_KEY = 0x01
EV_ABS = 0x03
BTN_LEFT = (EV_KEY, 0x110)
ABS_X = (EV_ABS, 0x00)
ABS_Y = (EV_ABS, 0x01)


def _key(name: str) -> tuple[int, int]:
    return (EV_KEY, KEY_CODES[name])


def _open_device(events: list[tuple[int, ...]], name: str) -> Any:
    try:
        import uinput  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise DesktopError("The virtual keyboard software is not installed.") from None
    try:
        return uinput.Device(events, name=name)
    except OSError as exc:
        raise DesktopError(
            f"The virtual {name.rsplit(' ', 1)[-1]} is not available on this device."
        ) from exc


class VirtualKeyboard:
    """A US keyboard that can press chords and type text."""

    def __init__(self, delay: float = 0.002) -> None:
        self.delay = delay
        self.device = _open_device(
            [_key(name) for name in KEY_CODES], "appliance virtual keyboard"
        )

    def _press(self, stroke: Stroke) -> None:
        for mod in stroke.modifiers:
            self.device.emit(_key(mod), 1)
        self.device.emit(_key(stroke.key), 1)
        self.device.emit(_key(stroke.key), 0)
        for mod in reversed(stroke.modifiers):
            self.device.emit(_key(mod), 0)
        if self.delay:
            time.sleep(self.delay)

    def press(self, chord: str) -> None:
        self._press(parse_chord(chord))

    def type(self, text: str) -> None:
        for stroke in text_strokes(text):
            self._press(stroke)

    def close(self) -> None:
        self.device.destroy()


class VirtualPointer:
    """An absolute pointer over a screen of the given size, with a left button."""

    def __init__(self, width: int = 1024, height: int = 768) -> None:
        self.width, self.height = width, height
        self.device = _open_device(
            [(*ABS_X, 0, width - 1, 0, 0), (*ABS_Y, 0, height - 1, 0, 0), BTN_LEFT],
            "appliance virtual pointer",
        )

    def click(self, x: int, y: int) -> None:
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise DesktopError("That element is off the screen.")
        self.device.emit(ABS_X, x, syn=False)
        self.device.emit(ABS_Y, y)
        self.device.emit(BTN_LEFT, 1)
        self.device.emit(BTN_LEFT, 0)

    def close(self) -> None:
        self.device.destroy()
