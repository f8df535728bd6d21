"""Hassil slot lists of the live screen's names, cut down to the words of each utterance."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from hassil import TextSlotList, WildcardSlotList
from hassil.intents import SlotList

from appliance.desktop.model import Snapshot
from appliance.desktop.resolve import ROLE_WORDS
from appliance.intents.grammar.wording import words
from appliance.intents.keys import MODIFIERS, PHONETIC, key_names
from appliance.words.numbers import spoken_digits
from appliance.words.symbols import spelled_symbols

WILDCARDS: dict[str, SlotList] = {
    "target": WildcardSlotList(name="target"),
    "app": WildcardSlotList(name="app"),
}
"""The second pass: any words in a name's place, resolved against the screen by fuzzy match."""
_DIGIT = re.compile(r"\d")


def _plain_list(name: str, pairs: Iterable[tuple[str, Any]]) -> TextSlotList:
    """A slot list whose inputs are literal text, never templates: screen text is data."""
    return TextSlotList.from_tuples(list(pairs), allow_template=False, name=name)


@cache
def fixed_lists() -> dict[str, SlotList]:
    """The lists that are the same on every screen: role words, keys, modifiers, the spelling
    alphabet."""
    return {
        "role": _plain_list("role", ((w, w) for w in ROLE_WORDS)),
        "key": _plain_list("key", key_names().items()),
        "modifier": _plain_list("modifier", MODIFIERS.items()),
        "phonetic": _plain_list("phonetic", PHONETIC.items()),
    }


@lru_cache(maxsize=8192)
def _name_entry(name: str) -> tuple[str, frozenset[str], frozenset[str], bool, str]:
    """A name, its words, its words without digits, whether it has digits, and how its
    symbols are said ("" when it has none: "+" is "plus", "M+" is "M plus")."""
    said = frozenset(words(name))
    plain = frozenset(w for w in said if not _DIGIT.search(w))
    spelled = " ".join(spelled_symbols(name).split())
    return name, said, plain, len(plain) < len(said), "" if spelled == name else spelled


class _NameList:
    """One kind of screen name (elements or applications), ready to be cut down per utterance.

    A name can only match as a slot value if all its words were said, so each utterance gets a
    slot list of just those names (and their spoken-digit forms: "Radio 4" as "radio four";
    their symbols said: "+" as "plus").
    Building a hassil list of every name on a big new screen would cost more than the parse.
    """

    def __init__(self, names: Iterable[str]) -> None:
        self.entries = [_name_entry(n) for n in dict.fromkeys(names) if n.strip()]

    def for_words(self, said: frozenset[str], list_name: str) -> TextSlotList:
        pairs: list[tuple[str, str]] = []
        for name, named, plain, has_digits, spelled in self.entries:
            if not plain <= said:
                continue
            if named <= said:
                pairs.append((name, name))
            if spelled and set(words(spelled)) <= said:
                pairs.append((spelled, name))
            if has_digits:
                spoken = spoken_digits(name)
                if set(words(spoken)) <= said:
                    pairs.append((spoken, name))
        return _plain_list(list_name, pairs)


@dataclass(frozen=True)
class _Screen:
    snapshot: Snapshot
    names: tuple[tuple[str, ...], tuple[str, ...]]
    targets: _NameList
    apps: _NameList


class ScreenLists:
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
        said = frozenset(words(text))
        return {
            **fixed_lists(),
            "target": screen.targets.for_words(said, "target"),
            "app": screen.apps.for_words(said, "app"),
        }
