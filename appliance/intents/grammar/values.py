"""Intents that set a value: sliders moved by a step, to an extreme or to a number, and
`set X to Y` read by the kind of element X is."""

from __future__ import annotations

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.resolve import SUBSET_SCORE, best_name
from appliance.desktop.roles import (
    ITEM_ROLES,
    SPOKEN_CHOICE_ROLES,
    SPOKEN_NUMBER_ROLES,
    TEXT_FIELD_ROLES,
    TOGGLE_ROLES,
)
from appliance.intents.grammar.reading import Reading
from appliance.intents.grammar.targets import ASK_FROM, Target, Unresolved, containing
from appliance.intents.grammar.wording import words
from appliance.intents.levels import extreme_value, stepped_value
from appliance.intents.model import Intent, SetValue
from appliance.words.numbers import parse_number

_BOOL_WORDS = {
    "on": True, "true": True, "yes": True, "checked": True, "ticked": True, "enabled": True,
    "off": False, "false": False, "no": False, "unchecked": False, "unticked": False,
    "disabled": False,
}


def slider(reading: Reading) -> tuple[Intent, bool]:
    """A slider set by a step from its value, to an extreme, or to a number said after it."""
    slots = reading.slots
    sense: list[str] = []
    for slot in ("sense", "too", "as_much", "most"):
        if slot in slots:
            sense = str(slots[slot].value).split()
    if "target" in slots:
        t = reading.target()
    else:
        t = _slider_for(sense[1:], reading.snapshot, reading.meaning.roles or frozenset())
    node = t.node
    value: float | None
    if reading.result.intent.name == "level":
        extreme = str(slots["extreme"].value) if "extreme" in slots else sense[0]
        value = extreme_value(node, extreme)
    elif reading.result.intent.name == "set_number":
        said = reading.said("value")
        number = parse_number(said)
        value = None if number is None else _scaled(number, said, node)
    else:
        up = (str(slots["step"].value) if "step" in slots else sense[0]) == "up"
        value = stepped_value(node, up)
    if value is None:
        raise Unresolved("the slider's value or range is unknown")
    return SetValue(target=node.name, value=value, confidence=t.score, words=reading.text), (
        t.score == 1.0
    )


def _slider_for(hints: list[str], snapshot: Snapshot, roles: frozenset[str]) -> Target:
    """The slider a comparative word is about ("louder": the one named like volume or sound)."""
    window = snapshot.in_active_window()
    sliders = [n for n in window if n.role in roles and n.enabled]
    for hint in hints:
        named = [n for n in sliders if hint in words(n.name)]
        if len(named) == 1:
            return Target(named[0], 1.0)
        if named:
            raise Unresolved(hint)
    raise Unresolved("no slider for that")


def set_value(reading: Reading) -> tuple[Intent, bool]:
    """On or off said by the template; else the value said, read by what the element takes."""
    text, snapshot = reading.text, reading.snapshot
    fixed = reading.slots["value"].value if "value" in reading.slots else None
    t = reading.target()
    if isinstance(fixed, bool):
        return SetValue(target=t.node.name, value=fixed, confidence=t.score, words=text), (
            t.score == 1.0
        )
    said = reading.said("value")
    node, score = t.node, t.score
    if node.role not in (reading.meaning.roles or frozenset()):
        # "change the voice to Alan": the Voice tab has no value; the list that offers Alan does.
        node, score = _offering(reading.spoken("target"), said, snapshot)
    value: bool | float | str
    if node.role in SPOKEN_NUMBER_ROLES:
        number = parse_number(said)
        if number is None:
            raise Unresolved(said)
        value = _scaled(number, said, node)
    elif node.role in TOGGLE_ROLES:
        if said.casefold() not in _BOOL_WORDS:
            raise Unresolved(said)
        value = _BOOL_WORDS[said.casefold()]
    elif node.child_ids:
        found = best_name(said, choices_of(node, snapshot))
        if found is None:
            raise Unresolved(said)
        value, choice_score = found
        score = min(score, choice_score)
    elif node.role in TEXT_FIELD_ROLES or node.role in SPOKEN_CHOICE_ROLES:
        value = said
    else:
        number = parse_number(said)
        value = said if number is None else number
    return SetValue(target=node.name, value=value, confidence=score, words=text), score == 1.0


def _offering(spoken_target: str, said: str, snapshot: Snapshot) -> tuple[Node, float]:
    """The one choice list named with the spoken words that offers the said option."""
    named = {m.node.id for m in containing(spoken_target, snapshot, SPOKEN_CHOICE_ROLES)}
    found: list[tuple[Node, float]] = []
    for node in snapshot.in_active_window():
        if node.id not in named or not node.child_ids:
            continue
        option = best_name(said, choices_of(node, snapshot))
        if option is not None and option[1] >= ASK_FROM:
            found.append((node, min(SUBSET_SCORE, option[1])))
    if len(found) != 1:
        raise Unresolved(spoken_target)  # not a thing that takes a value: ask the model
    return found[0]


def choices_of(node: Node, snapshot: Snapshot) -> list[str]:
    """What a list or combo box offers: its items, also where they sit inside its menu or
    list (as GTK's and Chromium's combo boxes hold them), not only its direct children."""
    items = [n.name for n in snapshot.descendants(node) if n.role in ITEM_ROLES and n.name]
    return items or [c.name for cid in node.child_ids if (c := snapshot.node(cid)) and c.name]


def _scaled(number: float, said: str, node: Node) -> float:
    """A percentage of a slider whose range is not 0..100 is a share of that range."""
    percent = said.casefold().rstrip().endswith(("percent", "per cent", "%"))
    lo, hi = node.minimum, node.maximum
    if percent and lo is not None and hi is not None and (lo, hi) != (0.0, 100.0):
        return lo + (hi - lo) * number / 100
    return number
