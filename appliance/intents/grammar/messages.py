"""Writing and searching: the steps the grammar adds itself around the words to type."""

from __future__ import annotations

import re

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.resolve import find_targets
from appliance.desktop.roles import (
    DOCUMENT_ROLES,
    LIST_ROLES,
    PRESSABLE_ROLES,
    TEXT_FIELD_ROLES,
)
from appliance.intents.grammar.reading import Reading
from appliance.intents.grammar.targets import Unresolved
from appliance.intents.grammar.wording import words
from appliance.intents.model import (
    Activate,
    Clarify,
    Focus,
    PressKey,
    Select,
    Sequence,
    Step,
    TypeText,
)
from appliance.words.sending import sends

SEARCH_WORDS = frozenset({"search", "find", "filter"})
MAX_DEPTH = 64  # ancestors looked through: a tree deeper than the adapter reads is no page
SEARCH_BUTTON_WORDS = SEARCH_WORDS | {"go"}
LIST_FIELD = re.compile(r"\b(?:add|item|new|list|todo|task|entry)\b", re.IGNORECASE)
"""A field named for adding to a list ("New item", "Add a task")."""

NOT_WORDS_TO_WRITE = re.compile(
    r"^(?:to|back|a (?:message|text|note|letter)|an (?:email|e-mail)|someone|somebody"
    r"|something|anything)\b",
    re.IGNORECASE,
)
"""What follows "write" or "reply" when it names whom, how or what kind, not the words:
"write to grandma", "write a message", "reply to her", "write something nice" (words for a
language model to find, if there is one)."""


def _text_fields(snapshot: Snapshot) -> list[Node]:
    """The active window's text fields a person may write in: enabled, showing, not secret;
    a page's own, when it has any, rather than its browser's ("Address and search bar")."""
    fields = [n for n in snapshot.in_active_window()
              if n.role in TEXT_FIELD_ROLES and not n.secret and n.enabled and n.visible]
    on_page = [n for n in fields if _in_document(n, snapshot)]
    return on_page or fields


def _in_document(node: Node, snapshot: Snapshot) -> bool:
    """Whether a document (a web page, a letter) holds the element."""
    parent, depth = node.parent_id, 0
    while parent is not None and depth < MAX_DEPTH:
        above = snapshot.node(parent)
        if above is None:
            return False
        if above.role in DOCUMENT_ROLES:
            return True
        parent, depth = above.parent_id, depth + 1
    return False


def _searches(node: Node) -> bool:
    return bool(SEARCH_WORDS & set(words(node.name)))


def _sending_button(snapshot: Snapshot) -> bool:
    """Whether the window has a button that sends its fields (a message, a form)."""
    return any(n.role in PRESSABLE_ROLES and sends(n.name) for n in snapshot.in_active_window())


def search_field(snapshot: Snapshot) -> Node | None:
    """The one field named for searching; else the window's only text field, unless the
    window sends what is typed (a message's only field is no search box)."""
    fields = _text_fields(snapshot)
    named = [n for n in fields if _searches(n)]
    if len(named) == 1:
        return named[0]
    if not named and len(fields) == 1 and not _sending_button(snapshot):
        return fields[0]
    return None


def _pressable_starting(word: str, snapshot: Snapshot) -> Node | None:
    """The button whose name is or begins with this word (the shortest such name)."""
    found = [n for n in snapshot.in_active_window()
             if n.role in PRESSABLE_ROLES and n.enabled and words(n.name)[:1] == [word]]
    return min(found, key=lambda n: len(n.name)) if found else None


def _pressable_named(said: frozenset[str], snapshot: Snapshot) -> Node | None:
    """The one showing button whose name is one of these words alone ("Search", "Go")."""
    found = [n for n in snapshot.in_active_window()
             if n.role in PRESSABLE_ROLES and n.enabled and n.visible
             and len(words(n.name)) == 1 and words(n.name)[0] in said]
    return found[0] if len(found) == 1 else None


def _entered(field: Node, typed: str, button: Node | None, text: str) -> list[Step]:
    """Type into a field, then press its button, else Enter in it (focused first: typing
    through EditableText leaves the focus where it was)."""
    target = field.name or None
    if button is not None:
        return [TypeText(text=typed, target=target, words=text),
                Activate(target=button.name, words=text)]
    return [*([Focus(target=field.name, words=text)] if field.name else []),
            TypeText(text=typed, target=target, words=text),
            PressKey(key="Return", words=text)]


def searched(reading: Reading) -> Sequence:
    """Searching: the words into the search field, then its button or Enter."""
    typed, snapshot = reading.said("text"), reading.snapshot
    field = search_field(snapshot)
    if not typed or field is None:
        raise Unresolved("no search field")
    button = _pressable_named(SEARCH_BUTTON_WORDS, snapshot)
    return Sequence(steps=tuple(_entered(field, typed, button, reading.text)),
                    confidence=reading.meaning.confidence, words=reading.text)


def added_to_list(reading: Reading) -> Sequence:
    """"add milk to the list": into the list's entry (the window's only text field, beside a
    list or named for adding), then its Add button or Enter."""
    typed, snapshot = reading.said("text"), reading.snapshot
    fields = [n for n in _text_fields(snapshot) if not _searches(n)]
    has_list = any(n.role in LIST_ROLES for n in snapshot.in_active_window())
    named = [n for n in fields if LIST_FIELD.search(n.name)]
    field = named[0] if len(named) == 1 else fields[0] if len(fields) == 1 else None
    if not typed or field is None or _sending_button(snapshot) or not (has_list or named):
        raise Unresolved("no list entry")
    button = _pressable_starting("add", snapshot)
    return Sequence(steps=tuple(_entered(field, typed, button, reading.text)),
                    confidence=reading.meaning.confidence, words=reading.text)


def _names_a_button(text: str, snapshot: Snapshot) -> bool:
    """Whether the whole of what was said is a button's name ("reply all")."""
    return any(m.score == 1.0 for m in find_targets(text, snapshot, roles=PRESSABLE_ROLES))


def dictated(reading: Reading) -> TypeText | Clarify:
    """"write thank you for the flowers": into the focused text field, else the only one; with
    several and none focused, which one is asked."""
    typed, snapshot, text = reading.said("text"), reading.snapshot, reading.text
    if not typed or NOT_WORDS_TO_WRITE.match(typed) or _names_a_button(text, snapshot):
        raise Unresolved("no words to write")
    fields = _text_fields(snapshot)
    focused = [n for n in fields if "focused" in n.states]
    if len(focused) == 1:
        return TypeText(text=typed, target=focused[0].name or None, words=text)
    fields = [n for n in fields if not _searches(n)]
    if len(fields) == 1:
        return TypeText(text=typed, target=fields[0].name or None, words=text)
    names = tuple(dict.fromkeys(n.name for n in fields if n.name))
    if len(names) < 2 or len(names) < len(fields):
        raise Unresolved("no field to write in")  # none, or some that cannot be told apart
    return Clarify(question=f"Which field should I write in: {' or '.join(names)}?",
                   options=names, confidence=reading.meaning.confidence, words=text)


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
        # "reply see you soon", but not "reply to her" nor a button's name ("reply all")
        if NOT_WORDS_TO_WRITE.match(typed) or _names_a_button(text, snapshot):
            raise Unresolved("no words to reply with")
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
