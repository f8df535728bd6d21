"""What "show numbers" and "show grid" put on the screen, and what a number said then means.

The marks shown are journaled with the turn that showed them, so "7" means the control that
wore badge 7 when the person looked, never whatever is seventh on a screen that changed since.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from appliance.desktop import roles
from appliance.desktop.actionable import has_place, numbered
from appliance.desktop.model import Node, Snapshot
from appliance.panel.grid import Grid

Box = tuple[int, int, int, int]
"""x, y, width, height on screen."""

FALLBACK_SCREEN: Box = (0, 0, 1024, 768)
"""The grid's area when nothing on screen says where the window is."""
MAX_SCREEN = 16384
"""Past this, extents are a toolkit's "somewhere off screen", not a place."""


class Mark(BaseModel):
    """One badge: the number and the control it was drawn beside."""

    model_config = ConfigDict(frozen=True)

    number: int
    node_id: str
    name: str
    role: str
    bounds: Box


class Marks(BaseModel):
    """Numbers beside the controls, or the pointer grid over an area."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["numbers", "grid"]
    numbers: tuple[Mark, ...] = ()
    area: Box | None = None

    def grid(self) -> Grid:
        x, y, w, h = self.area or FALLBACK_SCREEN
        return Grid(x, y, w, h)

    def refined(self, cell: int) -> Marks:
        """The grid narrowed to one of its cells."""
        g = self.grid().cell(cell)
        return Marks(kind="grid", area=(g.x, g.y, g.width, g.height))


def number_marks(snapshot: Snapshot) -> Marks:
    """Badges for the active window's controls, from the shared scanning list."""
    marks = tuple(
        Mark(number=n.number, node_id=n.node.id, name=n.node.name, role=n.node.role,
             bounds=n.node.bounds or (0, 0, 0, 0))
        for n in numbered(snapshot)
    )
    return Marks(kind="numbers", numbers=marks)


def grid_marks(snapshot: Snapshot) -> Marks:
    """A grid over the active window (what the person is working in), else the screen."""
    return Marks(kind="grid", area=window_area(snapshot))


def window_area(snapshot: Snapshot) -> Box:
    """Where the active window is: its frame's box, else the box around what shows in it.
    Toolkits give far-off extents for things scrolled away, so only what is on screen counts."""
    window = [n for n in snapshot.in_active_window() if n.visible and _on_screen(n.bounds)]
    frames = [n.bounds for n in window if n.role in roles.WINDOW_ROLES and n.bounds]
    if frames:
        return max(frames, key=lambda b: b[2] * b[3])
    boxes = [n.bounds for n in window if n.bounds]
    if not boxes:
        return FALLBACK_SCREEN
    left = min(b[0] for b in boxes)
    top = min(b[1] for b in boxes)
    right = max(b[0] + b[2] for b in boxes)
    bottom = max(b[1] + b[3] for b in boxes)
    return left, top, right - left, bottom - top


def node_at(snapshot: Snapshot, x: int, y: int) -> Node | None:
    """The innermost showing element of the active window under a point: what a click there
    would reach."""
    under = [
        n for n in snapshot.in_active_window()
        if n.visible and n.bounds is not None and has_place(n.bounds)
        and n.bounds[0] <= x < n.bounds[0] + n.bounds[2]
        and n.bounds[1] <= y < n.bounds[1] + n.bounds[3]
    ]
    if not under:
        return None
    return min(under, key=lambda n: n.bounds[2] * n.bounds[3] if n.bounds else 0)


def _on_screen(bounds: tuple[int, int, int, int] | None) -> bool:
    return (has_place(bounds) and bounds is not None and bounds[0] >= 0 and bounds[1] >= 0
            and bounds[0] + bounds[2] <= MAX_SCREEN and bounds[1] + bounds[3] <= MAX_SCREEN)
