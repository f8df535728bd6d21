"""The Selection interface: selecting a list's item or a tab, unselecting it, and choosing a
combo box's option (by the option's own action where it has one)."""

from __future__ import annotations

from appliance.desktop.atspi.ax_action import action_names, do_preferred_action
from appliance.desktop.atspi.bus import A11yBus, Ref
from appliance.desktop.atspi.gi_modules import GLib
from appliance.desktop.atspi.readback import ReadBack, Target, action_result, observed
from appliance.desktop.atspi.tree import SELECTION, RawNode
from appliance.desktop.model import ActionResult, DesktopError, ElementState
from appliance.desktop.roles import SELECTABLE_ROLES


def select_child(bus: A11yBus, ref: Ref, index: int) -> bool:
    reply = bus.call(ref, SELECTION, "SelectChild", GLib.Variant("(i)", (index,)))
    return bool(reply[0]) if reply else False


def deselect_child(bus: A11yBus, ref: Ref, index: int) -> bool:
    reply = bus.call(ref, SELECTION, "DeselectChild", GLib.Variant("(i)", (index,)))
    return bool(reply[0]) if reply else False


def clear_selection(bus: A11yBus, ref: Ref) -> bool:
    reply = bus.call(ref, SELECTION, "ClearSelection")
    return bool(reply[0]) if reply else False


def combo_items(t: Target) -> list[tuple[str, RawNode]]:
    """Choices of a combo box (its menu's items), as (node id, raw)."""
    out = []
    for node_id, ref in t.view.ref_of.items():
        raw = t.view.tree.nodes[ref]
        if node_id.startswith(t.node_id + ".") and raw.role in SELECTABLE_ROLES:
            out.append((node_id, raw))
    return out


def combo_of(rb: ReadBack, t: Target) -> Target | None:
    """The combo box an option belongs to (its list or menu's parent), if it is one."""
    parts = t.node_id.split(".")
    for cut in (2, 3):
        combo_id = ".".join(parts[:-cut])
        ref = t.view.ref_of.get(combo_id)
        if ref is not None and t.view.tree.nodes[ref].role == "combo box":
            return rb.target(combo_id, enabled=False)
    return None


def choose(rb: ReadBack, t: Target, choice: str) -> ActionResult:
    """Choose the combo box's option of that name."""
    items = combo_items(t)
    found = next((node_id for node_id, raw in items
                  if raw.name.casefold() == choice.casefold()), None)
    if found is None:
        raise DesktopError(f"{t.raw.name} has no choice {choice}.")
    return choose_item(rb, t, rb.target(found, enabled=False))


def choose_item(rb: ReadBack, combo: Target, item: Target) -> ActionResult:
    """Choose one option of a combo box, folded or not, and read the choice back."""
    ids = [combo.node_id, item.node_id]
    before = rb.states(combo.view, ids)
    index = [i for i, _raw in combo_items(combo)].index(item.node_id)
    if action_names(rb.bus, item):
        do_preferred_action(rb.bus, item.ref, item.raw.actions)
    elif "Selection" in combo.raw.interfaces:
        select_child(rb.bus, combo.ref, index)
    else:
        raise DesktopError(f"{combo.raw.name} can't be changed.")

    def chosen(a: dict[str, ElementState]) -> bool:
        value = a[combo.node_id].value
        if isinstance(value, str):
            return value.casefold() == item.raw.name.casefold()
        return "selected" in a[item.node_id].states

    after = rb.settle(combo.view, ids, chosen)
    ok = chosen(after)
    return action_result(before, after, ok, "set" if ok else observed(after[combo.node_id]))


def select(rb: ReadBack, t: Target) -> ActionResult:
    """Select the item (a combo box's option is chosen) and read it and its siblings back."""
    combo = combo_of(rb, t)
    if combo is not None:
        return choose_item(rb, combo, t)
    parent_id = t.node_id.rsplit(".", 1)[0]
    siblings = [i for i in t.view.ref_of if i.rsplit(".", 1)[0] == parent_id
                and i.count(".") == t.node_id.count(".")]
    before = rb.states(t.view, siblings)
    parent = rb.target(parent_id, enabled=False) if parent_id in t.view.ref_of else None
    if parent is not None and "Selection" in parent.raw.interfaces:
        index = int(t.node_id.rsplit(".", 1)[1])
        select_child(rb.bus, parent.ref, index)
    elif action_names(rb.bus, t):
        do_preferred_action(rb.bus, t.ref, t.raw.actions)
    else:
        raise DesktopError(f"{t.raw.name or 'That element'} can't be selected.")
    after = rb.settle(t.view, siblings, lambda a: "selected" in a[t.node_id].states)
    ok = "selected" in after[t.node_id].states
    return action_result(before, after, ok, "selected" if ok else observed(after[t.node_id]))


def deselect(rb: ReadBack, t: Target) -> None:
    """Unselect the item through its parent's Selection (undo only: nothing is read back)."""
    parent_id, index = t.node_id.rsplit(".", 1)
    if parent_id in t.view.ref_of:
        parent = rb.target(parent_id, enabled=False)
        if "Selection" in parent.raw.interfaces:
            if not deselect_child(rb.bus, parent.ref, int(index)):
                # GTK's single-selection lists refuse that, but can be cleared
                clear_selection(rb.bus, parent.ref)
            return
    raise DesktopError(f"{t.raw.name or 'That element'} can't be unselected.")
