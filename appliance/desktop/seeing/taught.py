"""Targets a person taught by name ("call 7 Save"): where in which window, what was read there
and what the spot looked like. They come back as elements only where the spot still looks the
same; what the validator makes of seen and taught elements is decided here too."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from appliance.desktop.model import Node
from appliance.desktop.roles import SEEN_ROLES

Box = tuple[int, int, int, int]

SEEN_ROLE = next(iter(SEEN_ROLES))
"""The role of every element the screen shows but no application told of."""
LOOKS_CHANGED = "looks changed"
"""The state of a taught element whose spot no longer looks as it did when it was taught."""
MISSED = "missed before"
"""The state of a taught element that missed MISSES_TO_ASK times since its last hit."""
MISSES_TO_ASK = 2
"""A taught target that missed this many times since its last hit is asked about again."""

SEEN_REASON = "seen on the screen, not told by the application"
TAUGHT_MISSED_REASON = "taught target missed before"


class TaughtTarget(BaseModel):
    """One taught target, as its `TargetTaught` event holds it, with its uses folded in."""

    model_config = ConfigDict(frozen=True)

    id: str
    app: str
    window: str
    name: str
    offset: Box  # x, y, width, height from the window's top-left corner
    text: str  # what was read there when it was taught ("" when nothing was)
    fingerprint: str
    by: str = ""
    hits: int = 0
    misses_since_hit: int = 0

    def placed(self, window: Box) -> Box:
        """Where the target is on screen in a window at `window`."""
        return (window[0] + self.offset[0], window[1] + self.offset[1],
                self.offset[2], self.offset[3])

    def fits(self, window: Box) -> bool:
        """Whether the spot lies inside a window of this size (a smaller one has no such spot)."""
        x, y, w, h = self.offset
        return x >= 0 and y >= 0 and x + w <= window[2] and y + h <= window[3]


def taught_node(target: TaughtTarget, app: str, window: str, bounds: Box, similar: float,
                looks_same: bool) -> Node:
    """The taught target as an element of the snapshot; `similar` 0..1 is how alike the spot
    looks now."""
    states = {LOOKS_CHANGED} if not looks_same else set()
    if target.misses_since_hit >= MISSES_TO_ASK:
        states.add(MISSED)
    return Node(id=f"taught:{target.id}", role=SEEN_ROLE, name=target.name, app=app,
                window=window, bounds=bounds, states=frozenset(states), source="taught",
                confidence=round(similar, 3), value=target.text or None)


def seen_reason(node: Node) -> str | None:
    """Why acting on this element needs a yes: it was only seen, or taught and missed twice
    since its last hit; None when it does not."""
    if node.source == "seen":
        return SEEN_REASON
    if node.source == "taught" and MISSED in node.states:
        return TAUGHT_MISSED_REASON
    return None


def seen_refusal(node: Node) -> str | None:
    """Why a taught element is not clicked at all: its spot looks different now."""
    if node.source == "taught" and LOOKS_CHANGED in node.states:
        return (f"{node.name} doesn't look as it did when you taught it, so I won't click it "
                "blind. Say show numbers and call it again.")
    return None
