"""What the screen says, read out: a document's text, the text being written, and what an
action changed (a calculator's result). Pure, over snapshots; secrets are never read."""

from __future__ import annotations

import re

from appliance.desktop import roles
from appliance.desktop.model import Node, Snapshot
from appliance.limits import MAX_SPOKEN_CHARS, clip


def node_text(node: Node) -> str:
    """The words an element shows: its value if it holds text, else its name."""
    if node.secret:
        return ""
    if isinstance(node.value, str) and node.value.strip():
        return " ".join(node.value.split())
    return " ".join(node.name.split())


def document_text(snapshot: Snapshot) -> str | None:
    """The active window's document read in order (each piece of text once), or None when the
    window holds no document."""
    window = snapshot.in_active_window()
    document = next((n for n in window if n.role in roles.DOCUMENT_ROLES), None)
    if document is None:
        return None
    pieces: list[str] = []
    for node in snapshot.descendants(document):
        if node.role in roles.PROSE_ROLES and node.visible and not _text_parent(node, snapshot):
            text = node_text(node)
            if text and (not pieces or pieces[-1] != text):
                pieces.append(text)
    return clip(_sentences(pieces), MAX_SPOKEN_CHARS) if pieces else None


def writing_text(snapshot: Snapshot) -> str | None:
    """What the focused text field says, the end of it when long (where the person writes)."""
    focused = next(
        (n for n in snapshot.in_active_window()
         if "focused" in n.states and n.role in roles.TEXT_ROLES),
        None,
    )
    if focused is None:
        return None
    if focused.secret:
        return f"{focused.name or 'The field'} is filled in." if focused.value else "It is empty."
    text = node_text(focused) if isinstance(focused.value, str) else ""
    if not text:
        return f"{focused.name or 'The field'} is empty."
    if len(text) > MAX_SPOKEN_CHARS:
        text = "…" + text[-(MAX_SPOKEN_CHARS - 1):].split(" ", 1)[-1]
    return text


def sent_text(snapshot: Snapshot) -> str | None:
    """What a press of Send would send: each filled text field of the active window by name
    ("Message says see you soon."), never a secret one or a search box; None when none is."""
    said = [
        f"{n.name or 'The field'} says {node_text(n)}."
        for n in snapshot.in_active_window()
        if n.role in roles.WRITTEN_ROLES and n.visible and isinstance(n.value, str)
        and n.value.strip() and not _SEARCH.search(n.name)
    ]
    return clip(" ".join(said), MAX_SPOKEN_CHARS) if said else None


_SEARCH = re.compile(r"\b(search|find|filter)\b", re.IGNORECASE)
"""A field by these words holds what was looked for, not what is sent."""


def changed_text(before: Snapshot, after: Snapshot) -> str | None:
    """The text an action changed in the active window, outside the controls: what a
    calculator's display or a status line now says. None when no such text changed."""
    was = {n.id: node_text(n) for n in before.nodes}
    changed = [
        n for n in after.in_active_window()
        if n.role in roles.PROSE_ROLES and n.role not in roles.SCAN_ROLES - roles.TEXT_ROLES
        and n.visible and node_text(n) and was.get(n.id) != node_text(n)
    ]
    if not changed:
        return None
    return clip(_sentences([node_text(n) for n in changed[:3]]), MAX_SPOKEN_CHARS)


def _text_parent(node: Node, snapshot: Snapshot) -> bool:
    """A paragraph's static text child repeats its parent's words: read the parent only."""
    parent = snapshot.node(node.parent_id) if node.parent_id else None
    return parent is not None and parent.role in roles.PROSE_ROLES and bool(node_text(parent))


def _sentences(pieces: list[str]) -> str:
    return " ".join(p if p[-1] in ".!?:…" else p + "." for p in pieces)
