"""The live screen as a `Snapshot`, cached and kept fresh by AT-SPI events.

Structural events (children changed, objects added or removed) refetch that application; state,
property, value and text events re-read just the object they name. With no events since the last
snapshot, the cached snapshot is returned as is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from appliance.desktop.atspi.bus import (
    ACCESSIBLE,
    REGISTRY,
    ROOT_PATH,
    A11yBus,
    BusError,
    Call,
    Ref,
)
from appliance.desktop.atspi.tree import (
    TEXT,
    AppTree,
    RawNode,
    Reads,
    apply_reply,
    clean_name,
    extents_call,
    fetch_app,
    said_once,
    value_calls,
)
from appliance.desktop.atspi.vocabulary import has_state, state_names
from appliance.desktop.model import REDACTED, ElementState, Node, Snapshot
from appliance.desktop.roles import SECRET_ROLES
from appliance.panel.state import PANEL_APP_NAME

HIDDEN_APPS = frozenset({PANEL_APP_NAME})
"""Applications never shown in a snapshot: the appliance's own status panel, if it is bridged."""

STRUCTURAL = frozenset({"ChildrenChanged", "AddAccessible", "RemoveAccessible"})
NODE_EVENTS = frozenset(
    {"StateChanged", "PropertyChange", "TextChanged", "ValueChanged", "SelectionChanged",
     "TextCaretMoved", "BoundsChanged"}
)


@dataclass
class AppView:
    """One application as the snapshot shows it: its model nodes and how to reach them."""

    index: int
    tree: AppTree
    nodes: list[Node] = field(default_factory=list)
    ref_of: dict[str, Ref] = field(default_factory=dict)
    id_of: dict[Ref, str] = field(default_factory=dict)
    position: dict[str, int] = field(default_factory=dict)  # node id -> index in `nodes`

    def update(self, raws: list[RawNode]) -> None:
        """Replace the model nodes of re-read objects, leaving the rest as they are."""
        for raw in raws:
            node_id = self.id_of.get(raw.ref)
            if node_id is None or node_id not in self.position:
                continue
            i = self.position[node_id]
            old = self.nodes[i]
            self.nodes[i] = to_node(raw, node_id, old.parent_id, old.app, old.window,
                                    old.child_ids)


class Screen:
    """Snapshots of every application on the accessibility bus."""

    def __init__(
        self, bus: A11yBus, *, max_nodes: int = 20_000, max_depth: int = 60,
        launchable: tuple[str, ...] = (),
    ) -> None:
        self.bus = bus
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.launchable = launchable
        self.apps: dict[str, AppView] = {}
        self.app_order: list[str] = []
        self.not_answering: dict[str, str] = {}  # bus name -> application name
        self.gone: dict[str, str] = {}  # bus name -> name of an app that left while being read
        self.aliases: dict[str, str] = {}  # bus name -> .desktop name of an app we launched
        self.hidden: set[str] = set()  # bus names of HIDDEN_APPS: neither read nor listened to
        self._stale_apps: set[str] = set()
        self._stale_nodes: set[Ref] = set()
        self._list_stale = True
        self._cached: Snapshot | None = None
        bus.listen(self._on_event)

    # -- events --------------------------------------------------------------------------

    def _on_event(self, sender: str, path: str, iface: str, signal: str, _args: Any) -> None:
        if sender in self.hidden:
            return  # the panel redraws on every turn; that must not cost a snapshot
        if sender not in self.apps:
            self._list_stale = True  # a new application, or the registry's list changed
        elif signal in STRUCTURAL:
            self._stale_apps.add(sender)
        elif signal in NODE_EVENTS or iface.endswith("Focus"):
            self._stale_nodes.add((sender, path))
        self._cached = None

    # -- reading -------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        self.bus.pump()
        if self._cached is not None:
            return self._cached
        if self._list_stale:
            self._refresh_app_list()
        for bus_name in list(self._stale_apps):
            self._fetch(bus_name)
        self._stale_apps.clear()
        if self._stale_nodes:
            self._reread_nodes(self._stale_nodes)
            self._stale_nodes.clear()
        self._cached = self._assemble()
        return self._cached

    def invalidate(self, bus_name: str | None = None) -> None:
        if bus_name is None:
            self._list_stale = True
            self._stale_apps.update(self.apps)
        else:
            self._stale_apps.add(bus_name)
        self._cached = None

    def _refresh_app_list(self) -> None:
        try:
            reply = self.bus.call((REGISTRY, ROOT_PATH), ACCESSIBLE, "GetChildren")
        except BusError:
            return
        names = [str(bus_name) for bus_name, _path in reply[0]]
        for gone in set(self.apps) - set(names):
            if gone not in self.hidden:
                self.gone[gone] = self.apps[gone].tree.name  # said once, by problems()
            del self.apps[gone]
        for gone in set(self.not_answering) - set(names):
            del self.not_answering[gone]
        self.hidden &= set(names)
        names = [n for n in names if n not in self.hidden]
        self.app_order = names
        for bus_name in names:
            if bus_name not in self.apps or bus_name in self.not_answering:
                self._stale_apps.add(bus_name)
        self._list_stale = False

    def _fetch(self, bus_name: str) -> None:
        try:
            tree = fetch_app(self.bus, bus_name, max_nodes=self.max_nodes,
                             max_depth=self.max_depth, skip=HIDDEN_APPS)
        except BusError as exc:
            if exc.timed_out:
                known = self.not_answering.get(bus_name) or self._guess_name(bus_name)
                self.not_answering[bus_name] = known
            elif exc.gone:
                self.gone.setdefault(bus_name, self._guess_name(bus_name))
            self.apps.pop(bus_name, None)
            return
        self.not_answering.pop(bus_name, None)
        if tree is None:
            self.hidden.add(bus_name)
            self.apps.pop(bus_name, None)
            return
        tree.name = self.aliases.get(bus_name, tree.name)
        index = self.app_order.index(bus_name) if bus_name in self.app_order else len(self.apps)
        view = AppView(index=index, tree=tree)
        self._build(view)
        self.apps[bus_name] = view

    def _guess_name(self, bus_name: str) -> str:
        view = self.apps.get(bus_name)
        return view.tree.name if view is not None else self.aliases.get(
            bus_name, "An application")

    def _reread_nodes(self, refs: set[Ref]) -> None:
        by_app: dict[str, list[RawNode]] = {}
        for ref in refs:
            view = self.apps.get(ref[0])
            raw = view.tree.nodes.get(ref) if view is not None else None
            if raw is not None:
                by_app.setdefault(ref[0], []).append(raw)
        for bus_name, raws in by_app.items():
            view = self.apps[bus_name]
            try:
                refresh_raw(self.bus, view.tree, raws)
            except BusError:
                self._stale_apps.add(bus_name)
                continue
            view.update(raws)
        for bus_name in list(self._stale_apps):
            self._fetch(bus_name)
        self._stale_apps.clear()

    def _build(self, view: AppView) -> None:
        """Model nodes in document order with child-index path ids: app.window.i.j."""
        tree = view.tree
        view.nodes, view.ref_of, view.id_of, view.position = [], {}, {}, {}
        for w, window_ref in enumerate(tree.windows):
            window = tree.nodes.get(window_ref)
            if window is None:
                continue
            stack: list[tuple[Ref, str, str | None]] = [
                (ref, f"{view.index}.{w}.{i}", None) for i, ref in enumerate(window.children)
            ]
            stack.reverse()
            while stack:
                ref, node_id, parent = stack.pop()
                raw = tree.nodes[ref]
                kids = [(c, f"{node_id}.{i}", node_id) for i, c in enumerate(raw.children)]
                view.nodes.append(to_node(raw, node_id, parent, tree.name, window.name,
                                          tuple(k[1] for k in kids)))
                view.ref_of[node_id] = ref
                view.id_of[ref] = node_id
                view.position[node_id] = len(view.nodes) - 1
                stack.extend(reversed(kids))
            view.ref_of[f"{view.index}.{w}"] = window_ref
            view.id_of[window_ref] = f"{view.index}.{w}"

    def _assemble(self) -> Snapshot:
        views = sorted(self.apps.values(), key=lambda v: v.index)
        active_app = active_window = None
        for view in views:
            for ref in view.tree.windows:
                window = view.tree.nodes.get(ref)
                if window is not None and "active" in state_names(window.states):
                    active_app, active_window = view.tree.name, window.name
        if active_app is None:
            first = next((v for v in views if v.tree.windows), None)
            window = first.tree.nodes.get(first.tree.windows[0]) if first else None
            if first is not None and window is not None:
                active_app, active_window = first.tree.name, window.name
        running = tuple(v.tree.name for v in views)
        return Snapshot(
            nodes=tuple(n for v in views for n in v.nodes),
            applications=running,
            launchable=tuple(n for n in self.launchable if n not in running),
            active_app=active_app,
            active_window=active_window,
        )

    # -- addressing ----------------------------------------------------------------------

    def resolve(self, node_id: str) -> tuple[AppView, Ref, RawNode]:
        """The live object behind a snapshot id; KeyError if it is gone."""
        self.snapshot()
        for view in self.apps.values():
            ref = view.ref_of.get(node_id)
            if ref is not None:
                return view, ref, view.tree.nodes[ref]
        raise KeyError(node_id)

    def locate(self, node_id: str) -> tuple[int, int, int, int] | None:
        """Where an element is on screen now, read afresh.

        GTK sends no event when a window moves, so bounds in a snapshot can be old; the scan
        highlight asks here just before it is drawn. None if the element is gone or not shown.
        """
        try:
            view, _ref, raw = self.resolve(node_id)
            refresh_raw(self.bus, view.tree, [raw])
        except (KeyError, BusError):
            return None
        view.update([raw])
        self._cached = None
        return raw.bounds

    def read_state(self, view: AppView, raws: list[RawNode]) -> dict[Ref, ElementState]:
        """Fresh state of objects, read straight from the application (not from the cache)."""
        refresh_raw(self.bus, view.tree, raws)
        view.update(raws)
        self._cached = None
        return {raw.ref: element_state(raw) for raw in raws}


def refresh_raw(bus: A11yBus, tree: AppTree, raws: list[RawNode]) -> None:
    """Re-read states, names, values and text of some objects, pipelined."""
    reads = Reads()
    for raw in raws:
        reads.add(Call(raw.ref, ACCESSIBLE, "GetState"), "states", raw)
        reads.add(Call.reading(raw.ref, ACCESSIBLE, "Name"), "name", raw)
        values = value_calls(raw)
        for call, kind in values:
            reads.add(call, kind, raw)
        if not values and raw.role in SECRET_ROLES:
            # Only the length of a secret is read, never its characters.
            reads.add(Call.reading(raw.ref, TEXT, "CharacterCount"), "secret", raw)
        if (where := extents_call(raw)) is not None:
            reads.add(where, "bounds", raw)
    for kind, raw, reply in reads.replies(bus):
        if isinstance(reply, BusError):
            if kind in OPTIONAL_READS and not reply.timed_out and not reply.gone:
                continue  # nothing chosen yet; no extents to give; no bounds to a value
            raise reply
        if kind == "states":
            raw.states = tree.shown(tuple(reply[0]), raw.ref)
        elif kind == "name":
            # A type name read again ("GtkButton") is no name: the one found for it stays.
            name = clean_name(reply[0])
            if name and not raw.inferred_name:
                raw.name = (said_once(name) or name) if raw.label_repeated else name
        elif kind == "secret":
            raw.value = REDACTED if int(reply[0]) else ""
        else:
            apply_reply(tree, raw, kind, reply)
    for raw in raws:
        if not has_state(raw.states, "showing"):
            raw.bounds = None  # hidden since it was last read: it has no place on screen


OPTIONAL_READS = frozenset({"combo", "bounds", "minimum", "maximum"})


def shown_value(raw: RawNode) -> str | float | None:
    if raw.role in SECRET_ROLES:
        return raw.value if raw.value in ("", REDACTED) else None
    return raw.value


def to_node(
    raw: RawNode, node_id: str, parent: str | None, app: str, window: str,
    child_ids: tuple[str, ...],
) -> Node:
    secret = raw.role in SECRET_ROLES
    return Node(
        id=node_id, role=raw.role, name=raw.name, app=app, window=window, parent_id=parent,
        value=shown_value(raw), states=state_names(raw.states),
        minimum=None if secret else raw.minimum, maximum=None if secret else raw.maximum,
        actions=raw.actions, child_ids=child_ids, bounds=raw.bounds,
    )


def element_state(raw: RawNode) -> ElementState:
    return ElementState(value=shown_value(raw), states=state_names(raw.states))


def wait_until(check: Any, deadline: float, step: float = 0.02) -> bool:
    """Poll `check()` until it is true or the monotonic deadline passes."""
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)
