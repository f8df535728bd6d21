"""The intent each template means, built from one parse and the screen it was said on."""

from __future__ import annotations

import re

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.resolve import (
    SUBSET_SCORE,
    best_name,
    find_targets,
    name_key,
    spoken_forms,
)
from appliance.desktop.roles import PRESSABLE_ROLES, SELECTABLE_ROLES
from appliance.intents.grammar.messages import added_to_list, composed, dictated, searched
from appliance.intents.grammar.reading import Reading
from appliance.intents.grammar.targets import Unresolved, any_of, containing
from appliance.intents.grammar.values import set_value, slider
from appliance.intents.model import (
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
    ShowMarks,
    TypeText,
    Undo,
)
from appliance.words.symbols import symbol_said

_NAMES_A_FIELD = re.compile(
    r"\binto\b|\b(?:in|on)\s+(?:the\s+)?\S+(?:\s+\S+)?\s+(?:field|box|text box|entry)$",
    re.IGNORECASE,
)
"""Dictation that ends by naming a field ("... into field 7"): that field was not found."""
_WORD_CHAR = re.compile(r"\w")


LEARN_AT_THE_KIOSK = ("I learn a voice by listening to it: say 'hey juniper, learn my voice' "
                      "to my microphone, or a caregiver can add recordings with appliance "
                      "enroll. What would you like me to do now?")


def build(reading: Reading) -> tuple[Intent, bool]:
    """The intent for one parse and whether every name in it matched exactly."""
    name = reading.result.intent.name
    words, snapshot, slots, meaning = reading.text, reading.snapshot, reading.slots, reading.meaning
    match name:
        case "confirm":
            return Confirm(words=words), True
        case "deny":
            return Deny(words=words), True
        case "cancel":
            return Cancel(words=words), True
        case "undo":
            return Undo(words=words), True
        case "show_marks":
            return ShowMarks.model_validate({"kind": slots["kind"].value, "words": words}), True
        case "press_key":
            mods = [slots[m].value for m in ("mod1", "mod2") if m in slots]
            modifiers: tuple[Modifier, ...] = tuple(dict.fromkeys(mods))
            button = None if modifiers or words.rstrip(" .!").endswith("key") else (
                _symbol_button(reading.said("key"), snapshot))
            if button is not None:  # "press plus" on a calculator: its + button, not a key
                return Activate(target=button.name, words=words), True
            # "save" with a Save button on screen: the button the person sees, not the chord.
            named = _named_button(words.split()[0], snapshot) if modifiers else None
            if named is not None:
                return Activate(target=named.name, words=words), True
            return PressKey(key=str(slots["key"].value), modifiers=modifiers, words=words), True
        case "activate":
            try:
                t = reading.target()
            except Unresolved:
                missing = _symbol_not_shown(reading.spoken("target"))
                if missing is None:
                    raise
                # "click minus" with no minus button: the validator says it is not there,
                # rather than "didn't understand" or a guess at another operator.
                return Activate(target=missing, words=words), False
            return Activate(target=t.node.name, confidence=t.score, words=words), t.score == 1.0
        case "bare_name":
            t = reading.target()
            if t.node.role in SELECTABLE_ROLES:  # a menu item said alone: "jazz fm please"
                return Select(target=t.node.name, words=words), True
            return Activate(target=t.node.name, words=words), True
        case "select" | "select_by_verb":
            t = reading.target()
            if t.node.role in SELECTABLE_ROLES:
                return Select(target=t.node.name, confidence=t.score, words=words), t.score == 1.0
            return Activate(target=t.node.name, confidence=t.score, words=words), t.score == 1.0
        case "focus":
            t = reading.target()
            return Focus(target=t.node.name, confidence=t.score, words=words), t.score == 1.0
        case "go_to":
            t = reading.target()
            exact = t.score == 1.0
            if t.node.role in SELECTABLE_ROLES:
                return Select(target=t.node.name, confidence=t.score, words=words), exact
            return Focus(target=t.node.name, confidence=t.score, words=words), exact
        case "type_text":
            typed = reading.said("text")
            if not typed:
                raise Unresolved("nothing to type")
            if "target" not in slots:
                if _NAMES_A_FIELD.search(typed):
                    raise Unresolved("a field was named but is not on the screen")
                return TypeText(text=typed, words=words), False
            t = reading.target()
            return TypeText(text=typed, target=t.node.name, confidence=t.score, words=words), False
        case "set_value":
            return set_value(reading)
        case "open_app":
            spoken = reading.spoken("app")
            found = best_name(spoken, (*snapshot.applications, *snapshot.launchable))
            if found is None:
                raise Unresolved(spoken)
            app, score = found
            return OpenApp(app=app, confidence=score, words=words), score == 1.0
        case "scroll":
            direction = str(slots["direction"].value)
            if "target" in slots:
                t = reading.target()
                return Scroll(
                    direction=direction,
                    target=t.node.name, confidence=t.score, words=words,
                ), t.score == 1.0
            return Scroll(direction=direction, words=words), True
        case "read":
            what = str(slots["what"].value)
            if what == "element":
                t = reading.target()
                return Read(
                    what="element", target=t.node.name, confidence=t.score, words=words
                ), t.score == 1.0
            return Read(what=what, words=words), True
        case "read_which":
            # the element holding a value, rather than a tab of the same name
            spoken = reading.spoken("target")
            holding = containing(spoken, snapshot, meaning.roles or frozenset())
            if len(holding) == 1:
                node = holding[0].node
                score = 1.0 if name_key(node.name) in spoken_forms(spoken)[0] else SUBSET_SCORE
                return Read(what="element", target=node.name, confidence=score, words=words), (
                    score == 1.0
                )
            t = reading.resolve(spoken)
            return Read(what="element", target=t.node.name, confidence=t.score, words=words), (
                t.score == 1.0
            )
        case "read_about":
            t = any_of(str(slots["target"].value), snapshot, meaning.floor,
                       reading.not_on_screen_yet)
            return Read(what="element", target=t.node.name, confidence=t.score, words=words), (
                False
            )
        case "adjust" | "level" | "set_number":
            return slider(reading)
        case "show":
            t = reading.target()
            return Select(target=t.node.name, confidence=t.score, words=words), t.score == 1.0
        case "purpose":
            found = max(
                (f for alt in str(slots["app"].value).split("|")
                 if (f := best_name(alt, (*snapshot.applications, *snapshot.launchable)))),
                key=lambda f: f[1], default=None,
            )
            if found is None or found[1] < meaning.floor:
                raise Unresolved("no app for that")
            # the app in use already: something in it was likely meant; the model may know
            score = found[1] if found[0] != snapshot.active_app else meaning.in_use_confidence
            return OpenApp(app=found[0], confidence=score, words=words), False
        case "search":
            return searched(reading), False
        case "add_to_list":
            return added_to_list(reading), False
        case "write_in":
            return dictated(reading), False
        case "compose" | "reply_with":
            return composed(reading), False
        case "learn_voice":
            return Clarify(question=LEARN_AT_THE_KIOSK, confidence=meaning.confidence,
                           words=words), False
        case "vague":
            return Clarify(
                question=str(slots["question"].value), confidence=meaning.confidence, words=words
            ), False
    raise Unresolved(name)  # pragma: no cover - a template intent with no builder


def _symbol_not_shown(spoken: str) -> str | None:
    """The symbol's name a spoken target says ("minus"), when it names no element on screen."""
    forms, _hint = spoken_forms(spoken)
    return next((said for form in forms if (said := symbol_said(form)) is not None), None)


def _exact_buttons(words: str, snapshot: Snapshot) -> list[Node]:
    """The showing, enabled buttons of the active window named exactly by the words."""
    return [
        m.node
        for m in find_targets(words, snapshot, roles=PRESSABLE_ROLES, limit=10)
        if m.score == 1.0 and m.node.visible and m.node.enabled
        and m.node.app == snapshot.active_app and m.node.window == snapshot.active_window
    ]


def _named_button(word: str, snapshot: Snapshot) -> Node | None:
    """The one showing button of the active window named exactly as a shortcut's word ("save"
    with a Save button on screen): the button is what the person sees."""
    found = {node.id: node for node in _exact_buttons(word, snapshot)}
    return next(iter(found.values())) if len(found) == 1 else None


def _symbol_button(spoken: str, snapshot: Snapshot) -> Node | None:
    """The one showing button of the active window labelled by the symbol a key's spoken name
    says ("plus" for "+"): a calculator's key is pressed on screen. A worded button ("Enter")
    stays a key: "press" says key, "click" says button."""
    exact = {node.name: node for node in _exact_buttons(spoken, snapshot)
             if not _WORD_CHAR.search(node.name)}
    return next(iter(exact.values())) if len(exact) == 1 else None
