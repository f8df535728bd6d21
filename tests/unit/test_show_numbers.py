"""Numbers and the pointer grid: which controls get a number, in what order, and how the grid
divides the screen. Pure; the panel drawing them is checked on a real X screen in test_panel."""

from __future__ import annotations

import pytest

from appliance.desktop.actionable import MAX_NUMBERS, actionable, numbered
from appliance.desktop.model import Node, Snapshot
from appliance.panel.grid import Grid


def _node(id: str, role: str, name: str, x: int, y: int, **kw: object) -> Node:
    return Node(id=id, role=role, name=name, app="A", window="W", parent_id="w",
                bounds=(x, y, 80, 24), **kw)  # type: ignore[arg-type]


def _snapshot(*controls: Node) -> Snapshot:
    window = Node(id="w", role="frame", name="W", app="A", window="W",
                  child_ids=tuple(c.id for c in controls))
    return Snapshot(nodes=(window, *controls), active_app="A", active_window="W")


def test_numbers_follow_rows_and_include_controls_without_a_name() -> None:
    snap = _snapshot(
        _node("send", "push button", "Send", 300, 205),  # a few pixels lower, same row
        _node("icon", "push button", "", 10, 200),  # an icon button: no name to say
        _node("msg", "text", "Message", 120, 198),
        _node("urgent", "check box", "Urgent", 10, 260),
        _node("off", "push button", "Gone", 10, 300, states=frozenset({"invisible"})),
        _node("dim", "push button", "Dim", 10, 330,
              states=frozenset({"insensitive"})),  # not enabled
        _node("label", "label", "Hello", 10, 400),
    )
    shown = [(n.number, n.node.id) for n in numbered(snap)]
    assert shown == [(1, "icon"), (2, "msg"), (3, "send"), (4, "urgent")]
    # Scanning offers the same controls, those with a name.
    assert [n.id for n in actionable(snap)] == ["send", "msg", "urgent"]


def test_a_control_with_no_place_on_screen_gets_no_number() -> None:
    snap = _snapshot(
        _node("a", "push button", "A", 10, 10),
        Node(id="b", role="push button", name="B", app="A", window="W", parent_id="w"),
        Node(id="c", role="push button", name="C", app="A", window="W", parent_id="w",
             bounds=(5, 5, 0, 0)),
    )
    assert [n.node.id for n in numbered(snap)] == ["a"]


def test_numbers_stop_at_two_digits() -> None:
    controls = [_node(f"b{i}", "push button", f"B{i}", 10 + (i % 10) * 90, 10 + (i // 10) * 30)
                for i in range(150)]
    shown = numbered(_snapshot(*controls))
    assert len(shown) == MAX_NUMBERS and shown[-1].number == MAX_NUMBERS
    assert [n.node.id for n in shown[:11]] == [f"b{i}" for i in range(11)]


def test_grid_cells_cover_the_area_exactly_and_refine_to_a_point() -> None:
    screen = Grid(0, 0, 1024, 768)
    cells = screen.cells()
    assert sum(c.width * c.height for c in cells) == 1024 * 768
    assert cells[0] == Grid(0, 0, 341, 256) and cells[8] == Grid(682, 512, 342, 256)
    assert screen.cell(5).centre() == (511, 384)
    grid = screen
    for _ in range(10):
        if not grid.refinable():
            break
        grid = grid.cell(9)
    assert not grid.refinable() and grid.width < 3 * 6 * 3
    assert grid.x + grid.width == 1024 and grid.y + grid.height == 768


@pytest.mark.parametrize("number", [0, 10, -1])
def test_a_grid_has_nine_cells(number: int) -> None:
    with pytest.raises(ValueError):
        Grid(0, 0, 90, 90).cell(number)
