"""What a screen tells the closed set about scrolling: how many panes a name could pick."""

from __future__ import annotations

from appliance.desktop.model import Node, Snapshot
from appliance.voice.sink import screen_names_of


def _snapshot(*nodes: tuple[str, str, str]) -> Snapshot:
    """A window holding (id, role, parent id) nodes."""
    made = [Node(id=i, role=role, name=i, app="A", window="W", parent_id=parent)
            for i, role, parent in nodes]
    window = Node(id="w", role="frame", name="W", app="A", window="W",
                  child_ids=tuple(n.id for n in made if n.parent_id == "w"))
    return Snapshot(nodes=(window, *made), active_app="A", active_window="W")


def test_panes_are_counted_when_every_scroll_bar_is_inside_one() -> None:
    assert screen_names_of(_snapshot(("w.send", "push button", "w"))).panes == 0
    one = _snapshot(("w.p", "scroll pane", "w"), ("w.p.bar", "scroll bar", "w.p"))
    assert screen_names_of(one).panes == 1
    two = _snapshot(("w.p", "scroll pane", "w"), ("w.q", "scroll pane", "w"))
    assert screen_names_of(two).panes == 2


def test_a_scroll_bar_outside_every_pane_leaves_the_panes_unknown() -> None:
    """Scrolling an element outside the pane moves that bar; "scroll down" alone would not."""
    loose = _snapshot(("w.p", "scroll pane", "w"), ("w.bar", "scroll bar", "w"))
    assert screen_names_of(loose).panes is None
