"""Writing and searching: the steps the grammar adds itself around the words to type."""

from __future__ import annotations

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.roles import PRESSABLE_ROLES, TEXT_FIELD_ROLES
from appliance.intents.grammar.reading import Reading
from appliance.intents.grammar.targets import Unresolved
from appliance.intents.grammar.wording import words
from appliance.intents.model import Activate, Select, Sequence, Step, TypeText

SEARCH_WORDS = frozenset({"search", "find", "filter"})


def search_field(snapshot: Snapshot) -> Node | None:
    fields = [n for n in snapshot.in_active_window()
              if n.role in TEXT_FIELD_ROLES and not n.secret and n.enabled
              and SEARCH_WORDS & set(words(n.name))]
    return fields[0] if len(fields) == 1 else None


def _pressable_starting(word: str, snapshot: Snapshot) -> Node | None:
    """The button whose name is or begins with this word (the shortest such name)."""
    found = [n for n in snapshot.in_active_window()
             if n.role in PRESSABLE_ROLES and n.enabled and words(n.name)[:1] == [word]]
    return min(found, key=lambda n: len(n.name)) if found else None


def _message_field(snapshot: Snapshot, prefer: str) -> Node | None:
    """The text field to write a message in: the one named like `prefer`, else the only one."""
    fields = [n for n in snapshot.in_active_window()
              if n.role in TEXT_FIELD_ROLES and not n.secret and n.enabled
              and not SEARCH_WORDS & set(words(n.name))]
    named = [n for n in fields if prefer in words(n.name)]
    if len(named) == 1:
        return named[0]
    return fields[0] if len(fields) == 1 else None


def composed(reading: Reading) -> Sequence:
    """Writing to someone: [pick the contact | press Reply], type the words, press send."""
    text, snapshot = reading.text, reading.snapshot
    typed = reading.said("text")
    if not typed:
        raise Unresolved("nothing to say")
    steps: list[Step] = []
    confidence = reading.meaning.confidence
    if reading.result.intent.name == "compose":
        contact = reading.target()
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
        raise Unresolved("no message field or send button")
    steps.append(TypeText(text=typed, target=field.name, words=text))
    steps.append(Activate(target=send.name, words=text))
    return Sequence(steps=tuple(steps), confidence=confidence, words=text)
