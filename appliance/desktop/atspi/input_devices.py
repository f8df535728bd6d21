"""The keyboard and pointer behind key presses, typing and clicks: uinput, else the AT-SPI
registry's synthetic input (synth.py); the result's `via` says which."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from appliance.desktop.atspi.bus import A11yBus, BusError
from appliance.desktop.atspi.readback import ReadBack, action_result
from appliance.desktop.atspi.screen import Screen
from appliance.desktop.atspi.synth import SyntheticInput
from appliance.desktop.atspi.vocabulary import state_names
from appliance.desktop.model import ActionResult, DesktopError
from appliance.desktop.uinput.keymap import parse_chord

if TYPE_CHECKING:
    from appliance.desktop.uinput.devices import VirtualKeyboard, VirtualPointer

Device = TypeVar("Device")


class Keyboard(Protocol):
    def press(self, chord: str) -> None: ...

    def type(self, text: str) -> None: ...


class Pointer(Protocol):
    def click(self, x: int, y: int) -> None: ...


class InputDevices:
    """A uinput keyboard and pointer, opened when first used; where uinput is missing, the
    registry's synthetic input (and uinput is not asked again)."""

    def __init__(self, bus: A11yBus, *, use_uinput: bool = True) -> None:
        self.use_uinput = use_uinput
        self.synth = SyntheticInput(bus)
        self._keyboard: VirtualKeyboard | None = None
        self._pointer: VirtualPointer | None = None

    def keys(self) -> tuple[Keyboard, str]:
        """The keyboard to press and type with, and "uinput" or "atspi"."""
        keyboard = self._uinput(self._keyboard_device)
        return (keyboard, "uinput") if keyboard is not None else (self.synth, "atspi")

    def clicks(self) -> tuple[Pointer, str]:
        """The pointer to click with, and "uinput" or "atspi"."""
        pointer = self._uinput(self._pointer_device)
        return (pointer, "uinput") if pointer is not None else (self.synth, "atspi")

    def click(self, x: int, y: int) -> str:
        """Click at a point on screen; returns "uinput" or "atspi" (what seeing clicks with)."""
        pointer, via = self.clicks()
        pointer.click(x, y)
        return via

    def _uinput(self, open_device: Callable[[], Device]) -> Device | None:
        if self.use_uinput:
            try:
                return open_device()
            except DesktopError:
                self.use_uinput = False
        return None

    def _keyboard_device(self) -> VirtualKeyboard:
        if self._keyboard is None:
            from appliance.desktop.uinput.devices import VirtualKeyboard

            self._keyboard = VirtualKeyboard()
        return self._keyboard

    def _pointer_device(self) -> VirtualPointer:
        if self._pointer is None:
            from appliance.desktop.uinput.devices import VirtualPointer

            self._pointer = VirtualPointer()
        return self._pointer


def window_has_focus(screen: Screen) -> bool:
    return any(
        "active" in state_names(view.tree.nodes[ref].states)
        for view in screen.apps.values()
        for ref in view.tree.windows
        if ref in view.tree.nodes
    )


def press_key(screen: Screen, devices: InputDevices, chord: str) -> ActionResult:
    parse_chord(chord)  # an unknown key is an error before anything is pressed
    screen.snapshot()  # the windows' states as they are now
    if not window_has_focus(screen):
        raise DesktopError(f"No window has the focus, so {chord} would go nowhere.")
    keys, via = devices.keys()
    keys.press(chord)
    return action_result({}, {}, True, f"pressed {chord}", via=via)


def click_at(
    rb: ReadBack, devices: InputDevices, point: tuple[int, int] | None, node_id: str | None,
) -> ActionResult:
    """A click at a point of the grid; what was under it is read before and after, when
    anything known was."""
    if point is None:
        raise DesktopError("Where should I click?")
    t = rb.target(node_id, enabled=False) if node_id else None
    before = rb.states(t.view, [t.node_id]) if t else {}
    pointer, via = devices.clicks()
    pointer.click(*point)
    if t is None:
        rb.screen.invalidate()
        return action_result(before, {}, True, f"clicked at {point[0]},{point[1]}", via=via)
    try:
        after = rb.states(t.view, [t.node_id])
    except BusError:  # the click closed what it landed on: that is the click working
        rb.screen.invalidate()
        return action_result(before, {}, True, "clicked; its window closed", via=via)
    rb.screen.invalidate()
    return action_result(before, after, True, f"clicked at {point[0]},{point[1]}", via=via)
