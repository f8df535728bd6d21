"""Scan menus built from a snapshot: the active window's controls by container, plus fixed items.

Pure. Each item says what selecting it does: run an intent through the session, open a
sub-menu (a group, a slider's higher/lower, a combo box's choices), or a command. Secret values
are never part of a label: a password field is offered by its name only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from appliance.desktop import roles
from appliance.desktop.actionable import actionable
from appliance.desktop.model import Node, Snapshot
from appliance.intents.levels import stepped_value
from appliance.intents.model import (
    Activate,
    Cancel,
    Focus,
    Intent,
    Select,
    SetValue,
    Undo,
)
from appliance.panel.state import Bounds

# The validator's families, offered the way a person would use them (see roles.SCAN_*).
TOGGLE_ROLES = roles.SCAN_TOGGLE_ROLES
ITEM_ROLES = roles.SCAN_ITEM_ROLES
TEXT_ROLES = roles.SCAN_TEXT_ROLES
Command = Literal["talk", "stop", "back", "learn_voice", "pause_learning", "skip_phrase",
                  "stop_learning"]


@dataclass(frozen=True)
class Menu:
    title: str
    items: tuple[MenuItem, ...]


@dataclass(frozen=True)
class MenuItem:
    """One thing to offer. `label` is what is spoken and shown."""

    label: str
    intent: Intent | None = None  # run through session.choose
    words: str = ""  # what the choice is recorded as having said
    submenu: Menu | None = None
    command: Command | None = None
    talk_after: bool = False  # a text field: focus it, then listen for what to type
    bounds: Bounds | None = None
    node_ids: tuple[str, ...] = field(default=())


SPEAK = MenuItem("Speak a command", command="talk")
UNDO = MenuItem("Undo", intent=Undo(words="undo"), words="undo")
CANCEL = MenuItem("Cancel", intent=Cancel(words="cancel"), words="cancel")
LEARN_VOICE = MenuItem("Learn my voice", command="learn_voice")
STOP = MenuItem("Stop scanning", command="stop")
BACK = MenuItem("Back", command="back")
FIXED = (SPEAK, UNDO, CANCEL, LEARN_VOICE, STOP)
PAUSE_LEARNING = MenuItem("Pause learning my voice", command="pause_learning")
GO_ON_LEARNING = MenuItem("Go on learning my voice", command="learn_voice")
SKIP_PHRASE = MenuItem("Skip this phrase", command="skip_phrase")
STOP_LEARNING = MenuItem("Stop learning my voice", command="stop_learning")


def learning_menu(paused: bool) -> Menu:
    """What the switch offers while the person's voice is being learned."""
    if paused:
        return Menu("Learning my voice, paused", (GO_ON_LEARNING, STOP_LEARNING, STOP))
    return Menu("Learning my voice", (PAUSE_LEARNING, SKIP_PHRASE, STOP_LEARNING, STOP))


def scan_menu(snapshot: Snapshot) -> Menu:
    """The top menu: one item per container of the active window's controls (a container with
    one control offers it directly), then the fixed items."""
    controls = actionable(snapshot)
    inside = {n.id for n in controls}
    groups: dict[str | None, list[Node]] = {}
    for node in controls:
        groups.setdefault(_container(node, snapshot, inside), []).append(node)
    entries: list[tuple[tuple[int, int, int], MenuItem]] = []
    position = {n.id: i for i, n in enumerate(controls)}
    for order, (parent_id, nodes) in enumerate(groups.items()):
        nodes.sort(key=lambda n: _reading_order(n, position))
        items = tuple(element_item(n, snapshot) for n in nodes)
        if len(items) == 1:
            entry = items[0]
        else:
            parent = snapshot.node(parent_id) if parent_id else None
            entry = MenuItem(
                _group_label(parent, nodes),
                submenu=Menu(_group_label(parent, nodes), (*items, BACK)),
                bounds=_union(i.bounds for i in items),
                node_ids=tuple(n.id for n in nodes),
            )
        first = _reading_order(nodes[0], position)
        entries.append(((first[0], first[1], order), entry))
    entries.sort(key=lambda e: e[0])
    title = snapshot.active_window or "the screen"
    return Menu(title, (*(e for _k, e in entries), *FIXED))


def options_menu(question: str, options: Iterable[str]) -> Menu:
    """The answers to "Did you mean A or B?", then Cancel."""
    items = tuple(MenuItem(o, intent=Select(target=o, words=o), words=o) for o in options)
    return Menu(question, (*items, CANCEL))


def element_item(node: Node, snapshot: Snapshot) -> MenuItem:
    """What selecting one control does: press, toggle, select, a sub-menu, or focus and talk."""
    name, bounds, ids = node.name, _bounds(node), (node.id,)
    if node.role in TOGGLE_ROLES:
        on = "checked" in node.states or "pressed" in node.states
        verb = "untick" if on else "tick"
        return MenuItem(
            f"{name}, {'ticked' if on else 'not ticked'}",
            intent=SetValue(target=name, value=not on, words=f"{verb} {name}"),
            words=f"{verb} {name}",
            bounds=bounds,
            node_ids=ids,
        )
    if node.role in ITEM_ROLES:
        return _intent_item(name, Select(target=name, words=f"select {name}"), bounds, ids)
    if node.role in roles.NUMBER_ROLES:
        return MenuItem(
            f"{name}, {_number(node.value)}",
            submenu=_number_menu(node),
            bounds=bounds,
            node_ids=ids,
        )
    if node.role in roles.CHOICE_ROLES:
        return _choice_item(node, snapshot)
    if node.role in TEXT_ROLES:
        return MenuItem(
            f"{name}, text field",
            intent=Focus(target=name, words=f"go to {name}"),
            words=f"go to {name}",
            talk_after=True,
            bounds=bounds,
            node_ids=ids,
        )
    return _intent_item(name, Activate(target=name, words=f"press {name}"), bounds, ids)


# -- inside ------------------------------------------------------------------------------


def _intent_item(
    name: str, intent: Intent, bounds: Bounds | None, ids: tuple[str, ...]
) -> MenuItem:
    return MenuItem(name, intent=intent, words=intent.words, bounds=bounds, node_ids=ids)


def _choice_item(node: Node, snapshot: Snapshot) -> MenuItem:
    """A combo box: its choices as a sub-menu; focus it if it lists none."""
    label = f"{node.name}, {node.value}" if node.value else node.name
    bounds, ids = _bounds(node), (node.id,)
    choices = [n.name for n in snapshot.descendants(node) if n.name and n.role != "menu"]
    if not choices:
        return _intent_item(label, Focus(target=node.name, words=f"go to {node.name}"), bounds, ids)
    subs = []
    for choice in dict.fromkeys(choices):
        words = f"set {node.name} to {choice}"
        intent = SetValue(target=node.name, value=choice, words=words)
        subs.append(MenuItem(choice, intent=intent, words=words, bounds=bounds, node_ids=ids))
    return MenuItem(label, submenu=Menu(node.name, (*subs, BACK)), bounds=bounds, node_ids=ids)


def _number_menu(node: Node) -> Menu:
    """Higher and lower by the step a spoken "a bit louder" takes, kept inside the range."""
    items = []
    for label, up in (("Higher", True), ("Lower", False)):
        value = stepped_value(node, up)
        if value is not None and value != node.value:
            words = f"set {node.name} to {_number(value)}"
            items.append(
                MenuItem(
                    f"{label}, {_number(value)}",
                    intent=SetValue(target=node.name, value=value, words=words),
                    words=words,
                    bounds=_bounds(node),
                    node_ids=(node.id,),
                )
            )
    return Menu(node.name, (*items, BACK))


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, int | float) else str(value or "")


def _container(node: Node, snapshot: Snapshot, controls: set[str]) -> str | None:
    """The nearest ancestor that is not itself a control (a list item's list, a form's panel)."""
    parent_id = node.parent_id
    while parent_id is not None and parent_id in controls:
        parent = snapshot.node(parent_id)
        parent_id = parent.parent_id if parent else None
    return parent_id


def _reading_order(node: Node, position: dict[str, int]) -> tuple[int, int]:
    """Top to bottom, left to right where positions are known; else the snapshot's order."""
    if node.bounds is not None:
        return node.bounds[1], node.bounds[0]
    return 1_000_000 + position[node.id], 0


def _group_label(parent: Node | None, nodes: list[Node]) -> str:
    if parent is not None and parent.name:
        return parent.name
    names = [n.name for n in nodes]
    if len(names) <= 3:
        return ", ".join(names[:-1]) + f" and {names[-1]}"
    return f"{names[0]}, {names[1]} and {len(names) - 2} more"


def _bounds(node: Node) -> Bounds | None:
    if node.bounds is None:
        return None
    x, y, w, h = node.bounds
    return Bounds(x=x, y=y, width=max(0, w), height=max(0, h))


def _union(boxes: Iterable[Bounds | None]) -> Bounds | None:
    known = [b for b in boxes if b is not None]
    if not known:
        return None
    x0 = min(b.x for b in known)
    y0 = min(b.y for b in known)
    x1 = max(b.x + b.width for b in known)
    y1 = max(b.y + b.height for b in known)
    return Bounds(x=x0, y=y0, width=x1 - x0, height=y1 - y0)
