"""Short spoken summaries of the screen for `read` intents, built from a snapshot.

Secret values are never spoken: a password field is only ever "empty" or "filled in". Every
summary is one pass over the snapshot (a window can hold a hundred thousand elements) and is cut
to what can be listened to (appliance/limits.py).
"""

from __future__ import annotations

from appliance.desktop.model import Node, Snapshot
from appliance.limits import MAX_SCREEN_NAMES_SPOKEN, MAX_SPOKEN_CHARS, clip

# Spoken first when listing what can be used: the things people most often ask to press.
ACTION_ORDER = (
    "push button", "toggle button", "link", "page tab", "check box", "radio button",
    "text", "entry", "password text", "combo box", "slider", "spin button", "list item",
    "menu item",
)
ACTIONABLE_ROLES = frozenset(ACTION_ORDER)


def _number(value: float) -> str:
    return f"{value:g}"


def value_words(node: Node) -> str:
    """The value as it may be spoken ("" when there is nothing to say)."""
    if node.secret:
        return "filled in" if node.value else "empty"
    value = node.value
    if isinstance(value, float):
        if node.minimum is not None and node.maximum is not None:
            return f"{_number(value)}, from {_number(node.minimum)} to {_number(node.maximum)}"
        return _number(value)
    if value:
        return f"says {value}"
    if node.role in {"text", "entry"}:
        return "empty"
    return ""


def describe_element(node: Node) -> str:
    return clip(_element_words(node), MAX_SPOKEN_CHARS)


def _element_words(node: Node) -> str:
    parts = [f"{node.name or 'unnamed'}, {node.role}"]
    said = value_words(node)
    if said:
        parts.append(said)
    if node.role in {"check box", "toggle button", "radio button"}:
        parts.append("checked" if "checked" in node.states else "not checked")
    for state in ("selected", "focused", "insensitive", "invisible"):
        if state in node.states:
            parts.append({"insensitive": "disabled", "invisible": "hidden"}.get(state, state))
    return ", ".join(parts) + "."


def _usable(nodes: list[Node]) -> list[str]:
    """Names of enabled, visible controls, the likeliest first, each once (one pass: a dict per
    role keeps first-seen order and makes "seen already?" one lookup, not a scan)."""
    by_role: dict[str, dict[str, None]] = {role: {} for role in ACTION_ORDER}
    for n in nodes:
        if n.role in ACTIONABLE_ROLES and n.name and n.enabled and n.visible:
            by_role[n.role].setdefault(n.name)
    return list(dict.fromkeys(name for names in by_role.values() for name in names))


def _listed(names: list[str]) -> str:
    """'A, B, C' or 'A, B, and 12 more', at most MAX_SCREEN_NAMES_SPOKEN names said."""
    shown = names[:MAX_SCREEN_NAMES_SPOKEN]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f", and {more} more" if more else "")


def describe_screen(snapshot: Snapshot) -> str:
    return clip(_screen_words(snapshot), MAX_SPOKEN_CHARS)


def _screen_words(snapshot: Snapshot) -> str:
    if snapshot.active_window is None:
        return "Nothing is open."
    nodes = snapshot.in_active_window()
    if snapshot.active_window == snapshot.active_app:
        text = f"{snapshot.active_app} is open."
    else:
        text = f"{snapshot.active_app} is open, window {snapshot.active_window}."
    focused = next((n for n in nodes if "focused" in n.states and n.name), None)
    if focused is not None:
        said = clip(value_words(focused), MAX_SPOKEN_CHARS // 3)  # leave room for the rest
        text += f" {focused.name} has the focus" + (f", {said}." if said else ".")
    usable = _usable(nodes)
    if usable:
        text += " You can use " + _listed(usable) + "."
    seen = [n.name for n in nodes if n.source != "tree" and n.name]
    if seen and not usable:  # the application tells nothing: what the screen shows, as data
        text += " On the screen I can read: " + _listed(list(dict.fromkeys(seen))) + "."
    disabled = [n.name for n in nodes if n.role == "push button" and not n.enabled and n.name]
    if disabled:
        text += " Greyed out: " + ", ".join(disabled[:3]) + "."
    others = [a for a in snapshot.applications if a != snapshot.active_app]
    if others:
        text += " Also open: " + ", ".join(others[:3]) + "."
    return text


def describe_selection(snapshot: Snapshot) -> str:
    chosen = [n.name for n in snapshot.in_active_window() if "selected" in n.states and n.name]
    if not chosen:
        return "Nothing is selected."
    return clip("Selected: " + _listed(chosen) + ".", MAX_SPOKEN_CHARS)
