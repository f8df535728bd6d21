"""The controls a person can act on without speaking their names: what scanning offers and
what "show numbers" numbers. One list, so a switch user and a voice user see the same things."""

from __future__ import annotations

from dataclasses import dataclass

from appliance.desktop import roles
from appliance.desktop.model import Node, Snapshot

MAX_NUMBERS = 99
"""Badges past two digits crowd a screen and take longer to say than a name."""


def actionable(snapshot: Snapshot, named: bool = True) -> list[Node]:
    """Controls of the active window a press can act on: visible and enabled; named ones only
    unless `named` is False; a combo box's own choices come through the combo box."""
    window = snapshot.in_active_window()
    by_id = {n.id: n for n in window}
    return [
        node
        for node in window
        if node.role in roles.SCAN_ROLES
        and (node.name or not named)
        and node.visible
        and node.enabled
        and not _inside_choice(node, by_id)
    ]


@dataclass(frozen=True)
class Numbered:
    """One control with the number shown beside it."""

    number: int
    node: Node


def numbered(snapshot: Snapshot) -> tuple[Numbered, ...]:
    """The active window's controls with a place on screen, numbered from 1 in reading order
    (rows top to bottom, each left to right), names or not: a number is what an unnamed one
    needs."""
    placed = [n for n in actionable(snapshot, named=False) if has_place(n.bounds)]
    ordered = [node for row in _rows(placed) for node in row]
    return tuple(Numbered(i, node) for i, node in enumerate(ordered[:MAX_NUMBERS], start=1))


def has_place(bounds: tuple[int, int, int, int] | None) -> bool:
    """Known extents with an area: somewhere on screen a badge or a click can go."""
    return bounds is not None and bounds[2] > 0 and bounds[3] > 0


def _rows(nodes: list[Node]) -> list[list[Node]]:
    """Controls in rows: one joins a row when its middle lies within the height of the row's
    first control (a label, a field and a button beside it rarely align to the pixel)."""
    rows: list[list[Node]] = []
    for node in sorted(nodes, key=lambda n: _middle(n)):
        first = rows[-1][0].bounds if rows else None
        if first is not None and first[1] <= _middle(node) < first[1] + first[3]:
            rows[-1].append(node)
        else:
            rows.append([node])
    return [sorted(row, key=lambda n: n.bounds[0] if n.bounds else 0) for row in rows]


def _middle(node: Node) -> float:
    assert node.bounds is not None
    return node.bounds[1] + node.bounds[3] / 2


def _inside_choice(node: Node, by_id: dict[str, Node]) -> bool:
    parent = by_id.get(node.parent_id) if node.parent_id else None
    while parent is not None:
        if parent.role in roles.CHOICE_ROLES:
            return True
        parent = by_id.get(parent.parent_id) if parent.parent_id else None
    return False
