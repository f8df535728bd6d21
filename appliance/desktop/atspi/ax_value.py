"""The Value interface: setting a number (a slider, a spin button), and scrolling by moving a
scroll bar's value."""

from __future__ import annotations

import math

from appliance.desktop.atspi.bus import PROPERTIES, A11yBus, Ref
from appliance.desktop.atspi.gi_modules import GLib
from appliance.desktop.atspi.readback import ReadBack, Target, action_result, observed
from appliance.desktop.atspi.tree import VALUE
from appliance.desktop.model import ActionResult, DesktopError
from appliance.desktop.roles import SCROLL_BAR, SCROLL_PANE


def set_current_value(bus: A11yBus, ref: Ref, number: float) -> None:
    bus.call(ref, PROPERTIES, "Set",
             GLib.Variant("(ssv)", (VALUE, "CurrentValue", GLib.Variant("d", number))))


def set_number(rb: ReadBack, t: Target, value: str | float | bool | None) -> ActionResult:
    """Set the element's value, refused outside its range, and read it back."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DesktopError(f"{t.raw.name} needs a number.") from None
    lo = t.raw.minimum if t.raw.minimum is not None else -math.inf
    hi = t.raw.maximum if t.raw.maximum is not None else math.inf
    if not lo <= number <= hi:
        raise DesktopError(f"{t.raw.name} goes from {lo:g} to {hi:g}.")
    before = rb.states(t.view, [t.node_id])
    set_current_value(rb.bus, t.ref, number)
    after = rb.states(t.view, [t.node_id])
    got = after[t.node_id].value
    ok = isinstance(got, float) and abs(got - number) < 1e-6
    return action_result(before, after, ok, "set" if ok else observed(after[t.node_id]))


def scroll_bar(rb: ReadBack, node_id: str | None, direction: str) -> Target | None:
    """The scroll bar that scrolls the element's pane (else the active window's first pane)
    that way, if there is one."""
    snap = rb.screen.snapshot()
    vertical = direction in {"up", "down"}
    if node_id is not None:
        pane_ids = [node_id]
        node = snap.node(node_id)
        while node is not None and node.parent_id is not None and node.role != SCROLL_PANE:
            node = snap.node(node.parent_id)
            if node is not None:
                pane_ids.insert(0, node.id)
        scope = pane_ids[0]
    else:
        pane = next((n for n in snap.in_active_window() if n.role == SCROLL_PANE), None)
        if pane is None:
            return None
        scope = pane.id
    bars = [n for n in snap.nodes if n.role == SCROLL_BAR and n.id.startswith(scope + ".")
            and ("vertical" in n.states) == vertical and n.maximum]
    return rb.target(bars[0].id) if bars else None


def scroll(rb: ReadBack, bar: Target, direction: str) -> ActionResult:
    """Move the scroll bar a quarter of its range that way, and read it back."""
    before = rb.states(bar.view, [bar.node_id])
    old = float(bar.raw.value or 0.0)
    lo, hi = bar.raw.minimum or 0.0, bar.raw.maximum or 0.0
    step = max((hi - lo) / 4, 1.0)
    new = min(hi, old + step) if direction in {"down", "right"} else max(lo, old - step)
    set_current_value(rb.bus, bar.ref, new)
    after = rb.states(bar.view, [bar.node_id])
    now = float(after[bar.node_id].value or 0.0)
    moved = now > old if direction in {"down", "right"} else now < old
    ok = moved or old == new  # already at the end is not a failure
    return action_result(before, after, ok, f"scrolled {direction}" if ok else
                         f"the scroll bar stayed at {now:g}")
