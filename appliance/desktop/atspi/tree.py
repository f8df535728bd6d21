"""Fetch one application's accessible tree: one bulk `GetItems`, gaps walked, details pipelined.

Caps on depth and node count and a visited set keep a pathological tree (huge, cyclic) from
stalling the appliance; a call that times out marks the whole application as not answering.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from appliance.desktop.atspi.bus import (
    ACCESSIBLE,
    CACHE_PATH,
    ROOT_PATH,
    A11yBus,
    BusError,
    Call,
    Ref,
)
from appliance.desktop.atspi.gi_modules import Atspi, GLib
from appliance.desktop.atspi.vocabulary import has_state, role_name, with_state
from appliance.desktop.roles import (
    BUTTON_ROLES,
    ITEM_ROLES,
    LABEL_TEXT_ROLES,
    LABELLED_ROLES,
    NAMED_BY_CONTENT_ROLES,
    NAMED_LEAF_ROLES,
    READABLE_TEXT_ROLES,
    SCAN_ROLES,
)

ACTION = "org.a11y.atspi.Action"
VALUE = "org.a11y.atspi.Value"
TEXT = "org.a11y.atspi.Text"
EDITABLE = "org.a11y.atspi.EditableText"
SELECTION = "org.a11y.atspi.Selection"
COMPONENT = "org.a11y.atspi.Component"
TEXT_VALUE_ROLES = READABLE_TEXT_ROLES
NAME_FROM_CONTENT = NAMED_BY_CONTENT_ROLES
NEEDS_LABEL = LABELLED_ROLES
ACTED_ON = SCAN_ROLES | ITEM_ROLES
"""Whose actions a snapshot reads; others' are read when acted on (ax_action.action_names)."""
VALUE_PROPERTIES = (("CurrentValue", "value"), ("MinimumValue", "minimum"),
                    ("MaximumValue", "maximum"))
LABELLED_BY = int(Atspi.RelationType.LABELLED_BY)
SCREEN_COORDS = int(Atspi.CoordType.SCREEN)


@dataclass
class RawNode:
    """What AT-SPI says about one object, before it becomes a model `Node`."""

    ref: Ref
    parent: Ref | None
    index: int
    child_count: int
    interfaces: frozenset[str]
    name: str
    role: str
    states: tuple[int, ...]
    children: list[Ref] = field(default_factory=list)
    actions: tuple[str, ...] = ()
    value: str | float | None = None
    minimum: float | None = None
    maximum: float | None = None
    bounds: tuple[int, int, int, int] | None = None  # x, y, width, height on screen
    inferred_name: bool = False  # named from a label near it: the toolkit's own name is not it
    inner: tuple[Ref, ...] = ()  # a named leaf's own children, not walked: its label may be one
    label_repeated: bool = False  # GTK 4.8 says its label twice ("+ +"): said once when re-read
    description: str = ""  # an unnamed button's tooltip, its name if nothing else names it


@dataclass
class AppTree:
    """One application's objects in document order, capped."""

    bus_name: str
    name: str
    nodes: dict[Ref, RawNode]
    windows: list[Ref]
    truncated: bool = False
    visible_means_showing: bool = False
    """GTK 4.8 sets `visible` but never `showing`: then visible is taken as on screen."""

    options: set[Ref] = field(default_factory=set)
    """Choices of combo boxes on screen: choosable by name though their list is folded away."""

    def shown(self, states: tuple[int, ...], ref: Ref | None = None) -> tuple[int, ...]:
        """States as read, with `showing` added where this toolkit never reports it, and on the
        options of a combo box that is showing."""
        if ref in self.options:
            return with_state(with_state(states, "visible"), "showing")
        if self.visible_means_showing and has_state(states, "visible"):
            return with_state(states, "showing")
        return states


def value_calls(node: RawNode) -> list[tuple[Call, str]]:
    """The calls that read what a node holds (a number, its text, a combo's choice), if any.

    Each D-Bus property is read on its own, as libatspi does: a bulk `GetAll` makes toolkits
    compute every property at once, and some abort on one they cannot give (Chromium on a
    slider with no value; Qt 5 segfaults).
    """
    if "Value" in node.interfaces:
        return [(Call.reading(node.ref, VALUE, name), kind) for name, kind in VALUE_PROPERTIES]
    if "Text" in node.interfaces and node.role in TEXT_VALUE_ROLES:
        return [(Call(node.ref, TEXT, "GetText", GLib.Variant("(ii)", (0, -1))), "text")]
    if node.role == "combo box" and "Selection" in node.interfaces:
        return [(Call(node.ref, SELECTION, "GetSelectedChild", GLib.Variant("(i)", (0,))),
                 "combo")]
    return []


@dataclass
class Reads:
    """Calls to send at once, each remembered with what it reads (its kind) and of which node."""

    calls: list[Call] = field(default_factory=list)
    asked: list[tuple[str, RawNode]] = field(default_factory=list)

    def add(self, call: Call, kind: str, node: RawNode) -> None:
        self.calls.append(call)
        self.asked.append((kind, node))

    def replies(self, bus: A11yBus) -> Iterator[tuple[str, RawNode, tuple[Any, ...] | BusError]]:
        """Each read's kind, node and reply (or error), once all are sent and answered."""
        answers = bus.call_many(self.calls)
        for (kind, node), reply in zip(self.asked, answers, strict=True):
            yield kind, node, reply


def extents_call(node: RawNode) -> Call | None:
    """The call that reads where a shown element is on screen (Component, screen coordinates)."""
    if "Component" not in node.interfaces or not has_state(node.states, "showing"):
        return None  # an element not on screen has no place worth reading
    return Call(node.ref, COMPONENT, "GetExtents", GLib.Variant("(u)", (SCREEN_COORDS,)))


TYPE_NAME = re.compile(r"(Gtk|Gdk|Adw|Gsk)[A-Z][A-Za-z]*")
"""GTK 4.8 names a widget that has no name by its type ("GtkTextView"): that is no name."""


def clean_name(name: Any) -> str:
    """A name as said aloud: toolkits pad some with runs of spaces or line breaks."""
    words = " ".join(str(name).split())
    return "" if TYPE_NAME.fullmatch(words) else words


def said_once(name: str) -> str | None:
    """The first half of a name that is one text said twice ("+ +" -> "+"), else None."""
    words = name.split()
    half = len(words) // 2
    if half and len(words) % 2 == 0 and words[:half] == words[half:]:
        return " ".join(words[:half])
    return None


SHORTCUT_HINT = re.compile(r"\s*\[[^\]]*\]$")
"""A tooltip's trailing key hint ("Clear Display [Escape]"): not something a person says."""


def _short(iface: str) -> str:
    return iface.rsplit(".", 1)[-1]


def fetch_app(
    bus: A11yBus, bus_name: str, *, max_nodes: int, max_depth: int,
    skip: frozenset[str] = frozenset(),
) -> AppTree | None:
    """The application's tree (None if its name is in `skip`), or BusError if it does not answer."""
    root: Ref = (bus_name, ROOT_PATH)
    app_name = str(bus.get(root, ACCESSIBLE, "Name"))
    if app_name in skip:
        return None
    nodes: dict[Ref, RawNode] = {}
    try:
        items = bus.call((bus_name, CACHE_PATH), "org.a11y.atspi.Cache", "GetItems")[0]
    except BusError as exc:
        if exc.timed_out:
            raise
        items = []  # toolkit without the bulk cache: walked below
    for item in items:
        (obj, _app, parent, index, count, ifaces, name, role, _desc, states) = item
        ref = (str(obj[0]), str(obj[1]))
        nodes[ref] = RawNode(
            ref=ref, parent=(str(parent[0]), str(parent[1])), index=int(index),
            child_count=int(count), interfaces=frozenset(_short(i) for i in ifaces),
            name=clean_name(name), role=role_name(int(role)), states=tuple(states),
        )
    by_parent: dict[Ref, list[RawNode]] = {}
    for node in nodes.values():
        if node.parent is not None:
            by_parent.setdefault(node.parent, []).append(node)
    for node in nodes.values():
        node.children = [c.ref for c in sorted(by_parent.get(node.ref, []), key=lambda n: n.index)]
    root_children = [c.ref for c in sorted(by_parent.get(root, []), key=lambda n: n.index)]
    if not root_children:
        root_children = _children_of(bus, [root]).get(root, [])
    tree = AppTree(bus_name=bus_name, name=app_name, nodes={}, windows=root_children)
    _fill_gaps(bus, tree, nodes, max_nodes=max_nodes, max_depth=max_depth)
    # Decided by what the toolkit reports below its windows (GTK 4.8 marks only windows).
    inner = [n for n in tree.nodes.values() if n.ref not in tree.windows]
    tree.visible_means_showing = not any(has_state(n.states, "showing") for n in inner) and any(
        has_state(n.states, "visible") for n in inner)
    for node in tree.nodes.values():
        node.states = tree.shown(node.states)
    tree.options = {ref for combo in tree.nodes.values()
                    if combo.role == "combo box" and has_state(combo.states, "showing")
                    for ref in _option_refs(tree, combo)}
    for ref in tree.options:
        tree.nodes[ref].states = tree.shown(tree.nodes[ref].states, ref)
    _enrich(bus, tree)
    return tree


def _children_of(bus: A11yBus, refs: list[Ref]) -> dict[Ref, list[Ref]]:
    replies = bus.call_many([Call(r, ACCESSIBLE, "GetChildren") for r in refs])
    out: dict[Ref, list[Ref]] = {}
    for ref, reply in zip(refs, replies, strict=True):
        if isinstance(reply, BusError):
            if reply.timed_out:
                raise reply
            continue
        out[ref] = [(str(b), str(p)) for b, p in reply[0]]
    return out


def _describe(bus: A11yBus, refs: list[Ref], parents: dict[Ref, tuple[Ref, int]]) -> list[RawNode]:
    """Read role, name, states, interfaces and child count of objects the bulk cache lacked."""
    calls: list[Call] = []
    for ref in refs:
        calls += [
            Call(ref, ACCESSIBLE, "GetRole"), Call(ref, ACCESSIBLE, "GetState"),
            Call(ref, ACCESSIBLE, "GetInterfaces"),
            Call.reading(ref, ACCESSIBLE, "Name"),
            # The children themselves, not their count: the walk needs them next anyway.
            Call(ref, ACCESSIBLE, "GetChildren"),
        ]
    replies = bus.call_many(calls)
    out = []
    for i, ref in enumerate(refs):
        role, states, ifaces, name, kids = replies[i * 5 : i * 5 + 5]
        if isinstance(role, BusError) and role.timed_out:
            raise role
        if any(isinstance(r, BusError) for r in (role, states, ifaces, name, kids)):
            continue
        assert not isinstance(role, BusError) and not isinstance(states, BusError)
        assert not isinstance(ifaces, BusError) and not isinstance(name, BusError)
        assert not isinstance(kids, BusError)
        parent, index = parents[ref]
        children = [(str(b), str(p)) for b, p in kids[0]]
        out.append(RawNode(
            ref=ref, parent=parent, index=index, child_count=len(children),
            interfaces=frozenset(_short(x) for x in ifaces[0]),
            name=clean_name(name[0]), role=role_name(int(role[0])),
            states=tuple(states[0]), children=children,
        ))
    return out


def _fill_gaps(
    bus: A11yBus, tree: AppTree, known: dict[Ref, RawNode], *, max_nodes: int, max_depth: int,
) -> None:
    """Keep the capped tree reachable from the windows, walking where the bulk cache has holes."""
    level = [r for r in tree.windows]
    parents = {r: ((tree.bus_name, ROOT_PATH), i) for i, r in enumerate(level)}
    depth = 0
    reports_showing = False
    while level and depth <= max_depth:
        missing = [r for r in level if r not in known]
        for raw in _describe(bus, missing, parents) if missing else []:
            known[raw.ref] = raw
        nxt: list[Ref] = []
        walk: list[RawNode] = []
        for ref in level:
            node = known.get(ref)
            if node is None or ref in tree.nodes:  # unreadable, or seen before (a cycle)
                continue
            if len(tree.nodes) >= max_nodes:
                tree.truncated = True
                break
            tree.nodes[ref] = node
            if len(node.children) < node.child_count or has_state(node.states,
                                                                   "manages descendants"):
                walk.append(node)  # the bulk cache leaves out a manager's descendants
        # Whether this toolkit reports `showing` below its windows at all (GTK 4.8 does not).
        reports_showing = reports_showing or any(
            has_state(known[r].states, "showing") for r in level
            if r in known and r not in tree.windows)
        if walk:
            found = _children_of(bus, [n.ref for n in walk])
            for node in walk:
                node.children = found.get(node.ref, node.children)
        for ref in level:
            node = tree.nodes.get(ref)
            if node is None:
                continue
            if node.name and node.role in NAMED_LEAF_ROLES:
                node.inner = tuple(node.children)
                continue  # its children are its name again
            if reports_showing and _off_screen(node, tree):
                continue  # nothing inside is on screen either (a web page's far rows)
            for i, child in enumerate(node.children):
                if child not in tree.nodes:
                    parents.setdefault(child, (ref, i))
                    nxt.append(child)
        level = nxt
        depth += 1
    if level:
        tree.truncated = True
    for node in tree.nodes.values():
        node.children = [c for c in node.children if c in tree.nodes]


def _off_screen(node: RawNode, tree: AppTree) -> bool:
    """Not showing, so neither is anything inside it; a combo box's folded options and a
    window's contents are still wanted."""
    return (not has_state(node.states, "showing") and node.role != "combo box"
            and node.ref not in tree.windows and node.role not in ("menu", "menu bar"))


def _enrich(bus: A11yBus, tree: AppTree) -> None:
    """Actions, values and text, all requested at once; names for unnamed controls."""
    reads = Reads()
    for node in tree.nodes.values():
        if "Action" in node.interfaces and node.role in ACTED_ON:
            reads.add(Call(node.ref, ACTION, "GetActions"), "actions", node)
        for call, kind in value_calls(node):
            reads.add(call, kind, node)
        if not node.name and node.role in NEEDS_LABEL:
            reads.add(Call(node.ref, ACCESSIBLE, "GetRelationSet"), "relations", node)
        elif said_once(node.name) is not None:
            reads.add(Call(node.ref, ACCESSIBLE, "GetRelationSet"), "repeated", node)
        if not node.name and node.role in BUTTON_ROLES:
            # An icon button: its tooltip is what Orca says for it when nothing else names it.
            reads.add(Call.reading(node.ref, ACCESSIBLE, "Description"), "description", node)
        if (where := extents_call(node)) is not None:
            reads.add(where, "bounds", node)
    for kind, node, reply in reads.replies(bus):
        if isinstance(reply, BusError):
            if reply.timed_out:
                raise reply
            continue
        apply_reply(tree, node, kind, reply)
    for node in tree.nodes.values():
        if not node.name and node.role in NAME_FROM_CONTENT:
            node.name = _content_name(tree, node)
        if not node.name and node.description:
            node.name, node.inferred_name = node.description, True
    _name_from_neighbours(tree)


def apply_reply(tree: AppTree, node: RawNode, kind: str, reply: tuple[Any, ...]) -> None:
    if kind == "actions":
        node.actions = tuple(str(a[0]).lower() for a in reply[0])
    elif kind == "value":
        node.value = float(reply[0])
    elif kind == "minimum":
        node.minimum = float(reply[0])
    elif kind == "maximum":
        node.maximum = float(reply[0])
    elif kind == "text":
        node.value = str(reply[0])
    elif kind == "combo":
        chosen = tree.nodes.get((str(reply[0][0]), str(reply[0][1])))
        node.value = chosen.name if chosen is not None else None
    elif kind == "bounds":
        x, y, width, height = (int(v) for v in reply[0])
        node.bounds = (x, y, width, height) if width >= 0 and height >= 0 else None
    elif kind == "description":
        node.description = SHORTCUT_HINT.sub("", clean_name(reply[0]))
    elif kind == "repeated":
        # GTK 4.8 names a widget labelled by its own child by that label and then by its
        # content, the same label again ("= ="): Orca reads the label once, and so do we.
        own = {*node.inner, *node.children}
        for rel_type, targets in reply[0]:
            if int(rel_type) == LABELLED_BY and any((str(b), str(p)) in own for b, p in targets):
                node.name = said_once(node.name) or node.name
                node.label_repeated = True
                return
    elif kind == "relations":
        for rel_type, targets in reply[0]:
            if int(rel_type) == LABELLED_BY and targets:
                label = tree.nodes.get((str(targets[0][0]), str(targets[0][1])))
                if label is not None and label.name:
                    node.name = label.name
                    return


def _content_name(tree: AppTree, node: RawNode, budget: int = 20) -> str:
    """Name from content, as ARIA does for rows and tabs: the text of labels inside."""
    parts: list[str] = []
    stack = list(reversed(node.children))
    while stack and budget > 0:
        child = tree.nodes.get(stack.pop())
        budget -= 1
        if child is None:
            continue
        if child.role in {"label", "static", "text"} and child.name:
            parts.append(child.name)
        stack.extend(reversed(child.children))
    return " ".join(parts)


LABEL_REACH = 250  # pixels: a label farther than this from a field is not its label


def _name_from_neighbours(tree: AppTree) -> None:
    """Name unnamed controls (and combo boxes named only by their choice) from labels.

    As Orca's label inference: the label nearest to the left on the same line, else the nearer
    of the one above and the one just right, from the extents already read;
    where nothing on screen is known, the label just before the control among its siblings.
    Own text children repeating their parent's name (a link's text) are emptied, so one thing
    on screen is one candidate.
    """
    labels = [n for n in tree.nodes.values()
              if n.role in LABEL_TEXT_ROLES and n.name and n.bounds is not None
              and "EditableText" not in n.interfaces and not _inside_control(tree, n)]
    for node in tree.nodes.values():
        for ref in node.children:
            child = tree.nodes.get(ref)
            if (child is not None and node.name and child.role in LABEL_TEXT_ROLES
                    and child.name == node.name and not child.children):
                child.name = ""
        for i, ref in enumerate(node.children):
            child = tree.nodes.get(ref)
            if child is None or child.role not in NEEDS_LABEL:
                continue
            by_choice = child.role == "combo box" and bool(child.name) and (
                child.name == child.value or child.name in _choices(tree, child))
            if child.name and not by_choice:
                continue
            label = _nearest_label(child, labels) if child.bounds is not None else None
            if label is None and i > 0:
                before = tree.nodes.get(node.children[i - 1])
                if before is not None and before.role == "label" and before.name:
                    label = before.name
            if label is not None:
                child.name, child.inferred_name = label, True


def _inside_control(tree: AppTree, node: RawNode) -> bool:
    """A control's own text ("File" inside the File menu) names that control, never another
    one beside it."""
    parent = tree.nodes.get(node.parent) if node.parent is not None else None
    return parent is not None and parent.role in NAMED_BY_CONTENT_ROLES | {"menu"}


def _option_refs(tree: AppTree, combo: RawNode) -> list[Ref]:
    """A combo box's options: the children of its list or menu."""
    out = []
    for ref in combo.children:
        holder = tree.nodes.get(ref)
        out += [r for r in (holder.children if holder else []) if r in tree.nodes]
    return out


def _choices(tree: AppTree, combo: RawNode) -> set[str]:
    """Names of a combo box's options."""
    return {tree.nodes[r].name for r in _option_refs(tree, combo) if tree.nodes[r].name}


def _nearest_label(field: RawNode, labels: list[RawNode]) -> str | None:
    assert field.bounds is not None
    fx, fy, fw, fh = field.bounds
    best: tuple[int, int, str] | None = None
    for label in labels:
        assert label.bounds is not None
        lx, ly, lw, lh = label.bounds
        same_line = ly < fy + fh and fy < ly + lh
        overlap_x = lx < fx + fw and fx < lx + lw
        if same_line and lx + lw <= fx + 4:
            rank, gap = 0, fx - (lx + lw)  # to the left
        elif overlap_x and ly + lh <= fy + 4:
            rank, gap = 1, fy - (ly + lh)  # above
        elif same_line and lx >= fx + fw - 4:
            rank, gap = 1, lx - (fx + fw)  # to the right, where a check box's label goes
        else:
            continue
        if gap > LABEL_REACH:
            continue
        if best is None or (rank, gap) < (best[0], best[1]):
            best = (rank, gap, label.name)
    return best[2] if best is not None else None
