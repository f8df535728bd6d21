"""What undoing a turn puts back, or why it cannot: pure, from the turn's step records and the
screen as it is now."""

from __future__ import annotations

from appliance.desktop.model import REDACTED, Action, ElementState, Snapshot
from appliance.limits import was_cut
from appliance.turn import Turn


def restore_action(target: Turn) -> Action | str:
    """The action that puts back every element `target` changed as it was before, or what to
    say when a value was not kept whole (hidden, or clipped)."""
    restore: dict[str, ElementState] = {}
    for step in reversed(target.steps):
        for key, state in (step.result_before or {}).items():
            if state.value == REDACTED:
                return f"I can't put back the hidden value of {step.target}."
            if was_cut(state.value):  # only its start was kept: putting it back loses text
                return f"{step.target} is too long to put back."
            restore[key] = state.as_state()
    return Action(kind="restore", restore=restore)


def changed_since(target: Turn, snapshot: Snapshot) -> str:
    """The name of an element that no longer looks the way the turn left it, if any."""
    for step in target.steps:
        for key, after in (step.after or {}).items():
            if key.startswith("app:"):
                running = key[4:] in snapshot.applications
                if running != after.running:
                    return key[4:]
                continue
            node = snapshot.node(key)
            if node is None or node.name != after.name:
                return after.name or step.target  # gone, or ids moved
            if after.value != REDACTED and (
                node.value != after.value or node.states != after.states
            ):
                return node.name
    return ""
