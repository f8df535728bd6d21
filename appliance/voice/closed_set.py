"""The sentences that can be said now: the grammar's templates x the live screen's names.

Like Home Assistant's Speech-to-Phrase, the recognizer is constrained to what the grammar can
act on. The full expansion of the templates is astronomically large ("<click> <named>" alone has
every verb x article x role), so each alternative keeps its first `CHOICES` wordings (the
templates list the commonest first) and optional words are tried both ways; templates with free
text ({text}, {value}) are left out, and what they cover goes to open transcription.
Skeletons (templates with the screen's slots unfilled) are built once per process; the names are
filled in once per screen (`closed_set`, cached on the names).
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import jellyfish
from hassil import Intents
from hassil.expression import (
    Alternative,
    Expression,
    Group,
    ListReference,
    Permutation,
    RuleReference,
    TextChunk,
)
from hassil.intents import TextSlotList
from rapidfuzz import fuzz, process

from appliance.intents.grammar.screen_lists import fixed_lists
from appliance.intents.grammar.templates import load_intents
from appliance.intents.grammar.wording import words

CHOICES = 3
"""Wordings kept per alternative: "(click|press|tap|hit|...)" is said as one of the first few."""
OPTIONAL_CHOICES = 1
"""Optional words are left out or said as their first wording ("[the|a|my]": "", "the")."""
SKELETONS_PER_TEMPLATE = 150
LIST_WORDINGS = 2
"""Wordings kept per value of a fixed list ("up" as "up" or "higher")."""
LIST_VALUES = {"role": 4, "key": 12}
"""Wordings kept of the long lists: the commonest role words ("button", ...) and keys."""
SCREEN_SLOTS = ("target", "app")
EXTRA = ("yes", "no")
"""Answers to a question, said in its listening window."""


class _FreeText(Exception):
    """The template holds a wildcard: its sentences cannot be listed."""


def _join(parts: Iterable[str]) -> str:
    return " ".join(" ".join(parts).split())


class _Expander:
    def __init__(self, intents: Intents) -> None:
        self.rules = intents.expansion_rules
        # {role}, {key}, {modifier} are given at parse time with the screen's names.
        self.lists = {**intents.slot_lists, **fixed_lists()}

    def expand(self, exp: Expression, limit: int) -> list[str]:
        if isinstance(exp, TextChunk):
            return [exp.text]
        if isinstance(exp, RuleReference):
            return self.expand(self.rules[exp.rule_name].expression, limit)
        if isinstance(exp, ListReference):
            return self._list(exp, limit)
        if isinstance(exp, Alternative):
            items = exp.items[:CHOICES]
            if exp.is_optional:
                # Leaving the optional words out is the commonest way to say it: first, so that
                # a capped product still holds it.
                said = [i for i in exp.items if not (isinstance(i, TextChunk) and i.is_empty)]
                items = [TextChunk.empty(), *said[:OPTIONAL_CHOICES]]
            out: list[str] = []
            for item in items:
                out.extend(self.expand(item, limit))
            return list(dict.fromkeys(out))[:limit]
        if isinstance(exp, Permutation):
            # Said in the order written: the other orders add little but size.
            return self._sequence(exp.items, limit)
        if isinstance(exp, Group):
            return self._sequence(exp.items, limit)
        raise TypeError(exp)

    def _sequence(self, items: Sequence[Expression], limit: int) -> list[str]:
        parts = [self.expand(item, limit) for item in items]
        product = itertools.islice(itertools.product(*parts), limit)
        return list(dict.fromkeys(_join(p) for p in product))

    def _list(self, ref: ListReference, limit: int) -> list[str]:
        if ref.list_name in SCREEN_SLOTS:
            return ["{" + ref.list_name + "}"]
        slot_list = self.lists.get(ref.list_name)
        if not isinstance(slot_list, TextSlotList):
            raise _FreeText(ref.list_name)
        out: list[str] = []
        for value in slot_list.values:
            out.extend(self.expand(value.text_in, limit)[:LIST_WORDINGS])
        return out[: LIST_VALUES.get(ref.list_name, len(out))]


@cache
def skeletons() -> tuple[str, ...]:
    """Every template's sentences with {target} / {app} left as slots (once per process)."""
    intents = load_intents()
    expander = _Expander(intents)
    out: dict[str, None] = {}
    for intent in intents.intents.values():
        for block in intent.data:
            for sentence in block.sentences:
                try:
                    found = expander.expand(sentence.expression, SKELETONS_PER_TEMPLATE)
                except _FreeText:
                    continue
                out.update(dict.fromkeys(s for s in found if s))
    out.update(dict.fromkeys(EXTRA))
    return tuple(out)


@lru_cache(maxsize=65536)
def _sound(word: str) -> str:
    return str(jellyfish.metaphone(word)) or word


def sounds(text: str) -> str:
    """How `text` sounds, roughly (metaphone per word): "take urgent" and "tick urgent" agree."""
    return " ".join(_sound(w) for w in words(text))


@dataclass(frozen=True)
class SentenceSet:
    """The sentences of one screen (and how each sounds), and how long they took to build."""

    sentences: tuple[str, ...]
    sounds: tuple[str, ...]
    build_ms: float
    cased: dict[str, str]
    """How the screen writes a name's words ("grandma": "Grandma"): Whisper scores a sentence
    written as it would write it."""

    def nearest(self, text: str, limit: int) -> list[str]:
        """About `limit` sentences near `text`, half by spelling and half by sound (a cheap
        first pass: Whisper misspells what it half heard, and mishears alike-sounding words)."""
        query = " ".join(words(text))
        half = max(1, limit // 2)
        by_text = process.extract(query, self.sentences, scorer=fuzz.ratio, limit=half)
        by_sound = process.extract(sounds(query), self.sounds, scorer=fuzz.ratio, limit=limit)
        found = [i for _s, _score, i in by_text]
        for _s, _score, i in by_sound:
            if len(found) >= limit:
                break
            if i not in found:
                found.append(i)
        return [self.sentences[i] for i in found]

    def __contains__(self, text: str) -> bool:
        return " ".join(words(text)) in self._index

    @property
    def _index(self) -> frozenset[str]:
        return _index(self.sentences)


@lru_cache(maxsize=4)
def _index(sentences: tuple[str, ...]) -> frozenset[str]:
    return frozenset(sentences)


_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def _spoken(name: str) -> str:
    return " ".join(words(name))


@lru_cache(maxsize=4)
def closed_set(targets: tuple[str, ...], apps: tuple[str, ...]) -> SentenceSet:
    """The sentences that can be said on a screen with these names: rebuilt only when they
    change (the cache is keyed on the names)."""
    start = time.monotonic()
    fills = {
        "target": list(dict.fromkeys(n for n in map(_spoken, targets) if n)),
        "app": list(dict.fromkeys(n for n in map(_spoken, apps) if n)),
    }
    out: dict[str, None] = {}
    for skeleton in skeletons():
        slots = [s for s in SCREEN_SLOTS if "{" + s + "}" in skeleton]
        if not slots:
            out[skeleton] = None
            continue
        for values in itertools.product(*(fills[s] for s in slots)):
            sentence = skeleton
            for slot, value in zip(slots, values, strict=True):
                sentence = sentence.replace("{" + slot + "}", value, 1)
            out[sentence] = None
    said = tuple(out)
    cased = {w.casefold(): w for n in (*targets, *apps) for w in _WORD.findall(n)}
    return SentenceSet(said, tuple(map(sounds, said)), (time.monotonic() - start) * 1000, cased)
