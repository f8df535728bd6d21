"""How risky an action is, from the element (a scene's `risk`), its name and role, and the intent.

Only element *names* and roles count, never on-screen text or values: what an element says can
never make an action safer or grant a permission.
"""

from __future__ import annotations

import re

from appliance.desktop.model import Node, Risk
from appliance.words.sending import sends as sends  # the policy's word, kept here too

DESTRUCTIVE_WORDS = re.compile(
    r"\b(delete|erase|remove|format|factory reset|wipe|destroy|uninstall|discard|reset all)\b",
    re.IGNORECASE,
)
MODERATE_WORDS = re.compile(
    r"\b(send|pay|buy|submit|purchase|order|transfer|post|publish|call|share|sign out|log out"
    r"|shut ?down|restart|reboot)\b",
    re.IGNORECASE,
)
# Chords that close or quit things lose work without asking.
MODERATE_CHORDS = frozenset({"alt+F4", "ctrl+w", "ctrl+q", "ctrl+shift+w"})
DESTRUCTIVE_CHORDS = frozenset({"shift+Delete", "ctrl+alt+Delete"})


def risk_of_name(name: str) -> Risk:
    if DESTRUCTIVE_WORDS.search(name):
        return Risk.destructive
    if MODERATE_WORDS.search(name):
        return Risk.moderate
    return Risk.harmless


def risk_of_element(node: Node, kind: str) -> Risk:
    """The element's own `risk` wins; otherwise its name decides for presses."""
    if node.risk is not None:
        return node.risk
    if kind in ("activate", "select") or (kind == "set_value" and node.role == "toggle button"):
        return risk_of_name(node.name)
    return Risk.harmless


def risk_of_chord(chord: str) -> Risk:
    if chord in DESTRUCTIVE_CHORDS:
        return Risk.destructive
    if chord in MODERATE_CHORDS:
        return Risk.moderate
    return Risk.harmless


def highest(risks: list[Risk]) -> Risk:
    return max(risks, key=lambda r: r.rank, default=Risk.harmless)
