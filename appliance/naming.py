"""A name taught or forgotten by voice ("call Doctor Patel my doctor", "forget my doctor"):
what the journal records and what is said back. What the words mean, and when a name counts,
is appliance/intents/aliases.py; the record is the journal's (journal/alias_log.py)."""

from __future__ import annotations

from appliance.desktop.model import Snapshot
from appliance.desktop.resolve import find_targets
from appliance.intents.aliases import which_to_forget
from appliance.intents.model import ForgetName, NameElement
from appliance.journal.application import Journal


def teach(journal: Journal, intent: NameElement, snapshot: Snapshot, by: str, turn: str) -> str:
    """Record the name for the element it names, in that element's application."""
    found = [m.node for m in find_targets(intent.target, snapshot, limit=20)
             if m.score == 1.0 and m.node.visible and m.node.name == intent.target]
    node = next((n for n in found if n.app == snapshot.active_app), found[0])
    journal.teach_alias(node.app, node.name, intent.name, by=by, turn=turn, role=node.role)
    return f"From now on, {intent.name} means {node.name} in {node.app}."


def forget(journal: Journal, intent: ForgetName, active_app: str | None, by: str,
           turn: str) -> str:
    """Drop the name: the active application's, else wherever it was taught."""
    gone = which_to_forget(intent.name, journal.aliases(), active_app)
    for alias in gone:
        journal.forget_alias(alias.id, by=by, turn=turn)
    if not gone:
        return f"Nothing is called {intent.name}."
    where = " and ".join(f"{a.element} in {a.app}" for a in gone)
    return f"Forgotten: {gone[0].name} no longer means {where}."
