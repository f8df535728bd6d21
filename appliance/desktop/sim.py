"""The sim desktop: a scene held in memory that behaves like a screen, for tests and the demo."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

from appliance.desktop.marks import node_at
from appliance.desktop.model import (
    Action,
    ActionResult,
    DesktopError,
    ElementState,
    Node,
    Snapshot,
)
from appliance.desktop.roles import TOGGLE_ROLES
from appliance.desktop.scene import Scene, SceneApp, SceneElement, load_scene, save_scene

SCROLL_KEYS = {"up": "Page_Up", "down": "Page_Down", "left": "Left", "right": "Right"}
ROW, INDENT, WIDTH = 30, 20, 400
"""The sim lays each window out as rows, one element a row, children indented under their
parent, so numbers, the grid and clicks at a point have somewhere to be."""


def app_key(name: str) -> str:
    return f"app:{name}"


class SimDesktop:
    """Implements the scene semantics of docs/architecture.md; `save()` writes the scene back."""

    def __init__(self, scene: Scene, path: Path | None = None) -> None:
        self.scene = scene
        self.path = path
        self._ids: dict[str, SceneElement] | None = None  # rebuilt when applications change

    @classmethod
    def from_file(cls, path: Path) -> SimDesktop:
        return cls(load_scene(path), path)

    def save(self) -> None:
        if self.path is not None:
            save_scene(self.scene, self.path)

    # -- reading -------------------------------------------------------------------------

    def _walk(self) -> Iterator[tuple[str, str, str, str | None, SceneElement]]:
        """(id, app, window, parent id, element) for every element, depth first."""
        for a, app in enumerate(self.scene.applications):
            for w, window in enumerate(app.windows):
                stack: list[tuple[str, str | None, SceneElement]] = [
                    (f"{a}.{w}.{i}", None, el) for i, el in enumerate(window.children)
                ]
                stack.reverse()
                while stack:
                    node_id, parent, el = stack.pop()
                    yield node_id, app.name, window.title, parent, el
                    kids = [(f"{node_id}.{i}", node_id, c) for i, c in enumerate(el.children)]
                    stack.extend(reversed(kids))

    def _element(self, node_id: str) -> SceneElement:
        if self._ids is None:
            self._ids = {nid: el for nid, _app, _win, _parent, el in self._walk()}
        el = self._ids.get(node_id)
        if el is None:
            raise DesktopError("That element is no longer on the screen.")
        return el

    def _active(self) -> tuple[str | None, str | None]:
        for app in self.scene.applications:
            for window in app.windows:
                if "active" in window.states:
                    return app.name, window.title
        for app in self.scene.applications:
            if app.windows:
                return app.name, app.windows[0].title
        return None, None

    def _layout(self) -> dict[str, tuple[int, int, int, int]]:
        """Each element's box: its own row and the rows of everything inside it."""
        boxes: dict[str, tuple[int, int, int, int]] = {}
        rows: dict[tuple[str, str], int] = {}
        parents: dict[str, str | None] = {}
        for nid, app, window, parent, _el in self._walk():
            row = rows.get((app, window), 0)
            rows[(app, window)] = row + 1
            depth = nid.count(".") - 2
            boxes[nid] = (INDENT * depth, ROW * row, WIDTH - INDENT * depth, ROW)
            parents[nid] = parent
            up = parent
            while up is not None:  # a container reaches down to its last row
                x, y, w, _h = boxes[up]
                boxes[up] = (x, y, w, ROW * (row + 1) - y)
                up = parents[up]
        return boxes

    def snapshot(self) -> Snapshot:
        active_app, active_window = self._active()
        boxes = self._layout()
        # model_construct: the scene was validated when it was loaded, and this runs per turn.
        nodes = [
            Node.model_construct(
                id=nid,
                role=el.role,
                name=el.name,
                app=app,
                window=window,
                parent_id=parent,
                value=el.value,
                states=frozenset(el.states),
                risk=el.risk,
                minimum=el.min,
                maximum=el.max,
                actions=("click",) if not el.children else (),
                child_ids=tuple(f"{nid}.{i}" for i in range(len(el.children))),
                bounds=boxes[nid],
            )
            for nid, app, window, parent, el in self._walk()
        ]
        return Snapshot(
            nodes=tuple(nodes),
            applications=tuple(a.name for a in self.scene.applications),
            launchable=tuple(a.name for a in self.scene.launchable),
            active_app=active_app,
            active_window=active_window,
            keystrokes=tuple(self.scene.keystrokes),
        )

    def problems(self) -> list[str]:
        return []  # a scene always answers

    def state_of(self, key: str) -> ElementState:
        if key.startswith("app:"):
            running = any(a.name == key[4:] for a in self.scene.applications)
            return ElementState(running=running)
        el = self._element(key)
        return ElementState(value=el.value, states=frozenset(el.states), activations=el.activations)

    # -- acting --------------------------------------------------------------------------

    def perform(self, action: Action) -> ActionResult:
        if action.kind == "click_at":
            # Whatever is under the point gets the click, whatever the planner thought was there.
            x, y = action.point or (-1, -1)
            hit = node_at(self.snapshot(), x, y)
            if hit is None:
                return ActionResult(detail="clicked; nothing there")
            action = action.model_copy(update={"kind": "activate", "target": hit.id})
        touched = self._touched(action)
        before = {k: self.state_of(k) for k in touched}
        if action.target and not action.target.startswith("app:") and action.kind != "open_app":
            delay = self._element(action.target).delay
            if delay:
                time.sleep(delay)  # models a slow application; the crash test kills us here
        detail = self._apply(action)
        after = {k: self.state_of(k) for k in touched}
        return ActionResult(
            before=before, after=after, verified=self._verify(action, after), detail=detail
        )

    def _touched(self, action: Action) -> list[str]:
        if action.kind == "restore":
            return list(action.restore or {})
        if action.kind == "open_app":
            return [app_key(action.target or "")]
        if action.target is None:
            return []
        el = self._element(action.target)
        if action.kind == "select":
            return self._siblings(action.target)
        if action.kind == "focus":
            return [
                nid for nid, *_r, e in self._walk() if "focused" in e.states or nid == action.target
            ]
        if action.kind == "activate" and el.effect:
            names = set(el.effect.set)
            others = [
                nid for nid, *_r, e in self._walk() if e.name in names and nid != action.target
            ]
            return [action.target, *others]
        return [action.target]

    def _apply(self, action: Action) -> str:
        match action.kind:
            case "activate":
                return self._activate(action.target or "")
            case "type_text":
                return self._type(action.target, action.text or "")
            case "press_key":
                self.scene.keystrokes.append(action.key or "")
                return f"pressed {action.key}"
            case "open_app":
                return self._open(action.target or "")
            case "focus":
                for _nid, *_r, el in self._walk():
                    if "focused" in el.states:
                        el.states.remove("focused")
                self._element(action.target or "").states.append("focused")
                return "focused"
            case "scroll":
                self.scene.keystrokes.append(SCROLL_KEYS[action.direction or "down"])
                return f"scrolled {action.direction}"
            case "set_value":
                return self._set_value(action.target or "", action.value)
            case "select":
                return self._select(action.target or "")
            case "restore":
                for key, state in (action.restore or {}).items():
                    self._put(key, state)
                return "restored"
        raise DesktopError(f"The sim cannot {action.kind}.")  # pragma: no cover

    def _activate(self, node_id: str) -> str:
        el = self._element(node_id)
        el.activations += 1
        if el.effect:
            for nid, *_r, other in list(self._walk()):
                change = el.effect.set.get(other.name)
                if change is None or nid == node_id:
                    continue
                if change.value is not None:
                    other.value = change.value
                if change.states is not None:
                    other.states = list(change.states)
        return "activated"

    def _type(self, node_id: str | None, text: str) -> str:
        if node_id is None:
            raise DesktopError("No text field has the focus.")
        el = self._element(node_id)
        old = el.value if isinstance(el.value, str) else ""
        # Typing inserts at the caret, which is at the end of a field just focused; a space
        # keeps dictated phrases apart ("type hello", "type grandma" -> "hello grandma").
        sep = " " if old and not old.endswith(" ") and el.role != "password text" else ""
        el.value = old + sep + text
        return "typed"

    def _open(self, name: str) -> str:
        app = next((a for a in self.scene.launchable if a.name == name), None)
        if app is None:
            if any(a.name == name for a in self.scene.applications):
                self._activate_window(name)
                return "already open"
            raise DesktopError(f"{name} cannot be opened here.")
        self.scene.launchable.remove(app)
        self.scene.applications.append(app)
        self._ids = None
        self._activate_window(name)
        return "opened"

    def _activate_window(self, app_name: str) -> None:
        for app in self.scene.applications:
            for i, window in enumerate(app.windows):
                if "active" in window.states:
                    window.states.remove("active")
                if app.name == app_name and i == 0:
                    window.states.append("active")

    def _close(self, name: str) -> None:
        app = next((a for a in self.scene.applications if a.name == name), None)
        if app is not None:
            self.scene.applications.remove(app)
            self._ids = None
            for window in app.windows:
                if "active" in window.states:
                    window.states.remove("active")
            self.scene.launchable.append(SceneApp.model_validate(app.model_dump()))

    def _set_value(self, node_id: str, value: str | float | bool | None) -> str:
        el = self._element(node_id)
        if el.role in TOGGLE_ROLES or isinstance(value, bool):
            on = bool(value)
            if on and "checked" not in el.states:
                el.states.append("checked")
            if not on and "checked" in el.states:
                el.states.remove("checked")
            return "checked" if on else "unchecked"
        if el.role == "slider":
            number = float(value)  # type: ignore[arg-type]
            lo, hi = el.min if el.min is not None else 0.0, el.max if el.max is not None else 100.0
            if not lo <= number <= hi:
                raise DesktopError(f"{el.name} goes from {lo:g} to {hi:g}.")
            el.value = number
            return "set"
        if el.role == "combo box" and el.children:
            names = {c.name.casefold(): c.name for c in el.children}
            chosen = names.get(str(value).casefold())
            if chosen is None:
                raise DesktopError(f"{el.name} has no choice {value}.")
            el.value = chosen
            for child in el.children:
                states = [s for s in child.states if s != "selected"]
                child.states = [*states, "selected"] if child.name == chosen else states
            return "set"
        el.value = value if isinstance(value, str | float) else str(value)
        return "set"

    def _siblings(self, node_id: str) -> list[str]:
        """The node and the others under the same parent (or window), in order."""
        self._element(node_id)
        assert self._ids is not None
        parent = node_id.rsplit(".", 1)[0]
        return [nid for nid in self._ids if nid.rsplit(".", 1)[0] == parent]

    def _select(self, node_id: str) -> str:
        for nid in self._siblings(node_id):
            el = self._element(nid)
            if nid != node_id and "selected" in el.states:
                el.states.remove("selected")
        el = self._element(node_id)
        if "selected" not in el.states:
            el.states.append("selected")
        return "selected"

    def _put(self, key: str, state: ElementState) -> None:
        if key.startswith("app:"):
            name = key[4:]
            running = any(a.name == name for a in self.scene.applications)
            if state.running and not running:
                self._open(name)
            elif state.running is False and running:
                self._close(name)
            return
        el = self._element(key)
        el.value = state.value
        el.states = sorted(state.states)
        el.activations = state.activations

    # -- verification --------------------------------------------------------------------

    def _verify(self, action: Action, after: dict[str, ElementState]) -> bool:
        """Read back what the action should have changed."""
        target = after.get(action.target or "") if action.target else None
        match action.kind:
            case "type_text":
                return target is not None and str(target.value or "").endswith(action.text or "")
            case "set_value" if isinstance(action.value, bool) and target is not None:
                return ("checked" in target.states) == action.value
            case "select":
                return target is not None and "selected" in target.states
            case "focus":
                return target is not None and "focused" in target.states
            case "open_app":
                return after[app_key(action.target or "")].running is True
            case "restore":
                return all(
                    (after[k].value, after[k].states, after[k].running)
                    == (v.value, v.states, v.running if k.startswith("app:") else None)
                    for k, v in (action.restore or {}).items()
                )
        return True
