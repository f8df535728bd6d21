"""The AT-SPI desktop: the sim's behaviour on a real screen, uinput where AT-SPI cannot reach.

Every action goes through the interface made for it (Action, EditableText, Value, Selection,
Component), then the touched objects are read back from the application to verify it.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from appliance.desktop.atspi.bus import PROPERTIES, A11yBus, BusError, Ref
from appliance.desktop.atspi.gi_modules import GLib
from appliance.desktop.atspi.launcher import Launcher, bus_pid, deadline_after
from appliance.desktop.atspi.screen import AppView, Screen, element_state, wait_until
from appliance.desktop.atspi.synth import SyntheticInput
from appliance.desktop.atspi.tree import (
    ACTION,
    COMPONENT,
    EDITABLE,
    SELECTION,
    TEXT,
    VALUE,
    RawNode,
    apply_reply,
)
from appliance.desktop.atspi.vocabulary import state_names
from appliance.desktop.model import (
    REDACTED,
    Action,
    ActionResult,
    DesktopError,
    ElementState,
    Snapshot,
)
from appliance.desktop.roles import SECRET_ROLES, SELECTABLE_ROLES, TOGGLE_ROLES
from appliance.desktop.uinput.keymap import parse_chord, text_strokes

PREFERRED_ACTIONS = ("click", "press", "activate", "toggle", "switch", "jump", "select")
SCROLL_KEYS = {"up": "Page_Up", "down": "Page_Down", "left": "Left", "right": "Right"}


@dataclass
class Target:
    node_id: str
    view: AppView
    ref: Ref
    raw: RawNode

    @property
    def app(self) -> str:
        return self.view.tree.name


class AtspiDesktop:
    """Implements the `Desktop` protocol over AT-SPI (and uinput for keys, typing, clicks)."""

    def __init__(
        self, bus: A11yBus, launcher: Launcher | None = None, *, open_timeout: float = 15.0,
        max_nodes: int = 20_000, max_depth: int = 60, use_uinput: bool = True,
    ) -> None:
        self.bus = bus
        self.launcher = launcher or Launcher([])
        self.screen = Screen(bus, max_nodes=max_nodes, max_depth=max_depth,
                             launchable=self.launcher.names())
        self.open_timeout = open_timeout
        self.settle_timeout = 0.5
        self._keyboard: Any = None
        self._pointer: Any = None
        self._uinput = use_uinput
        self._synth = SyntheticInput(bus)

    # -- the protocol --------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        return self.screen.snapshot()

    def problems(self) -> list[str]:
        """Spoken notes about applications that stopped answering or left while being read."""
        gone = [f"{name} has closed." for name in self.screen.gone.values()]
        self.screen.gone.clear()  # said once
        return gone + [f"{name} is not responding."
                       for name in self.screen.not_answering.values()]

    def perform(self, action: Action) -> ActionResult:
        match action.kind:
            case "open_app":
                return self._open(action.target or "")
            case "press_key":
                return self._press_key(action.key or "")
            case "restore":
                return self._restore(action.restore or {})
            case "type_text":
                return self._type(action.target, action.text or "")
            case "scroll":
                return self._scroll(action.target, action.direction or "down")
            case "click_at":
                return self._click_at(action.point, action.target)
        if action.target is None:
            raise DesktopError("Which element do you mean?")
        target = self._target(action.target)
        with self._answering(target.app):
            match action.kind:
                case "activate":
                    return self._activate(target)
                case "focus":
                    return self._focus(target)
                case "set_value":
                    return self._set_value(target, action.value)
                case "select":
                    return self._select(target)
        raise DesktopError(f"I can't {action.kind} here.")

    # -- addressing and reading ----------------------------------------------------------

    def _target(self, node_id: str, *, enabled: bool = True) -> Target:
        try:
            view, ref, raw = self.screen.resolve(node_id)
        except KeyError:
            hung = ", ".join(self.screen.not_answering.values())
            if hung:
                raise DesktopError(f"{hung} is not responding.") from None
            gone = ", ".join(self.screen.gone.values())
            if gone:
                raise DesktopError(f"{gone} has closed.") from None
            raise DesktopError("That element is no longer on the screen.") from None
        if enabled and "insensitive" in state_names(raw.states):
            raise DesktopError(f"{raw.name or 'That element'} is disabled.")
        return Target(node_id, view, ref, raw)

    @contextmanager
    def _answering(self, app: str) -> Iterator[None]:
        """Turn bus failures into short spoken errors."""
        try:
            yield
        except BusError as exc:
            if exc.timed_out:
                self.screen.invalidate()
                raise DesktopError(f"{app} is not responding.") from None
            if exc.gone:
                self.screen.invalidate()
                raise DesktopError(f"{app} has closed.") from None
            raise DesktopError(f"{app} did not accept that.") from None

    def _states(self, view: AppView, ids: list[str]) -> dict[str, ElementState]:
        raws = [view.tree.nodes[view.ref_of[i]] for i in ids]
        by_ref = self.screen.read_state(view, raws)
        return {i: by_ref[view.ref_of[i]] for i in ids}

    def _settle(
        self, view: AppView, ids: list[str], check: Callable[[dict[str, ElementState]], bool],
    ) -> dict[str, ElementState]:
        """Read back until `check` holds or the settle deadline passes (toolkits apply some
        changes on their next main-loop turn)."""
        deadline = deadline_after(self.settle_timeout)
        states = self._states(view, ids)
        while not check(states) and time.monotonic() < deadline:
            time.sleep(0.02)
            states = self._states(view, ids)
        return states

    def _result(
        self, before: dict[str, ElementState], after: dict[str, ElementState], ok: bool,
        detail: str, via: str = "atspi",
    ) -> ActionResult:
        return ActionResult(before=before, after=after, verified=ok, via=via, detail=detail)

    def _actions(self, t: Target) -> tuple[str, ...]:
        """The element's actions, read now if the snapshot left them out (it reads them only
        for controls: asking every static text of a web page doubles a cold read)."""
        if not t.raw.actions and "Action" in t.raw.interfaces:
            apply_reply(t.view.tree, t.raw, "actions", self.bus.call(t.ref, ACTION, "GetActions"))
        return t.raw.actions

    def _call(self, target: Target | Ref, iface: str, method: str, args: Any = None) -> Any:
        ref = target.ref if isinstance(target, Target) else target
        reply = self.bus.call(ref, iface, method, args)
        return reply[0] if reply else None

    def _set_prop(self, target: Target, iface: str, name: str, value: Any) -> None:
        self.bus.call(target.ref, PROPERTIES, "Set", GLib.Variant("(ssv)", (iface, name, value)))

    # -- activate / focus ----------------------------------------------------------------

    def _activate(self, t: Target) -> ActionResult:
        before = self._states(t.view, [t.node_id])
        if self._actions(t):
            index = _pick_action(t.raw.actions)
            ok = bool(self._call(t, ACTION, "DoAction", GLib.Variant("(i)", (index,))))
            try:
                after = self._states(t.view, [t.node_id])
            except BusError:
                if not ok:
                    raise
                # Accepted, then gone: an OK or Close button takes its window (or its whole
                # program, as a dialog tool does) with it. That is the press working.
                self.screen.invalidate()
                return self._result(before, {}, True, "activated; its window closed")
            detail = "activated" if ok else f"{t.raw.name} ignored {t.raw.actions[index]}"
            return self._result(before, after, ok, detail)
        if "Component" in t.raw.interfaces:
            x, y, w, h = self._call(t, COMPONENT, "GetExtents", GLib.Variant("(u)", (0,)))
            pointer, via = self._clicks()
            pointer.click(x + w // 2, y + h // 2)
            after = self._states(t.view, [t.node_id])
            return self._result(before, after, True, "clicked", via=via)
        raise DesktopError(f"{t.raw.name or 'That element'} can't be pressed.")

    def _click_at(self, point: tuple[int, int] | None, node_id: str | None) -> ActionResult:
        """A click at a point of the grid; what was under it is read before and after, when
        anything known was."""
        if point is None:
            raise DesktopError("Where should I click?")
        t = self._target(node_id, enabled=False) if node_id else None
        before = self._states(t.view, [t.node_id]) if t else {}
        pointer, via = self._clicks()
        pointer.click(*point)
        if t is None:
            self.screen.invalidate()
            return self._result(before, {}, True, f"clicked at {point[0]},{point[1]}", via=via)
        try:
            after = self._states(t.view, [t.node_id])
        except BusError:  # the click closed what it landed on: that is the click working
            self.screen.invalidate()
            return self._result(before, {}, True, "clicked; its window closed", via=via)
        self.screen.invalidate()
        return self._result(before, after, True, f"clicked at {point[0]},{point[1]}", via=via)

    def _focus(self, t: Target) -> ActionResult:
        focused = [n.id for n in self.snapshot().nodes
                   if "focused" in n.states and n.id in t.view.ref_of and n.id != t.node_id]
        ids = [*focused, t.node_id]
        before = self._states(t.view, ids)
        if "Component" not in t.raw.interfaces:
            raise DesktopError(f"{t.raw.name or 'That element'} can't take the focus.")
        self._call(t, COMPONENT, "GrabFocus")
        after = self._settle(t.view, ids, lambda a: "focused" in a[t.node_id].states)
        ok = "focused" in after[t.node_id].states
        return self._result(before, after, ok, "focused" if ok else _observed(after[t.node_id]))

    # -- typing and keys -----------------------------------------------------------------

    def _focused_text(self) -> str:
        snap = self.snapshot()
        for node in snap.in_active_window() or snap.nodes:
            if "focused" in node.states and node.role in {"text", "password text", "entry"}:
                return node.id
        raise DesktopError("No text field has the focus.")

    def _type(self, node_id: str | None, text: str) -> ActionResult:
        t = self._target(node_id or self._focused_text())
        with self._answering(t.app):
            if "EditableText" not in t.raw.interfaces:
                return self._type_by_keys(t, text)
            secret = t.raw.role in SECRET_ROLES
            before = self._states(t.view, [t.node_id])
            count = int(self.bus.get(t.ref, TEXT, "CharacterCount"))
            old = "" if secret else str(t.raw.value or "")
            # Typing goes at the end, with a space between dictated phrases (as the sim does).
            insert = (" " if old and not old.endswith(" ") and not secret else "") + text
            self._call(t, EDITABLE, "InsertText",
                       GLib.Variant("(isi)", (count, insert, len(insert))))
            after = self._states(t.view, [t.node_id])
            if secret:
                grown = int(self.bus.get(t.ref, TEXT, "CharacterCount")) - count
                ok, seen = grown == len(insert), f"{grown} characters arrived"
            else:
                value = str(after[t.node_id].value or "")
                ok, seen = value.endswith(text), f"the field says {value!r}"
            detail = "typed" if ok else f"typing did not arrive: {seen}"
            return self._result(before, after, ok, detail)

    def _type_by_keys(self, t: Target, text: str) -> ActionResult:
        """No EditableText (most web fields): focus it, go to the end (focusing selects all, and
        a key would replace it), type key by key, then read it back."""
        secret = t.raw.role in SECRET_ROLES
        old = "" if secret else str(t.raw.value or "")
        insert = (" " if old and not old.endswith(" ") else "") + text
        text_strokes(insert)  # a character that cannot be typed stops it before any key
        keys, via = self._keys()
        before = self._states(t.view, [t.node_id])
        if "Component" in t.raw.interfaces:
            self._call(t, COMPONENT, "GrabFocus")
            self._settle(t.view, [t.node_id], lambda a: "focused" in a[t.node_id].states)
        keys.press("ctrl+End")
        keys.type(insert)
        if secret or "Text" not in t.raw.interfaces:
            after = self._states(t.view, [t.node_id])
            return self._result(before, after, True, f"typed by keys ({via})", via=via)
        want = old + insert
        after = self._settle(t.view, [t.node_id], lambda a: a[t.node_id].value == want)
        value = str(after[t.node_id].value or "")
        ok = value == want
        seen = f"typing did not arrive: the field says {value!r}"
        return self._result(before, after, ok, f"typed by keys ({via})" if ok else seen, via=via)

    def _press_key(self, chord: str) -> ActionResult:
        parse_chord(chord)  # an unknown key is an error before anything is pressed
        self.snapshot()  # the windows' states as they are now
        if not self._window_has_focus():
            raise DesktopError(f"No window has the focus, so {chord} would go nowhere.")
        keys, via = self._keys()
        keys.press(chord)
        return self._result({}, {}, True, f"pressed {chord}", via=via)

    def _window_has_focus(self) -> bool:
        return any(
            "active" in state_names(view.tree.nodes[ref].states)
            for view in self.screen.apps.values()
            for ref in view.tree.windows
            if ref in view.tree.nodes
        )

    def _keys(self) -> tuple[Any, str]:
        return self._input(self._keyboard_device)

    def _clicks(self) -> tuple[Any, str]:
        return self._input(self._pointer_device)

    def _input(self, uinput_device: Callable[[], Any]) -> tuple[Any, str]:
        """A uinput device and "uinput", else the registry's synthetic input and "atspi" (no
        uinput here: it is not asked again)."""
        if self._uinput:
            try:
                return uinput_device(), "uinput"
            except DesktopError:
                self._uinput = False
        return self._synth, "atspi"

    def _keyboard_device(self) -> Any:
        if self._keyboard is None:
            from appliance.desktop.uinput.devices import VirtualKeyboard

            self._keyboard = VirtualKeyboard()
        return self._keyboard

    def _pointer_device(self) -> Any:
        if self._pointer is None:
            from appliance.desktop.uinput.devices import VirtualPointer

            self._pointer = VirtualPointer()
        return self._pointer

    # -- scroll --------------------------------------------------------------------------

    def _scroll(self, node_id: str | None, direction: str) -> ActionResult:
        bar = self._scroll_bar(node_id, direction)
        if bar is None:
            return self._press_key(SCROLL_KEYS[direction])
        with self._answering(bar.app):
            before = self._states(bar.view, [bar.node_id])
            old = float(bar.raw.value or 0.0)
            lo, hi = bar.raw.minimum or 0.0, bar.raw.maximum or 0.0
            step = max((hi - lo) / 4, 1.0)
            new = min(hi, old + step) if direction in {"down", "right"} else max(lo, old - step)
            self._set_prop(bar, VALUE, "CurrentValue", GLib.Variant("d", new))
            after = self._states(bar.view, [bar.node_id])
            now = float(after[bar.node_id].value or 0.0)
            moved = now > old if direction in {"down", "right"} else now < old
            ok = moved or old == new  # already at the end is not a failure
            return self._result(before, after, ok, f"scrolled {direction}" if ok else
                                f"the scroll bar stayed at {now:g}")

    def _scroll_bar(self, node_id: str | None, direction: str) -> Target | None:
        snap = self.snapshot()
        vertical = direction in {"up", "down"}
        if node_id is not None:
            pane_ids = [node_id]
            node = snap.node(node_id)
            while node is not None and node.parent_id is not None and node.role != "scroll pane":
                node = snap.node(node.parent_id)
                if node is not None:
                    pane_ids.insert(0, node.id)
            scope = pane_ids[0]
        else:
            pane = next((n for n in snap.in_active_window() if n.role == "scroll pane"), None)
            if pane is None:
                return None
            scope = pane.id
        bars = [n for n in snap.nodes if n.role == "scroll bar" and n.id.startswith(scope + ".")
                and ("vertical" in n.states) == vertical and n.maximum]
        return self._target(bars[0].id) if bars else None

    # -- values and selection ------------------------------------------------------------

    def _set_value(self, t: Target, value: str | float | bool | None) -> ActionResult:
        role = t.raw.role
        if role in TOGGLE_ROLES or isinstance(value, bool):
            return self._toggle(t, bool(value))
        if "Value" in t.raw.interfaces:
            return self._set_number(t, value)
        if role == "combo box":
            return self._choose(t, str(value))
        if "EditableText" in t.raw.interfaces and role not in SECRET_ROLES:
            before = self._states(t.view, [t.node_id])
            self._call(t, EDITABLE, "SetTextContents", GLib.Variant("(s)", (str(value),)))
            after = self._states(t.view, [t.node_id])
            ok = after[t.node_id].value == str(value)
            return self._result(before, after, ok, "set" if ok else _observed(after[t.node_id]))
        raise DesktopError(f"{t.raw.name or 'That element'} has no value I can set.")

    def _toggle(self, t: Target, on: bool) -> ActionResult:
        before = self._states(t.view, [t.node_id])
        if ("checked" in before[t.node_id].states) != on:
            if not self._actions(t):
                raise DesktopError(f"{t.raw.name} can't be switched.")
            self._call(t, ACTION, "DoAction",
                       GLib.Variant("(i)", (_pick_action(t.raw.actions),)))
        after = self._settle(t.view, [t.node_id],
                             lambda a: ("checked" in a[t.node_id].states) == on)
        ok = ("checked" in after[t.node_id].states) == on
        word = "checked" if on else "unchecked"
        return self._result(before, after, ok, word if ok else _observed(after[t.node_id]))

    def _set_number(self, t: Target, value: str | float | bool | None) -> ActionResult:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise DesktopError(f"{t.raw.name} needs a number.") from None
        lo = t.raw.minimum if t.raw.minimum is not None else -math.inf
        hi = t.raw.maximum if t.raw.maximum is not None else math.inf
        if not lo <= number <= hi:
            raise DesktopError(f"{t.raw.name} goes from {lo:g} to {hi:g}.")
        before = self._states(t.view, [t.node_id])
        self._set_prop(t, VALUE, "CurrentValue", GLib.Variant("d", number))
        after = self._states(t.view, [t.node_id])
        got = after[t.node_id].value
        ok = isinstance(got, float) and abs(got - number) < 1e-6
        return self._result(before, after, ok, "set" if ok else _observed(after[t.node_id]))

    def _items(self, t: Target) -> list[tuple[str, RawNode]]:
        """Choices of a combo box (its menu's items), as (node id, raw)."""
        out = []
        for node_id, ref in t.view.ref_of.items():
            raw = t.view.tree.nodes[ref]
            if node_id.startswith(t.node_id + ".") and raw.role in SELECTABLE_ROLES:
                out.append((node_id, raw))
        return out

    def _choose(self, t: Target, choice: str) -> ActionResult:
        items = self._items(t)
        found = next((node_id for node_id, raw in items
                      if raw.name.casefold() == choice.casefold()), None)
        if found is None:
            raise DesktopError(f"{t.raw.name} has no choice {choice}.")
        return self._choose_item(t, self._target(found, enabled=False))

    def _combo_of(self, t: Target) -> Target | None:
        """The combo box an option belongs to (its list or menu's parent), if it is one."""
        parts = t.node_id.split(".")
        for cut in (2, 3):
            combo_id = ".".join(parts[:-cut])
            ref = t.view.ref_of.get(combo_id)
            if ref is not None and t.view.tree.nodes[ref].role == "combo box":
                return self._target(combo_id, enabled=False)
        return None

    def _choose_item(self, combo: Target, item: Target) -> ActionResult:
        """Choose one option of a combo box, folded or not, and read the choice back."""
        ids = [combo.node_id, item.node_id]
        before = self._states(combo.view, ids)
        index = [i for i, _raw in self._items(combo)].index(item.node_id)
        if self._actions(item):
            self._call(item, ACTION, "DoAction",
                       GLib.Variant("(i)", (_pick_action(item.raw.actions),)))
        elif "Selection" in combo.raw.interfaces:
            self._call(combo, SELECTION, "SelectChild", GLib.Variant("(i)", (index,)))
        else:
            raise DesktopError(f"{combo.raw.name} can't be changed.")

        def chosen(a: dict[str, ElementState]) -> bool:
            value = a[combo.node_id].value
            if isinstance(value, str):
                return value.casefold() == item.raw.name.casefold()
            return "selected" in a[item.node_id].states

        after = self._settle(combo.view, ids, chosen)
        ok = chosen(after)
        return self._result(before, after, ok, "set" if ok else _observed(after[combo.node_id]))

    def _select(self, t: Target) -> ActionResult:
        combo = self._combo_of(t)
        if combo is not None:
            return self._choose_item(combo, t)
        parent_id = t.node_id.rsplit(".", 1)[0]
        siblings = [i for i in t.view.ref_of if i.rsplit(".", 1)[0] == parent_id
                    and i.count(".") == t.node_id.count(".")]
        before = self._states(t.view, siblings)
        parent = self._target(parent_id, enabled=False) if parent_id in t.view.ref_of else None
        if parent is not None and "Selection" in parent.raw.interfaces:
            index = int(t.node_id.rsplit(".", 1)[1])
            self._call(parent, SELECTION, "SelectChild", GLib.Variant("(i)", (index,)))
        elif self._actions(t):
            self._call(t, ACTION, "DoAction", GLib.Variant("(i)", (_pick_action(t.raw.actions),)))
        else:
            raise DesktopError(f"{t.raw.name or 'That element'} can't be selected.")
        after = self._settle(t.view, siblings, lambda a: "selected" in a[t.node_id].states)
        ok = "selected" in after[t.node_id].states
        return self._result(before, after, ok, "selected" if ok else _observed(after[t.node_id]))

    def _deselect(self, t: Target) -> None:
        parent_id, index = t.node_id.rsplit(".", 1)
        if parent_id in t.view.ref_of:
            parent = self._target(parent_id, enabled=False)
            if "Selection" in parent.raw.interfaces:
                done = self._call(parent, SELECTION, "DeselectChild",
                                  GLib.Variant("(i)", (int(index),)))
                if not done:  # GTK's single-selection lists refuse that, but can be cleared
                    self._call(parent, SELECTION, "ClearSelection")
                return
        raise DesktopError(f"{t.raw.name or 'That element'} can't be unselected.")

    # -- applications --------------------------------------------------------------------

    def _running(self, name: str) -> bool:
        snap = self.screen.snapshot()
        return any(a.casefold() == name.casefold() for a in snap.applications) and any(
            n.app.casefold() == name.casefold() for n in snap.nodes)

    def _open(self, name: str) -> ActionResult:
        entry = self.launcher.entry(name)
        key = f"app:{entry.name}"
        before = {key: ElementState(running=self._running(entry.name))}
        if before[key].running:
            return self._result(before, before, True, "already open")
        pid = self.launcher.launch(entry.name)

        def window_up() -> bool:
            self._name_launched(pid, entry.name)
            return self._running(entry.name)

        if not wait_until(window_up, deadline_after(self.open_timeout), step=0.05):
            raise DesktopError(f"{entry.name} did not open in time.")
        after = {key: ElementState(running=True)}
        return self._result(before, after, True, "opened")

    def _name_launched(self, pid: int, name: str) -> None:
        """Call the launched process's AT-SPI application by its .desktop name."""
        self.screen.invalidate()
        self.screen.snapshot()
        for bus_name in self.screen.app_order:
            if bus_name not in self.screen.aliases and bus_pid(self.bus, bus_name) == pid:
                self.screen.aliases[bus_name] = name
                self.screen.invalidate(bus_name)

    def _close(self, name: str) -> None:
        """Stop an allowlisted application (undo of opening it), by the process behind it."""
        entry = self.launcher.entry(name)
        if not self.launcher.close(entry.name):
            pids = {bus_pid(self.bus, b) for b, v in self.screen.apps.items()
                    if v.tree.name.casefold() == entry.name.casefold()}
            pids.discard(None)
            if not pids or os.getpid() in pids:
                raise DesktopError(f"I can't close {entry.name}.")
            for pid in pids:
                assert pid is not None
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
        if not wait_until(lambda: not self._running(name), deadline_after(self.open_timeout)):
            raise DesktopError(f"{name} did not close.")
        for bus_name, app in list(self.screen.gone.items()):
            if app.casefold() == entry.name.casefold():
                del self.screen.gone[bus_name]  # closed on purpose: nothing to tell

    # -- undo ----------------------------------------------------------------------------

    def _restore(self, wanted: dict[str, ElementState]) -> ActionResult:
        before: dict[str, ElementState] = {}
        after: dict[str, ElementState] = {}
        for key, state in wanted.items():
            if key.startswith("app:"):
                name = key[4:]
                running = self._running(name)
                before[key] = ElementState(running=running)
                if state.running is False and running:
                    self._close(name)
                elif state.running and not running:
                    self._open(name)
                after[key] = ElementState(running=self._running(name))
                continue
            t = self._target(key, enabled=False)
            with self._answering(t.app):
                before[key] = self._states(t.view, [key])[key]
                self._put_back(t, before[key], state)
                after[key] = self._states(t.view, [key])[key]
        ok = all(_same(after[k], v, k) for k, v in wanted.items())
        mismatch = [k for k, v in wanted.items() if not _same(after[k], v, k)]
        detail = "restored" if ok else "could not restore " + ", ".join(mismatch)
        return self._result(before, after, ok, detail)

    def _put_back(self, t: Target, now: ElementState, want: ElementState) -> None:
        raw = t.raw
        if raw.role in SECRET_ROLES:
            if want.value == REDACTED:
                raise DesktopError("I can't put back a secret I never read.")
            if now.value != want.value:
                self._call(t, EDITABLE, "SetTextContents", GLib.Variant("(s)", ("",)))
        elif now.value != want.value:
            if "Value" in raw.interfaces and isinstance(want.value, float):
                self._set_prop(t, VALUE, "CurrentValue", GLib.Variant("d", want.value))
            elif raw.role == "combo box" and want.value is not None:
                self._choose(t, str(want.value))
            elif "EditableText" in raw.interfaces:
                self._call(t, EDITABLE, "SetTextContents",
                           GLib.Variant("(s)", (str(want.value or ""),)))
        if ("checked" in now.states) != ("checked" in want.states) and raw.actions:
            self._call(t, ACTION, "DoAction", GLib.Variant("(i)", (_pick_action(raw.actions),)))
        if "selected" in want.states and "selected" not in now.states:
            self._select(t)
        elif "selected" in now.states and "selected" not in want.states:
            self._deselect(t)
        if "focused" in want.states and "focused" not in now.states:
            self._call(t, COMPONENT, "GrabFocus")


RESTORABLE = frozenset({"checked", "selected"})


def _same(got: ElementState, want: ElementState, key: str) -> bool:
    if key.startswith("app:"):
        return got.running == want.running
    return got.value == want.value and (got.states & RESTORABLE) == (want.states & RESTORABLE)


def _pick_action(actions: tuple[str, ...]) -> int:
    for name in PREFERRED_ACTIONS:
        if name in actions:
            return actions.index(name)
    return 0


def _observed(state: ElementState) -> str:
    shown = ", ".join(sorted(state.states)) or "no states"
    return f"observed value {state.value!r}, states {shown}"


__all__ = ["AtspiDesktop", "element_state"]
