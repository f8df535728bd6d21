"""The Text and EditableText interfaces: a field's length, inserting and replacing its text, and
typing into it (key by key where it has no EditableText)."""

from __future__ import annotations

from appliance.desktop.atspi.ax_component import grab_focus
from appliance.desktop.atspi.bus import A11yBus, Ref
from appliance.desktop.atspi.gi_modules import GLib
from appliance.desktop.atspi.input_devices import InputDevices
from appliance.desktop.atspi.readback import ReadBack, Target, action_result, observed
from appliance.desktop.atspi.tree import EDITABLE, TEXT
from appliance.desktop.model import ActionResult, DesktopError, Snapshot
from appliance.desktop.roles import DICTATION_ROLES, SECRET_ROLES
from appliance.desktop.uinput.keymap import text_strokes


def character_count(bus: A11yBus, ref: Ref) -> int:
    return int(bus.get(ref, TEXT, "CharacterCount"))


def insert_text(bus: A11yBus, ref: Ref, offset: int, text: str) -> None:
    bus.call(ref, EDITABLE, "InsertText", GLib.Variant("(isi)", (offset, text, len(text))))


def set_text_contents(bus: A11yBus, ref: Ref, text: str) -> None:
    bus.call(ref, EDITABLE, "SetTextContents", GLib.Variant("(s)", (text,)))


def focused_text_field(snapshot: Snapshot) -> str:
    """The node id of the text field with the focus, in the active window if there is one."""
    for node in snapshot.in_active_window() or snapshot.nodes:
        if "focused" in node.states and node.role in DICTATION_ROLES:
            return node.id
    raise DesktopError("No text field has the focus.")


def type_text(rb: ReadBack, t: Target, text: str, devices: InputDevices) -> ActionResult:
    """Append dictated text to a field and read it back (a secret field: its length only)."""
    if "EditableText" not in t.raw.interfaces:
        return type_by_keys(rb, t, text, devices)
    secret = t.raw.role in SECRET_ROLES
    before = rb.states(t.view, [t.node_id])
    count = character_count(rb.bus, t.ref)
    old = "" if secret else str(t.raw.value or "")
    # Typing goes at the end, with a space between dictated phrases (as the sim does).
    insert = (" " if old and not old.endswith(" ") and not secret else "") + text
    insert_text(rb.bus, t.ref, count, insert)
    after = rb.states(t.view, [t.node_id])
    if secret:
        grown = character_count(rb.bus, t.ref) - count
        ok, seen = grown == len(insert), f"{grown} characters arrived"
    else:
        value = str(after[t.node_id].value or "")
        ok, seen = value.endswith(text), f"the field says {value!r}"
    detail = "typed" if ok else f"typing did not arrive: {seen}"
    return action_result(before, after, ok, detail)


def type_by_keys(rb: ReadBack, t: Target, text: str, devices: InputDevices) -> ActionResult:
    """No EditableText (most web fields): focus it, go to the end (focusing selects all, and
    a key would replace it), type key by key, then read it back."""
    secret = t.raw.role in SECRET_ROLES
    old = "" if secret else str(t.raw.value or "")
    insert = (" " if old and not old.endswith(" ") else "") + text
    text_strokes(insert)  # a character that cannot be typed stops it before any key
    keys, via = devices.keys()
    before = rb.states(t.view, [t.node_id])
    if "Component" in t.raw.interfaces:
        grab_focus(rb.bus, t.ref)
        rb.settle(t.view, [t.node_id], lambda a: "focused" in a[t.node_id].states)
    keys.press("ctrl+End")
    keys.type(insert)
    if secret or "Text" not in t.raw.interfaces:
        after = rb.states(t.view, [t.node_id])
        return action_result(before, after, True, f"typed by keys ({via})", via=via)
    want = old + insert
    after = rb.settle(t.view, [t.node_id], lambda a: a[t.node_id].value == want)
    value = str(after[t.node_id].value or "")
    ok = value == want
    seen = f"typing did not arrive: the field says {value!r}"
    return action_result(before, after, ok, f"typed by keys ({via})" if ok else seen, via=via)


def set_text(rb: ReadBack, t: Target, text: str) -> ActionResult:
    """Replace the field's whole text and read it back."""
    before = rb.states(t.view, [t.node_id])
    set_text_contents(rb.bus, t.ref, text)
    after = rb.states(t.view, [t.node_id])
    ok = after[t.node_id].value == text
    return action_result(before, after, ok, "set" if ok else observed(after[t.node_id]))
