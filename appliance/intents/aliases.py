"""Names a person gives elements: "call Doctor Patel my doctor", then "select my doctor".

The commands that teach and forget a name, and what a name said means on this screen. Pure: the
aliases come from the journal (journal/alias_log.py, only what its chain vouches for), the
screen from the snapshot. An alias counts only while its element is on the screen in the
application it was taught in, and it never shadows an element whose own name is the one said:
then the person is asked which. "call 7 Save" with numbers shown is another command (a taught
spot, intents/marks.py), read before these.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.resolve import find_targets, name_key
from appliance.intents.model import Clarify, ForgetName, Intent, NameElement
from appliance.intents.model import Sequence as Steps
from appliance.intents.planner import Plan, Planner
from appliance.words.numbers import parse_number

PLANNER = "aliases"
"""The planner name a turn's `Planned` event gives an alias command or question."""
MAX_NAME = 40

_TEACH = re.compile(r"^(?:call|name)\s+(?P<rest>.+?)[\s.!?]*$", re.IGNORECASE)
_FORGET = re.compile(
    r"^(?:forget|unlearn)\s+(?:the\s+name\s+|about\s+)?(?P<name>.+?)[\s.!?]*$",
    re.IGNORECASE,
)
_POLITE_START = re.compile(r"^(?:(?:hey|hi|ok|okay)\s+)?(?:juniper[\s,]+)?(?:please\s+|now\s+|"
                           r"(?:can|could|would|will)\s+you\s+(?:please\s+)?)*", re.IGNORECASE)
_POLITE_END = re.compile(r"(?:[\s,]+(?:please|for me|now|right now|thanks|thank you))+[\s.!?]*$",
                         re.IGNORECASE)
_FILLERS = frozenset({"please", "now", "thanks", "thank you", "for me", "right now", "then",
                      "too", "again", "it", "this", "that", "here", "there"})
"""Words that are no name: "call Grandma now" names nothing."""


def strip_fillers(text: str, start: bool = True) -> str:
    """The words without the wake phrase and politeness at the start (unless `start` is
    False) and at the end."""
    text = " ".join(text.split())
    if start:
        text = _POLITE_START.sub("", text)
    return _POLITE_END.sub("", text).strip(" .,!?")


_AS = re.compile(r"^(?:as|to)\s+", re.IGNORECASE)


class Named(Protocol):
    """An alias as this module reads it (journal/alias_log.py's `Alias`)."""

    @property
    def id(self) -> str: ...

    @property
    def app(self) -> str: ...

    @property
    def element(self) -> str: ...

    @property
    def name(self) -> str: ...


def _exact(words: str, snapshot: Snapshot) -> list[Node]:
    """Showing elements whose own name the words are, as said ("My GP" for "my gp") or as the
    resolver folds them ("Send" for "the send button")."""
    key = name_key(words)
    said = [n for n in snapshot.nodes if n.visible and n.name and name_key(n.name) == key]
    folded = [m.node for m in find_targets(words, snapshot, limit=20)
              if m.score == 1.0 and m.node.visible and m.node.name]
    return list({n.id: n for n in (*said, *folded)}.values())


def teach_command(text: str, snapshot: Snapshot) -> NameElement | None:
    """"call Doctor Patel my doctor" (or "name ..."): the longest start of the words that is an
    element's name on this screen, and the rest as its new name; None when no start is one
    (then the words are planned as usual)."""
    m = _TEACH.match(strip_fillers(" ".join(text.split())))
    if m is None:
        return None
    said = m.group("rest").split()
    for cut in range(len(said) - 1, 0, -1):
        nodes = _exact(" ".join(said[:cut]), snapshot)
        name = strip_fillers(_AS.sub("", " ".join(said[cut:])), start=False)
        if not nodes or not name or name.casefold() in _FILLERS:
            continue
        active = [n for n in nodes if n.app == snapshot.active_app] or nodes
        return NameElement(target=active[0].name, name=name[:MAX_NAME], words=text)
    return None


def forget_command(text: str, aliases: Sequence[Named]) -> ForgetName | None:
    """"forget my doctor": only when the words name an alias, so "forget it" stays what the
    grammar makes of it."""
    m = _FORGET.match(strip_fillers(" ".join(text.split())))
    if m is None:
        return None
    said = name_key(m.group("name"))
    if not any(name_key(a.name) == said for a in aliases):
        return None
    return ForgetName(name=m.group("name"), words=text)


def which_to_forget(name: str, aliases: Sequence[Named], active_app: str | None) -> list[Named]:
    """The aliases "forget NAME" drops: the active application's, else the one of that name
    wherever it was taught; several when it was taught in several others."""
    said = name_key(name)
    named = [a for a in aliases if name_key(a.name) == said]
    here = [a for a in named if a.app == active_app]
    return here or named


def name_refusal(intent: NameElement, snapshot: Snapshot) -> str | None:
    """Why "call X NAME" cannot be taught here, or None."""
    nodes = _exact(intent.target, snapshot)
    if not nodes:
        return f"I can't find {intent.target} on the screen."
    key = name_key(intent.name)
    if not key:
        return "That name has no words I can listen for."
    if key == name_key(nodes[0].name):
        return f"{nodes[0].name} is already called that."
    number = parse_number(intent.name)
    if number is not None and math.isfinite(number):  # "nan" is a name, not a number
        return "A number can't be a name: numbers pick what show numbers shows."
    return None


def on_screen(alias: Named, snapshot: Snapshot) -> list[Node]:
    """The showing elements an alias stands for: its element, in its application."""
    return [n for n in snapshot.nodes
            if n.app == alias.app and n.name == alias.element and n.visible]


def names_on_screen(snapshot: Snapshot, aliases: Sequence[Named]) -> tuple[str, ...]:
    """The aliases whose element is on this screen: names the closed set may hear."""
    return tuple(dict.fromkeys(a.name for a in aliases if on_screen(a, snapshot)))


@dataclass(frozen=True)
class Said:
    """An alias in what was said: its words, the elements it stands for here, and the elements
    whose own name those words are (which it never shadows)."""

    name: str
    elements: tuple[str, ...]
    shadowed: tuple[str, ...]


def said_alias(text: str, snapshot: Snapshot, aliases: Sequence[Named]) -> Said | None:
    """The longest alias said whose element is on the screen; the active application's first."""
    said = f" {name_key(text)} "
    found = [a for a in aliases
             if (key := name_key(a.name)) and f" {key} " in said and on_screen(a, snapshot)]
    if not found:
        return None
    longest = max(len(name_key(a.name)) for a in found)
    found = [a for a in found if len(name_key(a.name)) == longest]
    found = [a for a in found if a.app == snapshot.active_app] or found
    elements = tuple(dict.fromkeys(a.element for a in found))
    shadowed = tuple(dict.fromkeys(n.name for n in _exact(found[0].name, snapshot)
                                   if n.name not in elements))
    return Said(found[0].name, elements, shadowed)


def reworded(text: str, name: str, element: str) -> str:
    """The words with the alias said in them replaced by its element's name."""
    words = name_key(name).split()
    pattern = re.compile(r"(?<!\w)" + r"[\W_]+".join(map(re.escape, words)) + r"(?!\w)",
                         re.IGNORECASE)
    if pattern.search(text):
        return pattern.sub(lambda _m: element, text, count=1)
    folded = f" {name_key(text)} "  # said with digits or apostrophes the name folds away
    return folded.replace(f" {' '.join(words)} ", f" {element} ", 1).strip()


def _aims_at(intent: Intent | None, element: str) -> bool:
    """Whether a plan acts on or reads `element` (not merely types its name as words)."""
    steps = intent.steps if isinstance(intent, Steps) else (intent,)
    return any(getattr(s, "target", None) == element for s in steps if s is not None)


def plan_with_aliases(planner: Planner, text: str, snapshot: Snapshot,
                      history: Sequence[str], aliases: Sequence[Named]) -> Plan:
    """The plan for `text` with any alias said in it standing for its element: planned with
    the element's name in its place, kept only when that plan is about the element (an alias
    among words to type stays words). Where the alias's words are also an element's own name,
    or it stands for elements in two applications, the person is asked which."""
    said = said_alias(text, snapshot, aliases) if aliases else None
    if said is None:
        return planner.plan(text, snapshot, history)
    element = said.elements[0]
    plan = planner.plan(reworded(text, said.name, element), snapshot, history)
    if not _aims_at(plan.intent, element) or plan.intent is None:
        return planner.plan(text, snapshot, history)
    options = (*said.shadowed, *said.elements)
    if len(options) > 1:
        called = f", which you call {said.name}" if said.shadowed else ""
        question = f"Did you mean {', '.join(options[:-1])} or {options[-1]}{called}?"
        return Plan(intent=Clarify(question=question, options=options, words=text),
                    planner=PLANNER, latency_ms=plan.latency_ms)
    return replace(plan, intent=plan.intent.model_copy(update={"words": text}))
