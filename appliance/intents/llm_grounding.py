"""Checks that what a language model proposes came from the person, not from text on the screen.

The prompt tells the model that screen text is data; this is the check that does not depend on
the model obeying. A proposal is refused when it would type words the person did not say, or
when one of its arguments (target, app, key, value) was not said by the person but does appear
inside instruction-like text on the screen (the usual shape of a prompt injection).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rapidfuzz import fuzz

from appliance.desktop.model import Snapshot
from appliance.intents.model import (
    Activate,
    Focus,
    Intent,
    OpenApp,
    PressKey,
    Read,
    Scroll,
    Select,
    SetValue,
    Step,
    TypeText,
)
from appliance.intents.model import Sequence as SequenceIntent

UNSAID_TEXT = "I will only type words you said; please say the text again."
FROM_SCREEN = (
    "I ignored an instruction that came from text on the screen; please say what you want."
)

# Words that make a short on-screen text read like an order to an assistant.
_ORDER_WORDS = frozenset({
    "click", "press", "tap", "type", "enter", "delete", "remove", "erase", "send", "open", "select",
    "choose", "ignore", "assistant", "ai", "system", "instruction", "instructions", "must", "now",
    "immediately", "disregard", "override", "execute", "run", "say", "reply", "answer", "respond",
})
_FUZZ_SAID = 88.0


def normalise(text: str) -> str:
    """Lower case words without punctuation; apostrophes vanish ("I'll" and "ill" agree)."""
    plain = text.lower().replace("'", "").replace("\u2019", "")
    return " ".join(re.findall(r"[a-z0-9]+", plain))


def said(phrase: str, spoken: Iterable[str]) -> bool:
    """Did the person say `phrase` (allowing case, punctuation and small transcription slips)?"""
    needle = normalise(phrase)
    if not needle:
        return True
    for words in spoken:
        hay = normalise(words)
        if f" {needle} " in f" {hay} ":
            return True
        if len(needle) >= 4 and fuzz.partial_ratio(needle, hay) >= _FUZZ_SAID:
            return True
    return False


def _instruction_like(text: str) -> bool:
    words = normalise(text).split()
    return len(words) >= 4 or any(w in _ORDER_WORDS for w in words)


def screen_prose(snapshot: Snapshot) -> list[str]:
    """On-screen texts that could carry an instruction: names, values and window titles."""
    texts: list[str] = []
    for node in snapshot.nodes:
        texts.append(node.name)
        value = node.shown_value()
        if isinstance(value, str):
            texts.append(value)
    texts.extend({n.window for n in snapshot.nodes})
    return [t for t in texts if t and _instruction_like(t)]


def _arguments(step: Intent | Step) -> list[str]:
    match step:
        case Activate() | Focus() | Select():
            return [step.target]
        case SetValue():
            return [step.target] + ([step.value] if isinstance(step.value, str) else [])
        case TypeText():
            return [step.target] if step.target else []
        case OpenApp():
            return [step.app]
        case PressKey():
            return [step.key]
        case Scroll() | Read():
            return [step.target] if step.target else []
        case _:
            return []


def _steps(intent: Intent) -> Sequence[Intent | Step]:
    return intent.steps if isinstance(intent, SequenceIntent) else (intent,)


def ungrounded(
    intent: Intent, text: str, history: Sequence[str], snapshot: Snapshot
) -> str | None:
    """A speakable reason to refuse this model proposal, or None when it is grounded."""
    spoken = [text, *history]
    prose = screen_prose(snapshot)
    for step in _steps(intent):
        if isinstance(step, TypeText) and not said(step.text, spoken):
            return UNSAID_TEXT
        for arg in _arguments(step):
            if said(arg, spoken):
                continue
            needle = normalise(arg)
            tokens = set(needle.split())
            if not tokens:
                continue
            for line in prose:
                hay = normalise(line)
                # Every word of the argument inside one instruction-like text, in any order:
                # "delete the conversation" carries "Delete conversation".
                if hay != needle and tokens <= set(hay.split()):
                    return FROM_SCREEN
    return None
