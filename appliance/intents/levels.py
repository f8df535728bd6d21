"""Slider values said relative to the screen: "louder", "a bit darker", "max volume", "half".

A relative request becomes an absolute `set_value` computed from the value on screen now, so the
validator and the journal see the exact number that will be set.
"""

from __future__ import annotations

from typing import Literal

from appliance.desktop.model import Node

STEPS_PER_RANGE = 10
"""One "louder" moves a slider a tenth of its range (at least one unit on small ranges)."""

Extreme = Literal["max", "min", "half"]


def _bounds(node: Node) -> tuple[float, float] | None:
    lo, hi = node.minimum, node.maximum
    if lo is None or hi is None or hi <= lo:
        return None
    return lo, hi


def _current(node: Node) -> float | None:
    value = node.value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value.strip().rstrip("%"))
    except ValueError:
        return None


def step_size(node: Node) -> float | None:
    """How far one step moves this slider, or None when its range is unknown."""
    bounds = _bounds(node)
    if bounds is None:
        return None
    span = bounds[1] - bounds[0]
    return 1.0 if span <= STEPS_PER_RANGE else span / STEPS_PER_RANGE


def stepped_value(node: Node, up: bool, steps: int = 1) -> float | None:
    """The value `steps` steps up or down from the value on screen, kept inside the range.

    None when the current value or the range cannot be read: a guess would not be "a bit".
    """
    bounds, current, step = _bounds(node), _current(node), step_size(node)
    if bounds is None or current is None or step is None:
        return None
    moved = current + step * steps if up else current - step * steps
    return round(min(bounds[1], max(bounds[0], moved)), 6)


def extreme_value(node: Node, extreme: str) -> float | None:
    """The slider's maximum, minimum or middle; None when its range is unknown."""
    bounds = _bounds(node)
    if bounds is None:
        return None
    lo, hi = bounds
    if extreme == "max":
        return hi
    if extreme == "min":
        return lo
    if extreme == "half":
        return lo + (hi - lo) / 2
    return None
