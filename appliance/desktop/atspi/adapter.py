"""The AT-SPI desktop: the sim's behaviour on a real screen, uinput where AT-SPI cannot reach.

Every action goes through the interface made for it (ax_action, ax_text, ax_value, ax_selection,
ax_component), then the touched objects are read back from the application to verify it
(readback.py).
"""

from __future__ import annotations

from appliance.desktop.atspi.applications import open_app
from appliance.desktop.atspi.ax_action import activate, toggle
from appliance.desktop.atspi.ax_component import focus
from appliance.desktop.atspi.ax_selection import choose, select
from appliance.desktop.atspi.ax_text import focused_text_field, set_text, type_by_keys, type_text
from appliance.desktop.atspi.ax_value import scroll, scroll_bar, set_number
from appliance.desktop.atspi.bus import A11yBus
from appliance.desktop.atspi.input_devices import InputDevices, click_at, press_key
from appliance.desktop.atspi.launcher import Launcher
from appliance.desktop.atspi.readback import ReadBack, Target
from appliance.desktop.atspi.screen import Screen, element_state
from appliance.desktop.atspi.undo import restore
from appliance.desktop.model import Action, ActionResult, DesktopError, Snapshot
from appliance.desktop.roles import SECRET_ROLES, TOGGLE_ROLES

SCROLL_KEYS = {"up": "Page_Up", "down": "Page_Down", "left": "Left", "right": "Right"}


class AtspiDesktop:
    """Implements the `Desktop` protocol over AT-SPI (and uinput for keys, typing, clicks)."""

    def __init__(
        self, bus: A11yBus, launcher: Launcher | None = None, *, open_timeout: float = 15.0,
        max_nodes: int = 20_000, max_depth: int = 60, use_uinput: bool = True,
    ) -> None:
        self.bus = bus
        self.launcher = launcher or Launcher([])
        self.screen = Screen(bus, max_nodes=max_nodes, max_depth=max_depth,
                             launchable=self.launcher.names())
        self.open_timeout = open_timeout
        self.read_back = ReadBack(self.screen)
        self.devices = InputDevices(bus, use_uinput=use_uinput)

    @property
    def settle_timeout(self) -> float:
        """How long a read-back waits for the toolkit to apply a change."""
        return self.read_back.settle_timeout

    @settle_timeout.setter
    def settle_timeout(self, seconds: float) -> None:
        self.read_back.settle_timeout = seconds

    # -- the protocol --------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        return self.screen.snapshot()

    def problems(self) -> list[str]:
        """Spoken notes about applications that stopped answering or left while being read."""
        gone = [f"{name} has closed." for name in self.screen.gone.values()]
        self.screen.gone.clear()  # said once
        return gone + [f"{name} is not responding."
                       for name in self.screen.not_answering.values()]

    def perform(self, action: Action) -> ActionResult:
        match action.kind:
            case "open_app":
                return open_app(self.screen, self.launcher, action.target or "",
                                timeout=self.open_timeout)
            case "press_key":
                return press_key(self.screen, self.devices, action.key or "")
            case "restore":
                return restore(self.read_back, self.launcher, action.restore or {},
                               open_timeout=self.open_timeout)
            case "type_text":
                return self._type(action.target, action.text or "")
            case "scroll":
                return self._scroll(action.target, action.direction or "down")
            case "click_at":
                return click_at(self.read_back, self.devices, action.point, action.target)
        if action.target is None:
            raise DesktopError("Which element do you mean?")
        target = self._target(action.target)
        with self.read_back.answering(target.app):
            match action.kind:
                case "activate":
                    return activate(self.read_back, target, self.devices)
                case "focus":
                    return focus(self.read_back, target)
                case "set_value":
                    return self._set_value(target, action.value)
                case "select":
                    return select(self.read_back, target)
        raise DesktopError(f"I can't {action.kind} here.")

    # -- composing the interfaces --------------------------------------------------------

    def _target(self, node_id: str, *, enabled: bool = True) -> Target:
        return self.read_back.target(node_id, enabled=enabled)

    def _type(self, node_id: str | None, text: str) -> ActionResult:
        t = self._target(node_id or focused_text_field(self.snapshot()))
        with self.read_back.answering(t.app):
            return type_text(self.read_back, t, text, self.devices)

    def _type_by_keys(self, t: Target, text: str) -> ActionResult:
        return type_by_keys(self.read_back, t, text, self.devices)

    def _scroll(self, node_id: str | None, direction: str) -> ActionResult:
        bar = scroll_bar(self.read_back, node_id, direction)
        if bar is None:
            return press_key(self.screen, self.devices, SCROLL_KEYS[direction])
        with self.read_back.answering(bar.app):
            return scroll(self.read_back, bar, direction)

    def _set_value(self, t: Target, value: str | float | bool | None) -> ActionResult:
        """By the element's kind: a switch, a number, a combo box's choice, a field's text."""
        role = t.raw.role
        if role in TOGGLE_ROLES or isinstance(value, bool):
            return toggle(self.read_back, t, bool(value))
        if "Value" in t.raw.interfaces:
            return set_number(self.read_back, t, value)
        if role == "combo box":
            return choose(self.read_back, t, str(value))
        if "EditableText" in t.raw.interfaces and role not in SECRET_ROLES:
            return set_text(self.read_back, t, str(value))
        raise DesktopError(f"{t.raw.name or 'That element'} has no value I can set.")


__all__ = ["AtspiDesktop", "element_state"]
