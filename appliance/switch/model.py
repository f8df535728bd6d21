"""What a switch says: raw edges from the device, and the presses made of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Gesture = Literal["tap", "hold", "long_hold"]


@dataclass(frozen=True)
class Edge:
    """A key going down or up on switch 1 or 2, at `t` seconds on the monotonic clock."""

    switch: int
    down: bool
    t: float


@dataclass(frozen=True)
class Press:
    """One deliberate press, after debouncing: a tap, a hold, or a long hold.

    `t` is when it was recognised (release for a tap; the hold time passing for a hold), so
    press-to-action latency is measured from the moment the appliance could know.
    """

    switch: int
    gesture: Gesture
    t: float
    held_s: float
