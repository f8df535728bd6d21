"""The Action interface: an element's action names, doing the one that presses it, and the
press and the switch built on it."""

from __future__ import annotations

from appliance.desktop.atspi.ax_component import click_point
from appliance.desktop.atspi.bus import A11yBus, BusError, Ref
from appliance.desktop.atspi.gi_modules import GLib
from appliance.desktop.atspi.input_devices import InputDevices
from appliance.desktop.atspi.readback import ReadBack, Target, action_result, observed
from appliance.desktop.atspi.tree import ACTION, apply_reply
from appliance.desktop.model import ActionResult, DesktopError

PREFERRED_ACTIONS = ("click", "press", "activate", "toggle", "switch", "jump", "select")


def action_names(bus: A11yBus, t: Target) -> tuple[str, ...]:
    """The element's actions, read now if the snapshot left them out (it reads them only
    for controls: asking every static text of a web page doubles a cold read)."""
    if not t.raw.actions and "Action" in t.raw.interfaces:
        apply_reply(t.view.tree, t.raw, "actions", bus.call(t.ref, ACTION, "GetActions"))
    return t.raw.actions


def preferred_action(actions: tuple[str, ...]) -> int:
    """The index of the action that presses the element: the first of PREFERRED_ACTIONS, else 0."""
    for name in PREFERRED_ACTIONS:
        if name in actions:
            return actions.index(name)
    return 0


def do_action(bus: A11yBus, ref: Ref, index: int) -> bool:
    """Whether the application accepted the action."""
    reply = bus.call(ref, ACTION, "DoAction", GLib.Variant("(i)", (index,)))
    return bool(reply[0]) if reply else False


def do_preferred_action(bus: A11yBus, ref: Ref, actions: tuple[str, ...]) -> bool:
    return do_action(bus, ref, preferred_action(actions))


def activate(rb: ReadBack, t: Target, devices: InputDevices) -> ActionResult:
    """Press the element by its action, else click its middle."""
    before = rb.states(t.view, [t.node_id])
    if action_names(rb.bus, t):
        index = preferred_action(t.raw.actions)
        ok = do_action(rb.bus, t.ref, index)
        try:
            after = rb.states(t.view, [t.node_id])
        except BusError:
            if not ok:
                raise
            # Accepted, then gone: an OK or Close button takes its window (or its whole
            # program, as a dialog tool does) with it. That is the press working.
            rb.screen.invalidate()
            return action_result(before, {}, True, "activated; its window closed")
        detail = "activated" if ok else f"{t.raw.name} ignored {t.raw.actions[index]}"
        return action_result(before, after, ok, detail)
    if "Component" in t.raw.interfaces:
        x, y = click_point(rb.bus, t.ref)
        pointer, via = devices.clicks()
        pointer.click(x, y)
        after = rb.states(t.view, [t.node_id])
        return action_result(before, after, True, "clicked", via=via)
    raise DesktopError(f"{t.raw.name or 'That element'} can't be pressed.")


def toggle(rb: ReadBack, t: Target, on: bool) -> ActionResult:
    """Check or uncheck the element by its action, if it is not that way already."""
    before = rb.states(t.view, [t.node_id])
    if ("checked" in before[t.node_id].states) != on:
        if not action_names(rb.bus, t):
            raise DesktopError(f"{t.raw.name} can't be switched.")
        do_preferred_action(rb.bus, t.ref, t.raw.actions)
    after = rb.settle(t.view, [t.node_id], lambda a: ("checked" in a[t.node_id].states) == on)
    ok = ("checked" in after[t.node_id].states) == on
    word = "checked" if on else "unchecked"
    return action_result(before, after, ok, word if ok else observed(after[t.node_id]))
