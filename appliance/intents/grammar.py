"""The grammar planner: hassil sentence templates filled with the live screen's names.

Two passes. First the screen's element and application names are hassil slot lists, so a name
is only ever matched as a slot value ("click Delete" on screen cannot change what "click send"
means). When nothing parses that way, the same templates run with wildcard slots and the
captured words are resolved against the screen by `appliance.desktop.resolve` (rapidfuzz), so
a speech-recognition slip still lands, with a lower confidence. Last, a button named by its verb
("delete this email", see button_verbs). Some templates mean more than one intent kind and are
built from the screen: "louder" sets the volume slider a step up from its value now (levels),
"tell grandma I'm late" is pick, type and send. "Do that again" and "not her, the doctor" are
read against what the person said before. Confidence stays honest: below 1.0 (and below the
router's threshold when unsure) whenever a name, a field or the meaning was a guess.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any, Literal

import yaml
from hassil import (
    Intents,
    RecognizeResult,
    TextSlotList,
    WildcardSlotList,
    merge_dict,
    recognize_all,
)
from hassil.intents import SlotList
from hassil.models import MatchEntity

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.resolve import (
    MIN_SCORE,
    ROLE_WORDS,
    SUBSET_SCORE,
    Match,
    best_name,
    find_targets,
    name_key,
    spoken_forms,
)
from appliance.desktop.roles import (
    PRESSABLE_ROLES,
    SELECTABLE_ROLES,
    SPOKEN_CHOICE_ROLES,
    SPOKEN_NUMBER_ROLES,
    TEXT_FIELD_ROLES,
    TOGGLE_ROLES,
)
from appliance.intents.button_verbs import button_for
from appliance.intents.keys import MODIFIERS, key_names
from appliance.intents.levels import extreme_value, stepped_value
from appliance.intents.model import (
    CONTROL_INTENTS,
    SCREEN_CHANGING,
    Activate,
    Cancel,
    Clarify,
    Confirm,
    Deny,
    Focus,
    Intent,
    Modifier,
    OpenApp,
    PressKey,
    Read,
    Scroll,
    Select,
    Sequence,
    SetValue,
    Step,
    TypeText,
    Undo,
)
from appliance.intents.planner import Plan
from appliance.words.numbers import parse_number, spoken_digits

SEARCH_WORDS = frozenset({"search", "find", "filter"})
VALUE_ROLES = SPOKEN_NUMBER_ROLES | SPOKEN_CHOICE_ROLES | TOGGLE_ROLES
STEP_INTENTS = (Activate, TypeText, PressKey, OpenApp, Focus, Scroll, SetValue, Select, Read)

TYPE_TARGET_MIN = 0.6
"""A fuzzy field name after "type ... in" must be this good, else the words are dictation."""
TIE = 0.02
"""Two different names scoring within this of each other: ask which one."""
ASK_FROM = 0.6
"""Near-tied names are offered as a question only when they are plausible at all."""
MAX_STEPS = 8
PARSE_BUDGET = 40
"""Most distinct parts one utterance may be parsed as while looking for a sequence."""

WAKE_AND_FILLER_START = (
    "hey juniper", "hi juniper", "ok juniper", "okay juniper", "juniper",
    "please", "can you", "could you", "would you", "will you", "can you please",
    "i want to", "i'd like to", "i would like to", "i wanna", "let's", "now", "just", "and",
    "i need to",
    "ok", "okay", "alright", "all right", "so", "um", "uh", "er", "erm",
)
FILLER_END = ("please", "for me", "now", "right now", "thanks", "thank you", "thankyou")
SEQUENCE_JOINS = (  # "then" says "next step" more surely than "and", so it is tried first
    re.compile(r"(?:\s*[,;]\s*|\s+)(?:and then|and after that|after that|then)\s+", re.I),
    re.compile(r"(?:\s*,\s*|\s+)and\s+", re.I),
)
_NAMES_A_FIELD = re.compile(
    r"\binto\b|\b(?:in|on)\s+(?:the\s+)?\S+(?:\s+\S+)?\s+(?:field|box|text box|entry)$",
    re.IGNORECASE,
)
"""Dictation that ends by naming a field ("... into field 7"): that field was not found."""
_EDGE_PUNCT = re.compile(r"^[\s,.;:!?]+|[\s,.;:!?]+$")
_BOOL_WORDS = {
    "on": True, "true": True, "yes": True, "checked": True, "ticked": True, "enabled": True,
    "off": False, "false": False, "no": False, "unchecked": False, "unticked": False,
    "disabled": False,
}
WARM_UP = (
    "click box 1", "type hi into box one and then press control c", "tick box", "set box to 5",
    "select box", "open box", "go to box", "focus box", "scroll down in box", "read the screen",
    "what does box say", "undo", "cancel", "yes", "no", "copy that",
)
# Ties between templates that parse equally well: the more specific reading first.
PRIORITY = {
    name: i for i, name in enumerate((
        "confirm", "deny", "cancel", "undo", "read", "read_which", "read_about", "press_key",
        "level", "adjust", "set_value", "set_number", "select", "select_by_verb", "compose",
        "reply_with", "search", "type_text", "open_app", "purpose", "focus", "go_to", "show",
        "scroll", "activate", "bare_name", "vague",
    ))
}
LOOSE_FLOOR = 0.75
"""A fuzzy name after a loose verb ("talk to", "listen to") must be at least this close."""
IN_USE_CONFIDENCE = 0.5
"""Opening, for a purpose, the app that is already in use ("play something" in the radio)."""
VAGUE_CONFIDENCE = 0.8
"""A request that names nothing to act on is asked about, not handed to the model to guess."""
COMPOSED_CONFIDENCE = 0.9
"""Steps the grammar adds itself (the field to type in, the send button): likely, not said."""


# -- templates and fixed lists (loaded once) -----------------------------------------------

@cache
def load_intents() -> Intents:
    """Every sentences/*.yaml of the installed package, merged."""
    root = resources.files("appliance.intents.sentences")
    data: dict[str, Any] = {}
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            merge_dict(data, yaml.safe_load(entry.read_text(encoding="utf-8")))
    return Intents.from_dict(data)


def _plain_list(name: str, pairs: Iterable[tuple[str, Any]]) -> TextSlotList:
    """A slot list whose inputs are literal text, never templates: screen text is data."""
    return TextSlotList.from_tuples(list(pairs), allow_template=False, name=name)


@cache
def _fixed_lists() -> dict[str, SlotList]:
    return {
        "role": _plain_list("role", ((w, w) for w in ROLE_WORDS)),
        "key": _plain_list("key", key_names().items()),
        "modifier": _plain_list("modifier", MODIFIERS.items()),
    }


_WILDCARDS: dict[str, SlotList] = {
    "target": WildcardSlotList(name="target"),
    "app": WildcardSlotList(name="app"),
}


_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_DIGIT = re.compile(r"\d")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


@lru_cache(maxsize=8192)
def _name_entry(name: str) -> tuple[str, frozenset[str], frozenset[str], bool]:
    """A name, its words, its words without digits, and whether it has digits."""
    words = frozenset(_words(name))
    plain = frozenset(w for w in words if not _DIGIT.search(w))
    return name, words, plain, len(plain) < len(words)


class _NameList:
    """One kind of screen name (elements or applications), ready to be cut down per utterance.

    A name can only match as a slot value if all its words were said, so each utterance gets a
    slot list of just those names (and their spoken-digit forms: "Radio 4" as "radio four").
    Building a hassil list of every name on a big new screen would cost more than the parse.
    """

    def __init__(self, names: Iterable[str]) -> None:
        self.entries = [_name_entry(n) for n in dict.fromkeys(names) if n.strip()]

    def for_words(self, said: frozenset[str], list_name: str) -> TextSlotList:
        pairs: list[tuple[str, str]] = []
        for name, words, plain, has_digits in self.entries:
            if not plain <= said:
                continue
            if words <= said:
                pairs.append((name, name))
            if has_digits:
                spoken = spoken_digits(name)
                if set(_words(spoken)) <= said:
                    pairs.append((spoken, name))
        return _plain_list(list_name, pairs)


@dataclass(frozen=True)
class _Screen:
    snapshot: Snapshot
    names: tuple[tuple[str, ...], tuple[str, ...]]
    targets: _NameList
    apps: _NameList


class _ScreenLists:
    """The exact slot lists for one utterance on one screen; names indexed once per screen.

    The last screen is one immutable record, replaced whole, so a planner shared between
    threads never mixes two screens' names.
    """

    def __init__(self) -> None:
        self._last: _Screen | None = None

    def get(self, snapshot: Snapshot, text: str) -> dict[str, SlotList]:
        screen = self._last
        if screen is None or screen.snapshot is not snapshot:
            names = (
                tuple(n.name for n in snapshot.nodes if n.name),
                (*snapshot.applications, *snapshot.launchable),
            )
            if screen is not None and screen.names == names:
                screen = _Screen(snapshot, names, screen.targets, screen.apps)
            else:
                screen = _Screen(snapshot, names, _NameList(names[0]), _NameList(names[1]))
            self._last = screen
        said = frozenset(_words(text))
        return {
            **_fixed_lists(),
            "target": screen.targets.for_words(said, "target"),
            "app": screen.apps.for_words(said, "app"),
        }


# -- resolving names -----------------------------------------------------------------------

class _Unresolved(Exception):
    """A parse whose names don't fit the screen; the next parse is tried."""


class _Ambiguous(Exception):
    def __init__(self, options: tuple[str, ...], score: float) -> None:
        super().__init__(options)
        self.options = options
        self.score = score


_NOT_ON_SCREEN_YET: ContextVar[bool] = ContextVar("not_on_screen_yet", default=False)


@dataclass(frozen=True)
class _Target:
    node: Node
    score: float


def _spoken(result: RecognizeResult, slot: str) -> str:
    entity = result.entities.get(slot)
    if entity is None:
        return ""
    role = result.entities.get("role")
    base = str(entity.value) if not entity.is_wildcard else entity.text
    return f"{base} {role.text}".strip() if role is not None else base.strip()


def _resolve(
    words: str,
    snapshot: Snapshot,
    prefer: frozenset[str] | None = None,
    require: Literal["", "only", "best"] = "",
    floor: float = MIN_SCORE,
) -> _Target:
    """The node the words name, preferring roles in `prefer`.

    require="only": nothing but those roles ("type ... into" needs a text field).
    require="best": those roles, and only if one is about as good a match as any element:
    "select the send button" must not become the one check box that happens to score 0.4.
    """
    if require == "only" and prefer is not None:
        matches = [m for m in find_targets(words, snapshot, roles=prefer) if m.score >= floor]
        if not matches and floor <= SUBSET_SCORE:
            # An exact name of another role hides partial names ("the reply" is the Reply
            # button exactly, but "type ... in the reply" means the Reply text field).
            matches = _containing(words, snapshot, prefer)
    else:
        matches = [m for m in find_targets(words, snapshot) if m.score >= floor]
    if prefer is not None and require != "only":
        preferred = [m for m in find_targets(words, snapshot, roles=prefer) if m.score >= floor]
        if preferred and (not matches or preferred[0].score >= matches[0].score - TIE):
            matches = preferred
        elif require == "best":
            matches = []
    if _NOT_ON_SCREEN_YET.get() and (not matches or matches[0].score < 1.0):
        # A later step of a sequence may name what an earlier step will bring up: keep the
        # words as said; the validator checks them against the screen when the step runs.
        _forms, hint = spoken_forms(words)
        roles = hint or prefer or frozenset({"push button"})
        placeholder = Node(id="", role=sorted(roles)[0], name=words, app="", window="")
        return _Target(placeholder, 1.0)
    if not matches:
        raise _Unresolved(words)
    best = matches[0]
    if best.score < 1.0:
        rivals = [m for m in matches[1:] if m.node.name != best.node.name]
        if rivals and best.score - rivals[0].score < TIE:
            if best.score < ASK_FROM:
                raise _Unresolved(words)  # two poor guesses are no guess at all
            options = tuple(dict.fromkeys(
                m.node.name for m in matches if best.score - m.score < TIE
            ))
            raise _Ambiguous(options, best.score)
    return _Target(best.node, best.score)


def _containing(words: str, snapshot: Snapshot, roles: frozenset[str]) -> list[Match]:
    """Nodes of these roles whose name holds every spoken word, scored as a partial name."""
    forms, _hint = spoken_forms(words)
    found: list[Match] = []
    for form in forms:
        said = set(form.split())
        found = [
            Match(node=n, score=SUBSET_SCORE) for n in snapshot.in_active_window()
            if n.role in roles and n.name and said <= set(name_key(n.name).split())
        ]
        if found:
            break
    return found


def _entity_text(result: RecognizeResult, slot: str, text: str) -> str:
    """A wildcard's words as said (with the speaker's punctuation), from the input text."""
    entity: MatchEntity | None = result.entities.get(slot)
    if entity is None:
        return ""
    if entity.text_span is not None:
        start, end = entity.text_span
        return _EDGE_PUNCT.sub("", text[start:end]) or entity.text.strip()
    return entity.text.strip()


# -- building intents from parses ----------------------------------------------------------

def _build(result: RecognizeResult, text: str, snapshot: Snapshot) -> tuple[Intent, bool]:
    """The intent for one parse and whether every name in it matched exactly."""
    name = result.intent.name
    words = text
    slots = result.entities

    def target(prefer: frozenset[str] | None = None, **kw: Any) -> _Target:
        if "target" in slots and not slots["target"].is_wildcard:
            kw["floor"] = 1.0  # a name from the exact list means that very element
        return _resolve(_spoken(result, "target"), snapshot, prefer, **kw)

    match name:
        case "confirm":
            return Confirm(words=words), True
        case "deny":
            return Deny(words=words), True
        case "cancel":
            return Cancel(words=words), True
        case "undo":
            return Undo(words=words), True
        case "press_key":
            mods = [slots[m].value for m in ("mod1", "mod2") if m in slots]
            modifiers: tuple[Modifier, ...] = tuple(dict.fromkeys(mods))
            return PressKey(key=str(slots["key"].value), modifiers=modifiers, words=words), True
        case "activate":
            t = target()
            return Activate(target=t.node.name, confidence=t.score, words=words), t.score == 1.0
        case "bare_name":
            if slots["target"].is_wildcard:
                raise _Unresolved("a bare name must be said exactly")
            t = target(PRESSABLE_ROLES, require="only")
            if t.node.role in SELECTABLE_ROLES:  # a menu item said alone: "jazz fm please"
                return Select(target=t.node.name, words=words), True
            return Activate(target=t.node.name, words=words), True
        case "select" | "select_by_verb":
            if name == "select_by_verb" and slots["target"].is_wildcard:
                t = target(SELECTABLE_ROLES, floor=LOOSE_FLOOR)
            else:
                t = target(SELECTABLE_ROLES)
            if t.node.role in SELECTABLE_ROLES:
                return Select(target=t.node.name, confidence=t.score, words=words), t.score == 1.0
            return Activate(target=t.node.name, confidence=t.score, words=words), t.score == 1.0
        case "focus":
            t = target()
            return Focus(target=t.node.name, confidence=t.score, words=words), t.score == 1.0
        case "go_to":
            t = target()
            exact = t.score == 1.0
            if t.node.role in SELECTABLE_ROLES:
                return Select(target=t.node.name, confidence=t.score, words=words), exact
            return Focus(target=t.node.name, confidence=t.score, words=words), exact
        case "type_text":
            typed = _entity_text(result, "text", text)
            if not typed:
                raise _Unresolved("nothing to type")
            if "target" not in slots:
                if _NAMES_A_FIELD.search(typed):
                    raise _Unresolved("a field was named but is not on the screen")
                return TypeText(text=typed, words=words), False
            typed_into = TEXT_FIELD_ROLES | SPOKEN_CHOICE_ROLES
            t = target(typed_into, require="only", floor=TYPE_TARGET_MIN)
            return TypeText(text=typed, target=t.node.name, confidence=t.score, words=words), False
        case "set_value":
            return _set_value(result, text, snapshot)
        case "open_app":
            spoken = _spoken(result, "app")
            found = best_name(spoken, (*snapshot.applications, *snapshot.launchable))
            if found is None:
                raise _Unresolved(spoken)
            app, score = found
            return OpenApp(app=app, confidence=score, words=words), score == 1.0
        case "scroll":
            direction = str(slots["direction"].value)
            if "target" in slots:
                t = target()
                return Scroll(
                    direction=direction,
                    target=t.node.name, confidence=t.score, words=words,
                ), t.score == 1.0
            return Scroll(direction=direction, words=words), True
        case "read":
            what = str(slots["what"].value)
            if what == "element":
                t = target()
                return Read(
                    what="element", target=t.node.name, confidence=t.score, words=words
                ), t.score == 1.0
            return Read(what=what, words=words), True
        case "read_which":
            spoken = _spoken(result, "target")
            holding = _containing(spoken, snapshot, VALUE_ROLES)
            if len(holding) == 1:
                node = holding[0].node
                score = 1.0 if name_key(node.name) in spoken_forms(spoken)[0] else SUBSET_SCORE
                return Read(what="element", target=node.name, confidence=score, words=words), (
                    score == 1.0
                )
            t = target()
            return Read(what="element", target=t.node.name, confidence=t.score, words=words), (
                t.score == 1.0
            )
        case "read_about":
            t = _any_of(str(slots["target"].value), snapshot)
            return Read(what="element", target=t.node.name, confidence=t.score, words=words), (
                False
            )
        case "adjust" | "level" | "set_number":
            return _slider(result, text, snapshot)
        case "show":
            t = target(SELECTABLE_ROLES, require="only")
            return Select(target=t.node.name, confidence=t.score, words=words), t.score == 1.0
        case "purpose":
            found = max(
                (f for alt in str(slots["app"].value).split("|")
                 if (f := best_name(alt, (*snapshot.applications, *snapshot.launchable)))),
                key=lambda f: f[1], default=None,
            )
            if found is None or found[1] < ASK_FROM:
                raise _Unresolved("no app for that")
            # the app in use already: something in it was likely meant; the model may know
            score = found[1] if found[0] != snapshot.active_app else IN_USE_CONFIDENCE
            return OpenApp(app=found[0], confidence=score, words=words), False
        case "search":
            typed = _entity_text(result, "text", text)
            field = _search_field(snapshot)
            if not typed or field is None:
                raise _Unresolved("no search field")
            return TypeText(text=typed, target=field.name, words=words), False
        case "compose" | "reply_with":
            return _composed(result, text, snapshot), False
        case "vague":
            return Clarify(
                question=str(slots["question"].value), confidence=VAGUE_CONFIDENCE, words=words
            ), False
    raise _Unresolved(name)  # pragma: no cover - a template intent with no builder


def _any_of(alternatives: str, snapshot: Snapshot) -> _Target:
    """The best-named element for any of the '|'-separated words (a question's subject)."""
    best: _Target | None = None
    for alt in alternatives.split("|"):
        try:
            t = _resolve(alt, snapshot, floor=ASK_FROM)
        except _Unresolved:
            continue
        if best is None or t.score > best.score:
            best = t
    if best is None:
        raise _Unresolved(alternatives)
    return best


def _search_field(snapshot: Snapshot) -> Node | None:
    fields = [n for n in snapshot.in_active_window()
              if n.role in TEXT_FIELD_ROLES and not n.secret and n.enabled
              and SEARCH_WORDS & set(_words(n.name))]
    return fields[0] if len(fields) == 1 else None


def _pressable_starting(word: str, snapshot: Snapshot) -> Node | None:
    """The button whose name is or begins with this word (the shortest such name)."""
    found = [n for n in snapshot.in_active_window()
             if n.role in PRESSABLE_ROLES and n.enabled and _words(n.name)[:1] == [word]]
    return min(found, key=lambda n: len(n.name)) if found else None


def _message_field(snapshot: Snapshot, prefer: str) -> Node | None:
    """The text field to write a message in: the one named like `prefer`, else the only one."""
    fields = [n for n in snapshot.in_active_window()
              if n.role in TEXT_FIELD_ROLES and not n.secret and n.enabled
              and not SEARCH_WORDS & set(_words(n.name))]
    named = [n for n in fields if prefer in _words(n.name)]
    if len(named) == 1:
        return named[0]
    return fields[0] if len(fields) == 1 else None


def _composed(result: RecognizeResult, text: str, snapshot: Snapshot) -> Sequence:
    """Writing to someone: [pick the contact | press Reply], type the words, press send."""
    typed = _entity_text(result, "text", text)
    if not typed:
        raise _Unresolved("nothing to say")
    steps: list[Step] = []
    confidence = COMPOSED_CONFIDENCE
    if result.intent.name == "compose":
        floor = 1.0 if not result.entities["target"].is_wildcard else ASK_FROM
        contact = _resolve(_spoken(result, "target"), snapshot, SELECTABLE_ROLES, "only", floor)
        steps.append(Select(target=contact.node.name, words=text))
        confidence = min(confidence, contact.score)
        field = _message_field(snapshot, "message")
    else:
        reply = _pressable_starting("reply", snapshot)
        if reply is not None:
            steps.append(Activate(target=reply.name, words=text))
        field = _message_field(snapshot, "reply")
    send = _pressable_starting("send", snapshot)
    if field is None or send is None:
        raise _Unresolved("no message field or send button")
    steps.append(TypeText(text=typed, target=field.name, words=text))
    steps.append(Activate(target=send.name, words=text))
    return Sequence(steps=tuple(steps), confidence=confidence, words=text)


def _slider(result: RecognizeResult, text: str, snapshot: Snapshot) -> tuple[Intent, bool]:
    """A slider set by a step from its value, to an extreme, or to a number said after it."""
    slots = result.entities
    sense: list[str] = []
    for slot in ("sense", "too", "as_much", "most"):
        if slot in slots:
            sense = str(slots[slot].value).split()
    if "target" in slots:
        floor = MIN_SCORE if slots["target"].is_wildcard else 1.0
        t = _resolve(_spoken(result, "target"), snapshot, SPOKEN_NUMBER_ROLES, "only", floor)
    else:
        t = _slider_for(sense[1:], snapshot)
    node = t.node
    value: float | None
    if result.intent.name == "level":
        extreme = str(slots["extreme"].value) if "extreme" in slots else sense[0]
        value = extreme_value(node, extreme)
    elif result.intent.name == "set_number":
        said = _entity_text(result, "value", text)
        number = parse_number(said)
        value = None if number is None else _scaled(number, said, node)
    else:
        up = (str(slots["step"].value) if "step" in slots else sense[0]) == "up"
        value = stepped_value(node, up)
    if value is None:
        raise _Unresolved("the slider's value or range is unknown")
    return SetValue(target=node.name, value=value, confidence=t.score, words=text), (
        t.score == 1.0
    )


def _slider_for(hints: list[str], snapshot: Snapshot) -> _Target:
    """The slider a comparative word is about ("louder": the one named like volume or sound)."""
    window = snapshot.in_active_window()
    sliders = [n for n in window if n.role in SPOKEN_NUMBER_ROLES and n.enabled]
    for hint in hints:
        named = [n for n in sliders if hint in _words(n.name)]
        if len(named) == 1:
            return _Target(named[0], 1.0)
        if named:
            raise _Unresolved(hint)
    raise _Unresolved("no slider for that")


def _set_value(result: RecognizeResult, text: str, snapshot: Snapshot) -> tuple[Intent, bool]:
    words = text
    fixed = result.entities["value"].value if "value" in result.entities else None
    spoken_target = _spoken(result, "target")
    floor = MIN_SCORE if result.entities["target"].is_wildcard else 1.0
    if isinstance(fixed, bool):
        t = _resolve(spoken_target, snapshot, TOGGLE_ROLES, require="best", floor=floor)
        return SetValue(target=t.node.name, value=fixed, confidence=t.score, words=words), (
            t.score == 1.0
        )
    said = _entity_text(result, "value", text)
    settable = SPOKEN_NUMBER_ROLES | SPOKEN_CHOICE_ROLES | TOGGLE_ROLES | TEXT_FIELD_ROLES
    t = _resolve(spoken_target, snapshot, settable, floor=floor)
    node, score = t.node, t.score
    if node.role not in settable:
        # "change the voice to Alan": the Voice tab has no value; the list that offers Alan does.
        node, score = _offering(spoken_target, said, snapshot)
    value: bool | float | str
    if node.role in SPOKEN_NUMBER_ROLES:
        number = parse_number(said)
        if number is None:
            raise _Unresolved(said)
        value = _scaled(number, said, node)
    elif node.role in TOGGLE_ROLES:
        if said.casefold() not in _BOOL_WORDS:
            raise _Unresolved(said)
        value = _BOOL_WORDS[said.casefold()]
    elif node.child_ids:
        choices = [c.name for cid in node.child_ids if (c := snapshot.node(cid)) and c.name]
        found = best_name(said, choices)
        if found is None:
            raise _Unresolved(said)
        value, choice_score = found
        score = min(score, choice_score)
    elif node.role in TEXT_FIELD_ROLES or node.role in SPOKEN_CHOICE_ROLES:
        value = said
    else:
        number = parse_number(said)
        value = said if number is None else number
    return SetValue(target=node.name, value=value, confidence=score, words=words), score == 1.0


def _offering(spoken_target: str, said: str, snapshot: Snapshot) -> tuple[Node, float]:
    """The one choice list named with the spoken words that offers the said option."""
    named = {m.node.id for m in _containing(spoken_target, snapshot, SPOKEN_CHOICE_ROLES)}
    found: list[tuple[Node, float]] = []
    for node in snapshot.in_active_window():
        if node.id not in named or not node.child_ids:
            continue
        choices = [c.name for cid in node.child_ids if (c := snapshot.node(cid)) and c.name]
        option = best_name(said, choices)
        if option is not None and option[1] >= ASK_FROM:
            found.append((node, min(SUBSET_SCORE, option[1])))
    if len(found) != 1:
        raise _Unresolved(spoken_target)  # not a thing that takes a value: ask the model
    return found[0]


def _scaled(number: float, said: str, node: Node) -> float:
    """A percentage of a slider whose range is not 0..100 is a share of that range."""
    percent = said.casefold().rstrip().endswith(("percent", "per cent", "%"))
    lo, hi = node.minimum, node.maximum
    if percent and lo is not None and hi is not None and (lo, hi) != (0.0, 100.0):
        return lo + (hi - lo) * number / 100
    return number


# -- what was said before ------------------------------------------------------------------

_REPEAT = re.compile(
    r"(?:(?:do|try|say) (?:it|that|this|the same)(?: thing)? |(?:the )?same (?:thing )?)?"
    r"(?:again|once more|one more time)"
    r"|(?:repeat|redo)(?: (?:it|that|this|the last (?:one|thing)))?|same again",
    re.IGNORECASE,
)
_AGAIN = re.compile(r"(?:\s+|\s*,\s*)(?:again|once more|one more time)$", re.IGNORECASE)
_CORRECTION = re.compile(
    r"(?:no[,.!]?\s+)?(?:not (?:him|her|them|it|that|this|that one|this one|the \w+|\w+)"
    r"|i meant|i mean)[,.!]?\s+(?P<name>.+)|no[,.!]?\s+(?P<other>the .+)",
    re.IGNORECASE,
)
ASSISTANT_PREFIX = "assistant"
"""History lines the appliance said ("assistant asked: ..."), not the person."""
MAX_LOOK_BACK = 3


# -- the planner ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Parsed:
    intent: Intent
    exact: bool  # no fuzzy name and no free text: nothing a split could read better
    literal: int  # literal characters the template matched


def _rank(result: RecognizeResult) -> tuple[int, int, int, int]:
    """Most literal text first (unlike hassil, which puts fewest wildcards first): "type hi into
    the message box" is tried as text-into-field before as dictation, and a field name that
    doesn't resolve falls through to the plain reading."""
    wildcards = [e for e in result.entities_list if e.is_wildcard]
    return (
        -result.text_chunks_matched,
        len(wildcards),
        sum(len(e.text or "") for e in wildcards),
        PRIORITY.get(result.intent.name, len(PRIORITY)),
    )


def _strip_fillers(text: str, start: bool = True, end: bool = True) -> str:
    words = _EDGE_PUNCT.sub("", text).split()
    folded = [w.strip(",.;:!?").casefold() for w in words]
    changed = True
    while changed and words:
        changed = False
        for filler in WAKE_AND_FILLER_START if start else ():
            n = len(filler.split())
            if folded[:n] == filler.split() and len(words) > n:
                words, folded, changed = words[n:], folded[n:], True
                break
        for filler in FILLER_END if end else ():
            n = len(filler.split())
            if folded[-n:] == filler.split() and len(words) > n:
                words, folded, changed = words[:-n], folded[:-n], True
                break
    return _EDGE_PUNCT.sub("", " ".join(words))


class GrammarPlanner:
    """Implements the Planner protocol with hassil templates and the screen's names."""

    def __init__(self) -> None:
        self.intents = load_intents()
        self._lists = _ScreenLists()
        # Parse the templates, compile hassil's patterns and load the number words now, so the
        # first turn is as quick as the rest.
        warm = Snapshot(nodes=(Node(id="0", role="text", name="Box 1", app="A", window="A"),))
        for phrase in WARM_UP:
            self.parse(phrase, warm)

    def plan(self, text: str, snapshot: Snapshot, history: Iterable[str] = ()) -> Plan:
        started = time.perf_counter()
        intent = self.parse(text, snapshot, tuple(history))
        return Plan(
            intent=intent, planner="grammar", latency_ms=(time.perf_counter() - started) * 1000
        )

    def parse(
        self, text: str, snapshot: Snapshot, history: tuple[str, ...] = ()
    ) -> Intent | None:
        """The intent the words mean on this screen, or None. `history`: what the person said
        before, oldest first, for "do that again" and "not her, the doctor"."""
        words = " ".join(text.split())
        bare = _strip_fillers(words)
        if _REPEAT.fullmatch(bare):
            return self._replayed(text, snapshot, history)
        correction = _CORRECTION.fullmatch(bare)
        if correction is not None and history:
            name = correction["name"] or correction["other"]
            corrected = self._corrected(text, name, snapshot, history)
            if corrected is not None:
                return corrected
        words = _AGAIN.sub("", words) or words  # "louder again" is "louder"
        candidates = dict.fromkeys((
            _strip_fillers(words),
            _strip_fillers(words, end=False),  # "please do": the filler was the command
            _strip_fillers(words, start=False),
        ))
        parsing = _Parsing(self, snapshot)
        weak: Intent | None = None
        for i, candidate in enumerate(candidates):
            if candidate:
                # "type thank you and press enter": the end filler was words to type
                parsed = parsing.utterance(candidate, split=i <= 1)
                if parsed is None:
                    continue
                if parsed.intent.confidence >= ASK_FROM:
                    return parsed.intent.model_copy(update={"words": text})
                if weak is None or parsed.intent.confidence > weak.confidence:
                    weak = parsed.intent
        return None if weak is None else weak.model_copy(update={"words": text})

    def _earlier(self, snapshot: Snapshot, history: tuple[str, ...]) -> Iterable[Intent]:
        """What the last few things the person said mean on this screen, latest first."""
        for line in list(history)[::-1][:MAX_LOOK_BACK]:
            if line.casefold().startswith(ASSISTANT_PREFIX) or _REPEAT.fullmatch(
                _strip_fillers(line)
            ):
                continue
            intent = self.parse(line, snapshot)
            if intent is not None and intent.intent not in CONTROL_INTENTS:
                yield intent

    def _replayed(
        self, text: str, snapshot: Snapshot, history: tuple[str, ...]
    ) -> Intent | None:
        for intent in self._earlier(snapshot, history):
            return intent.model_copy(update={"words": text})
        return None

    def _corrected(
        self, text: str, name: str, snapshot: Snapshot, history: tuple[str, ...]
    ) -> Intent | None:
        """The last request again with another target: "not her, the doctor"."""
        for intent in self._earlier(snapshot, history):
            old = getattr(intent, "target", None)
            if not isinstance(old, str):
                continue
            was = next((n for n in snapshot.nodes if n.name == old), None)
            prefer = frozenset({was.role}) if was is not None else None
            try:
                t = _resolve(name, snapshot, prefer, floor=ASK_FROM)
            except (_Unresolved, _Ambiguous):
                return None
            if t.node.name == old:
                return None
            return intent.model_copy(update={
                "target": t.node.name, "words": text,
                "confidence": min(intent.confidence, t.score),
            })
        return None

    def best(self, text: str, snapshot: Snapshot, lists: dict[str, SlotList]) -> _Parsed | None:
        """The best-built parse of one command: most literal text first; among parses with as
        much literal text, the one whose names fit the screen best."""
        results = sorted(recognize_all(text, self.intents, slot_lists=lists), key=_rank)
        chosen: _Parsed | None = None
        for result in results:
            if chosen is not None and result.text_chunks_matched < chosen.literal:
                break
            try:
                intent, exact = _build(result, text, snapshot)
            except _Unresolved:
                continue
            except _Ambiguous as amb:
                names = " or ".join(amb.options)
                intent = Clarify(
                    question=f"Did you mean {names}?", options=amb.options,
                    confidence=amb.score, words=text,
                )
                exact = False
            parsed = _Parsed(intent, exact, result.text_chunks_matched)
            if exact:
                return parsed
            if chosen is None or intent.confidence > chosen.intent.confidence:
                chosen = parsed
        return chosen


class _Parsing:
    """One utterance being planned: its parts are parsed once each, however often they're cut."""

    def __init__(self, planner: GrammarPlanner, snapshot: Snapshot) -> None:
        self.planner = planner
        self.snapshot = snapshot
        self.memo: dict[str, _Parsed | None] = {}

    def utterance(self, text: str, split: bool) -> _Parsed | None:
        """One command, or several joined by "and then"/"then"/"and"."""
        whole = self.single(text)
        if not split or (whole is not None and whole.exact):
            return whole
        # Free text or a fuzzy name may have swallowed a join: "type hi and then press enter",
        # "click the fan button and press enter". If every part is a command, it was a list.
        sequence = self.split(text, MAX_STEPS)
        if sequence is None:
            return whole
        steps, confidence = sequence
        return _Parsed(Sequence(steps=tuple(steps), confidence=confidence, words=text), False, 0)

    def split(self, text: str, budget: int) -> tuple[list[Step], float] | None:
        """The first way of cutting the text at joins where every part is one step."""
        if budget < 2:
            return None
        joins = [j for pattern in SEQUENCE_JOINS for j in pattern.finditer(text)]
        for join in joins:
            if len(self.memo) >= PARSE_BUDGET:
                return None  # long dictation full of "and": don't try every way to cut it
            left = _strip_fillers(text[: join.start()])
            # the end was stripped with the whole: "type thank you" keeps its words
            right = _strip_fillers(text[join.end():], end=False)
            if not left or not right:
                continue
            first = self.single(left)
            if first is None or not isinstance(first.intent, STEP_INTENTS):
                continue
            rest: tuple[list[Step], float] | None = None
            second = self.single(right)
            if first.intent.intent in SCREEN_CHANGING and (second is None or not second.exact):
                second = self.after_screen_change(right) or second
            if second is not None and isinstance(second.intent, STEP_INTENTS):
                rest = ([second.intent], second.intent.confidence)
            if second is None or not second.exact:
                more = self.split(right, budget - 1)
                if more is not None and (rest is None or more[1] >= rest[1]):
                    rest = more
            if rest is not None:
                return [first.intent, *rest[0]], min(first.intent.confidence, rest[1])
        return None

    def single(self, text: str) -> _Parsed | None:
        """One command: exact screen names first, then wildcards resolved by fuzzy matching."""
        if text not in self.memo:
            self.memo[text] = self._single(text)
        return self.memo[text]

    def after_screen_change(self, text: str) -> _Parsed | None:
        """A step parsed as if its names were on screen: for steps after one that changes it."""
        key = "\0later\0" + text
        if key not in self.memo:
            token = _NOT_ON_SCREEN_YET.set(True)
            try:
                self.memo[key] = self._single(text)
            finally:
                _NOT_ON_SCREEN_YET.reset(token)
        return self.memo[key]

    def _single(self, text: str) -> _Parsed | None:
        lists = self.planner._lists.get(self.snapshot, text)
        exact = self.planner.best(text, self.snapshot, lists)
        if exact is not None and exact.exact:
            return exact
        fuzzy = self.planner.best(text, self.snapshot, {**lists, **_WILDCARDS})
        found = fuzzy if exact is None else exact
        if exact is not None and fuzzy is not None and fuzzy.literal > exact.literal:
            found = fuzzy  # "type hi into the mesage box": the slip hid a field name
        if found is None or found.intent.confidence < ASK_FROM:
            button = button_for(text, self.snapshot)
            if button is not None:
                node, score = button
                intent = Activate(target=node.name, confidence=score, words=text)
                return _Parsed(intent, score == 1.0, 0)
        return found


# -- benchmark -----------------------------------------------------------------------------

BENCH_COMMANDS = (
    "click the send button",
    "press send",
    "type hello grandma into the message box",
    "tick urgent",
    "set volume to seventy",
    "select item 250",
    "open calendar",
    "press control c",
    "scroll down",
    "what does the status say",
    "yes",
    "click the fan button",
    "type I'll be late and then press enter",
    "hey juniper could you select radio four please",
)


def bench_scene(n_elements: int = 500) -> Snapshot:
    """A Messages-like screen padded to `n_elements` named elements."""
    from appliance.desktop.scene import Scene
    from appliance.desktop.sim import SimDesktop

    children: list[dict[str, Any]] = [
        {"role": "text", "name": "Message", "value": ""},
        {"role": "check box", "name": "Urgent"},
        {"role": "push button", "name": "Send"},
        {"role": "label", "name": "Status", "value": "Draft"},
        {"role": "slider", "name": "Volume", "value": 30, "min": 0, "max": 100},
        {"role": "list item", "name": "Radio 4"},
    ]
    roles = ("push button", "list item", "check box", "label", "menu item")
    children += [
        {"role": roles[i % len(roles)], "name": f"Item {i}"}
        for i in range(max(0, n_elements - len(children)))
    ]
    scene = Scene.model_validate({
        "applications": [
            {"name": "Messages", "windows": [{"title": "Messages", "children": children}]}
        ],
        "launchable": [{"name": "Calendar", "windows": [{"title": "Calendar"}]}],
    })
    return SimDesktop(scene).snapshot()


def bench_grammar(n_elements: int = 500, runs: int = 200) -> dict[str, float]:
    """Plan latency in ms on an `n_elements` scene over `runs` plans (BENCH_COMMANDS in turn).

    `p50_ms`/`p95_ms`: wall clock, one snapshot; `cpu_p95_ms`: this thread's CPU time (what the
    planner costs when other processes share the cores); `cold_*`: a fresh snapshot each plan,
    so the name index is rebuilt (a new screen each turn).
    """
    planner = GrammarPlanner()
    snapshot = bench_scene(n_elements)
    planner.plan("click send", snapshot)  # load templates and key tables once

    def timed(fresh: bool) -> tuple[list[float], list[float]]:
        snaps = [snapshot.model_copy() if fresh else snapshot for _ in range(runs)]
        wall, cpu = [], []
        for i, snap in enumerate(snaps):
            c0 = time.thread_time()
            wall.append(planner.plan(BENCH_COMMANDS[i % len(BENCH_COMMANDS)], snap).latency_ms)
            cpu.append((time.thread_time() - c0) * 1000)
        return wall, cpu

    def q(xs: list[float], at: int) -> float:
        return statistics.quantiles(xs, n=100, method="inclusive")[at - 1]

    warm, warm_cpu = timed(fresh=False)
    cold, cold_cpu = timed(fresh=True)
    return {
        "elements": float(len(snapshot.nodes)), "runs": float(runs),
        "p50_ms": q(warm, 50), "p95_ms": q(warm, 95), "max_ms": max(warm),
        "cpu_p50_ms": q(warm_cpu, 50), "cpu_p95_ms": q(warm_cpu, 95),
        "cold_p50_ms": q(cold, 50), "cold_p95_ms": q(cold, 95), "cold_cpu_p95_ms": q(cold_cpu, 95),
    }


if __name__ == "__main__":  # pragma: no cover
    print(bench_grammar())
