"""Fits a model's intent to the roles on screen: the model names the right thing, the wrong verb.

Small models often say `select` for a button or `activate` for an application that is not open.
The intent kinds are defined by role (DESIGN.md), so the kind follows from what the target is.
Only the kind changes, never the target or the text, and the validator still checks the result.
"""

from __future__ import annotations

from appliance.desktop.model import Node, Snapshot
from appliance.intents.model import (
    Activate,
    Focus,
    Intent,
    OpenApp,
    Select,
    SetValue,
    Step,
)
from appliance.intents.model import Sequence as SequenceIntent

PRESSABLE = frozenset({"push button", "link", "menu button", "button", "toggle button"})
# Repeating one of these twice in a row is a model glitch, not a wish (unlike "press down twice").
_NO_REPEAT = (Activate, Select, Focus, OpenApp, SetValue)
SELECTABLE = frozenset({"list item", "page tab", "menu item", "tree item", "table cell"})


def _node(name: str, snapshot: Snapshot) -> Node | None:
    wanted = name.casefold()
    active = [n for n in snapshot.in_active_window() if n.name.casefold() == wanted]
    if active:
        return active[0]
    return next((n for n in snapshot.nodes if n.name.casefold() == wanted), None)


def _app(name: str, snapshot: Snapshot) -> str | None:
    wanted = name.casefold()
    return next((a for a in (*snapshot.launchable, *snapshot.applications)
                 if a.casefold() == wanted), None)


def _fit(step: Step, snapshot: Snapshot) -> Step:
    common = {"confidence": step.confidence, "words": step.words}
    if isinstance(step, Activate | Select | Focus):
        node = _node(step.target, snapshot)
        if node is None:
            app = _app(step.target, snapshot)
            return OpenApp(app=app, **common) if app is not None else step
        if isinstance(step, Select) and node.role in PRESSABLE:
            return Activate(target=step.target, **common)
        if isinstance(step, Activate) and node.role in SELECTABLE:
            return Select(target=step.target, **common)
    if isinstance(step, SetValue):
        node = _node(step.target, snapshot)
        if node is not None and node.role in PRESSABLE:
            return Activate(target=step.target, **common)
    return step


def _same_step(a: Step, b: Step) -> bool:
    return a.model_dump(exclude={"confidence", "words"}) == b.model_dump(
        exclude={"confidence", "words"})


def fit_to_screen(intent: Intent, snapshot: Snapshot) -> Intent:
    """The same request with each step's kind matching the role of what it names."""
    if isinstance(intent, SequenceIntent):
        steps: list[Step] = []
        for step in (_fit(s, snapshot) for s in intent.steps):
            if steps and isinstance(step, _NO_REPEAT) and _same_step(steps[-1], step):
                continue
            steps.append(step)
        if len(steps) == 1:
            return steps[0].model_copy(update={"confidence": intent.confidence})
        if tuple(steps) == intent.steps:
            return intent
        return intent.model_copy(update={"steps": tuple(steps)})
    if isinstance(intent, Activate | Select | Focus | SetValue):
        fitted: Intent = _fit(intent, snapshot)
        return fitted
    return intent
