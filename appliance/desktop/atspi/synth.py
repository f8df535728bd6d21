"""Keys and clicks made by the AT-SPI registry (libatspi's atspi_generate_keyboard_event and
atspi_generate_mouse_event: XTest under X11), for where uinput is missing.

uinput is a kernel device a person's keyboard also goes through; the registry's synthetic events
need no device, so a desktop without /dev/uinput can still be typed into and clicked.
"""

from __future__ import annotations

from appliance.desktop.atspi.bus import A11yBus, BusError
from appliance.desktop.atspi.gi_modules import GLib
from appliance.desktop.model import DesktopError
from appliance.desktop.uinput.keymap import Stroke, parse_chord, text_strokes

DEC = ("org.a11y.atspi.Registry", "/org/a11y/atspi/registry/deviceeventcontroller")
DEC_IFACE = "org.a11y.atspi.DeviceEventController"
# AtspiKeySynthType
KEY_SYM, LOCK_MODS, UNLOCK_MODS = 3, 5, 6


class SyntheticInput:
    """Presses, typing and clicks through the registry's DeviceEventController."""

    def __init__(self, bus: A11yBus) -> None:
        self.bus = bus

    def press(self, chord: str) -> None:
        self._stroke(parse_chord(chord), chord)

    def type(self, text: str) -> None:
        # A keysym per character, as uinput types: every character is checked first.
        for stroke in text_strokes(text):
            self._stroke(stroke, "that text")

    def click(self, x: int, y: int) -> None:
        try:
            self.bus.call(DEC, DEC_IFACE, "GenerateMouseEvent",
                          GLib.Variant("(iis)", (x, y, "b1c")))
        except BusError:
            raise DesktopError("I could not click there.") from None

    def _stroke(self, stroke: Stroke, what: str) -> None:
        try:
            if stroke.mask:
                self._key(stroke.mask, LOCK_MODS)
            self._key(stroke.keysym, KEY_SYM)
            if stroke.mask:
                self._key(stroke.mask, UNLOCK_MODS)
        except BusError:
            raise DesktopError(f"I could not press {what}.") from None

    def _key(self, code: int, synth: int) -> None:
        self.bus.call(DEC, DEC_IFACE, "GenerateKeyboardEvent",
                      GLib.Variant("(isu)", (code, "", synth)))
