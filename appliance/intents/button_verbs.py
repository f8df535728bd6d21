"""Buttons named by their verb: "delete this email", "throw this one away", "reply to Margaret".

The grammar's last resort, after its templates found nothing sure. A button whose name begins
with the request's verb is meant when every other word only points at the object ("this",
"the whole", "email"); everyday verbs are first rewritten to the ones buttons carry ("throw away"
is Delete, "answer" is Reply). Exact names stay the templates' job.
"""

from __future__ import annotations

import re

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.roles import PRESSABLE_ROLES

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")

# Everyday ways of saying a button's verb. Whole-utterance rewrites, tried in order.
VERB_SAYINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), verb) for pattern, verb in (
        (r"^throw (.+) (?:away|out)$", r"delete \1"),
        (r"^(?:throw away|throw out|bin|trash|get rid of|erase|discard|remove)\b", "delete"),
        (r"^(?:answer|respond to|respond|write back to|write back)\b", "reply"),
        (r"^(?:start playing|resume playing|resume|unpause|carry on playing)\b", "play"),
        (r"^(?:i need|i want|i'd like|get me|give me|get|need) (?:some |a bit of )?help\b",
         "help"),
        (r"^(?:turn|switch) on\b", "start"),
        (r"^(?:(?:put|set|change|turn) (?:everything|it all|all|things|it) back to "
         r"(?:the )?(?:defaults?|normal|how it was)|restore (?:the )?defaults?)$", "reset"),
    )
)
# Words that say which thing a verb acts on without naming it: "delete this email". Not "a" or
# "an": "send an email" asks for a new one, not for the Send button.
OBJECT_WORDS = frozenset({
    "it", "this", "that", "these", "those", "them", "one", "ones", "the", "my",
    "your", "our", "whole", "entire", "all", "everything", "email", "emails", "mail",
    "message", "messages", "conversation", "conversations", "chat", "item", "items", "thing",
    "things", "change", "changes", "setting", "settings", "selected", "current", "with", "me",
})
# Verbs that only say "use this button": "set the sleep timer", "start the timer".
PLAIN_VERBS = frozenset({"set", "start", "use", "do", "run", "open", "show"})
ADDRESSED_VERBS = frozenset({"reply", "forward"})
"""Verbs whose "to NAME" says who it goes to, not which button: "reply to Margaret"."""
VERB_ONLY_CONFIDENCE = 0.8
"""The verb matched but the rest of the button's name was not said ("reset everything")."""


def button_for(text: str, snapshot: Snapshot) -> tuple[Node, float] | None:
    """The button named by the request's leading verb, and how surely; None if none or two."""
    said_text = " ".join(_words(text))
    for pattern, verb in VERB_SAYINGS:
        said_text = pattern.sub(verb, said_text)
    said = said_text.split()
    if not said:
        return None
    if said[0] in ADDRESSED_VERBS and said[1:2] == ["to"]:
        said = said[:1]
    best: list[tuple[float, int, Node]] = []
    for node in snapshot.in_active_window():
        if node.role not in PRESSABLE_ROLES or not node.enabled or not node.name:
            continue
        name = _words(node.name)
        score = _verb_score(said, name)
        if score is None and said[0] in PLAIN_VERBS:
            score = _verb_score(said[1:], name, verb_led=False)
        if score is not None:
            best.append((score, len(name), node))
    if not best:
        return None
    best.sort(key=lambda b: (-b[0], -b[1]))
    top = [b for b in best if b[:2] == best[0][:2]]
    if len({b[2].name for b in top}) > 1:
        return None  # two buttons fit as well: the model (or a question) must decide
    score, _n, node = best[0]
    return node, score


def _verb_score(said: list[str], name: list[str], verb_led: bool = True) -> float | None:
    """1.0 when every word of the name was said and the rest only points at the object; the
    verb-only confidence when just the leading verb was said; None when it does not fit."""
    if not said or not name:
        return None
    if verb_led and said[0] != name[0]:
        return None
    extra = [w for w in said if w not in name]
    if any(w not in OBJECT_WORDS for w in extra):
        return None
    if set(name) <= set(said):
        return 1.0
    return VERB_ONLY_CONFIDENCE if verb_led else None


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())
