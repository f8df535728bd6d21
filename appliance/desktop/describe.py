"""Short spoken summaries of the screen for `read` intents, built from a snapshot (never secrets)."""

from __future__ import annotations

from appliance.desktop.model import Node, Snapshot

ACTIONABLE_ROLES = frozenset(
    {"push button", "toggle button", "check box", "radio button", "text", "password text",
     "list item", "menu item", "combo box", "slider", "page tab", "link", "entry"}
)


def describe_element(node: Node) -> str:
    value = node.shown_value()
    parts = [f"{node.name}, {node.role}"]
    if value not in (None, ""):
        parts.append(f"says {value:g}" if isinstance(value, float) else f"says {value}")
    elif node.role in {"text", "password text"}:
        parts.append("empty")
    for state in ("checked", "selected", "focused", "insensitive"):
        if state in node.states:
            parts.append("disabled" if state == "insensitive" else state)
    return ", ".join(parts) + "."


def describe_screen(snapshot: Snapshot) -> str:
    if snapshot.active_window is None:
        return "Nothing is open."
    nodes = [n for n in snapshot.in_active_window() if n.visible and n.name]
    actions = [n.name for n in nodes if n.role in ACTIONABLE_ROLES and n.enabled][:8]
    focused = next((n for n in nodes if "focused" in n.states), None)
    text = f"{snapshot.active_app} is open, window {snapshot.active_window}."
    if focused is not None:
        text += f" {focused.name} has the focus."
    if actions:
        text += " You can use " + ", ".join(actions) + "."
    return text


def describe_selection(snapshot: Snapshot) -> str:
    chosen = [n.name for n in snapshot.in_active_window() if "selected" in n.states and n.name]
    if not chosen:
        return "Nothing is selected."
    return "Selected: " + ", ".join(chosen) + "."
