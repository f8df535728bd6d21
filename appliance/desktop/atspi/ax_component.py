"""The Component interface: where an element is on screen, the point to click it, and giving it
the keyboard focus."""

from __future__ import annotations

from appliance.desktop.atspi.bus import A11yBus, Ref
from appliance.desktop.atspi.gi_modules import GLib
from appliance.desktop.atspi.readback import ReadBack, Target, action_result, observed
from appliance.desktop.atspi.tree import COMPONENT, SCREEN_COORDS
from appliance.desktop.model import ActionResult, DesktopError


def extents(bus: A11yBus, ref: Ref) -> tuple[int, int, int, int]:
    """Where the element is on screen: x, y, width, height."""
    reply = bus.call(ref, COMPONENT, "GetExtents", GLib.Variant("(u)", (SCREEN_COORDS,)))
    x, y, width, height = reply[0]
    return x, y, width, height


def click_point(bus: A11yBus, ref: Ref) -> tuple[int, int]:
    """The element's middle on screen."""
    x, y, width, height = extents(bus, ref)
    return x + width // 2, y + height // 2


def grab_focus(bus: A11yBus, ref: Ref) -> bool:
    reply = bus.call(ref, COMPONENT, "GrabFocus")
    return bool(reply[0]) if reply else False


def focus(rb: ReadBack, t: Target) -> ActionResult:
    """Give the element the focus; the element that had it is read back too."""
    focused = [n.id for n in rb.screen.snapshot().nodes
               if "focused" in n.states and n.id in t.view.ref_of and n.id != t.node_id]
    ids = [*focused, t.node_id]
    before = rb.states(t.view, ids)
    if "Component" not in t.raw.interfaces:
        raise DesktopError(f"{t.raw.name or 'That element'} can't take the focus.")
    grab_focus(rb.bus, t.ref)
    after = rb.settle(t.view, ids, lambda a: "focused" in a[t.node_id].states)
    ok = "focused" in after[t.node_id].states
    return action_result(before, after, ok, "focused" if ok else observed(after[t.node_id]))
