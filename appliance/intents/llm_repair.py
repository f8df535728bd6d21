"""Fits a model's intent to the roles on screen: the model names the right thing, the wrong verb.

Small models often say `select` for a button or `activate` for an application that is not open.
The intent kinds are defined by role (docs/architecture.md): the kind follows from the target.
Only the kind changes, never the target or the text, and the validator still checks the result.
`fit_to_request` then cuts the proposal down to what the words asked for (one step, or a read).
"""

from __future__ import annotations

import re

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.roles import REPAIR_PRESSABLE_ROLES, SELECTABLE_ROLES, TEXT_FIELD_ROLES
from appliance.intents.llm_grounding import normalise
from appliance.intents.model import (
    Activate,
    Focus,
    Intent,
    OpenApp,
    PressKey,
    Read,
    Select,
    SetValue,
    Step,
    TypeText,
)
from appliance.intents.model import Sequence as SequenceIntent

# Repeating one of these twice in a row is a model glitch, not a wish (unlike "press down twice").
_NO_REPEAT = (Activate, Select, Focus, OpenApp, SetValue)


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
        if isinstance(step, Select) and node.role in REPAIR_PRESSABLE_ROLES:
            return Activate(target=step.target, **common)
        if isinstance(step, Activate) and node.role in SELECTABLE_ROLES:
            return Select(target=step.target, **common)
        if isinstance(step, Select) and node.role in TEXT_FIELD_ROLES:
            return Focus(target=step.target, **common)  # "go to the message box"
    if isinstance(step, SetValue):
        node = _node(step.target, snapshot)
        if node is not None and node.role in REPAIR_PRESSABLE_ROLES:
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


# -- fitting to what was said --------------------------------------------------------------

# Words that ask for more than one action, or for words to be written: a sequence may be meant.
_SEVERAL = re.compile(
    r"\b(?:and|then|after|afterwards|before|also|saying|says|say|tell|telling|that says)\b|[,;]",
    re.IGNORECASE,
)
_WRITES = re.compile(r"\b(?:type|write|writing|enter|dictate|put|say|saying|tell|reply|"
                     r"message|search|find|look for)\b", re.IGNORECASE)
_QUESTION = re.compile(
    r"^(?:(?:hey |hi |ok |okay )?juniper,?\s+)?(?:what|what's|whats|which|who|who's|how|"
    r"is|are|does|do you know|tell me (?:what|which|if|whether))\b",
    re.IGNORECASE,
)
_CHANGES = re.compile(
    r"\b(?:set|change|turn|switch|make|put|move|raise|lower|increase|decrease)\b", re.IGNORECASE
)
# A step kind a request singles out more surely than a select or focus that leads up to it.
_ACTING_FIRST = (Activate, SetValue, OpenApp, PressKey, Read)


def _said_words(text: str) -> set[str]:
    return set(normalise(text).split())


def _overlap(step: Step, said: set[str]) -> int:
    words: list[str] = []
    for value in (getattr(step, "target", None), getattr(step, "app", None),
                  getattr(step, "key", None)):
        if isinstance(value, str):
            words += normalise(value).split()
    return sum(1 for w in set(words) if w in said)


_FILLER = frozenset({"the", "a", "an", "my", "to", "for", "it", "this", "that", "i", "want",
                     "please", "and", "of"})


def _target_words(step: Step) -> set[str]:
    words: set[str] = set()
    for value in (getattr(step, "target", None), getattr(step, "app", None)):
        if isinstance(value, str):
            words |= set(normalise(value).split())
    return words


def _grounded(
    step: Step, steps: tuple[Step, ...], request: str, said: set[str], writes: bool
) -> bool:
    """Did the request ask for this step, rather than the model adding it?"""
    others = set().union(*(_target_words(s) for s in steps if s is not step))
    if isinstance(step, TypeText):
        # "message the doctor" typed as "the doctor" is the contact's name, not a message
        own = set(normalise(step.text).split()) - others - _FILLER
        # the whole request typed out is the model echoing it, never words to type
        return writes and bool(own) and normalise(step.text) != request
    if isinstance(step, PressKey):
        return _overlap(step, said) > 0 or bool({"press", "key", "hit"} & said)
    mine = _target_words(step)
    if any(mine < _target_words(s) for s in steps if s is not step):
        return False  # "Conversation" beside "Delete conversation": one thing said twice
    return _overlap(step, said) > 0


def _one_step(steps: tuple[Step, ...], text: str) -> Step:
    """The step a single-action request most likely asked for, when none is named outright."""
    said = _said_words(text)
    writes = _WRITES.search(text) is not None
    pool = [s for s in steps if writes or not isinstance(s, TypeText)] or list(steps)
    return max(
        pool, key=lambda s: (_overlap(s, said), isinstance(s, _ACTING_FIRST), -pool.index(s)),
    )


def _asked_steps(intent: SequenceIntent, text: str) -> Intent:
    """A sequence for a request with no second action in it, cut to the steps it asked for."""
    said = _said_words(text)
    writes = _WRITES.search(text) is not None
    request = normalise(text)
    keep = tuple(s for s in intent.steps if _grounded(s, intent.steps, request, said, writes))
    if len(keep) == len(intent.steps):
        return intent
    if len(keep) >= 2:
        return intent.model_copy(update={"steps": keep})
    step = keep[0] if keep else _one_step(intent.steps, text)
    return step.model_copy(update={"confidence": min(intent.confidence, step.confidence)})


def _read_instead(step: Intent, text: str, snapshot: Snapshot) -> Intent:
    """A question is answered by reading, never by changing what it asks about."""
    if not _QUESTION.search(text.strip()) or _CHANGES.search(text):
        return step
    target = getattr(step, "target", None)
    if (isinstance(step, SetValue | Select | Activate | Focus) and isinstance(target, str)
            and _node(target, snapshot) is not None):
        return Read(what="element", target=target, confidence=step.confidence, words=step.words)
    return step


_DICTATION_VERB = re.compile(r"^\s*(?:type|write|enter|dictate|say)\s+", re.IGNORECASE)


def _without_command(step: Intent, text: str) -> Intent:
    """Typing the whole request ("write running late") types the words after its verb."""
    if not isinstance(step, TypeText) or normalise(step.text) != normalise(text):
        return step
    words = _DICTATION_VERB.sub("", step.text, count=1)
    if words == step.text or not words.strip():
        return step
    return step.model_copy(update={"text": words})


def fit_to_request(intent: Intent, text: str, snapshot: Snapshot) -> Intent:
    """The model's intent cut down to what the request asked for.

    A sequence for a request with no second action in it keeps only the steps the words ask for
    (small models pad "forward this" with a select, "reset" with a save), and a question becomes
    a read.
    """
    if isinstance(intent, SequenceIntent) and not _SEVERAL.search(text):
        intent = _asked_steps(intent, text)
    if not isinstance(intent, SequenceIntent):
        return _without_command(_read_instead(intent, text, snapshot), text)
    return intent
