"""Spoken names to on-screen elements, shared by the grammar planner and the policy validator.

Spoken forms are compared with screen names after both are folded the same way: case and
punctuation dropped, spoken numbers as digits ("radio four" == "Radio 4"), leading articles and
trailing role words dropped ("the send button" == "Send"). Near misses score by rapidfuzz on the
letters and, for speech-recognition slips ("fan" for "send"), on a metaphone key (jellyfish).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import jellyfish
from rapidfuzz import fuzz, process

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.roles import BUTTON_ROLES, SELECTABLE_ROLES, TEXT_FIELD_ROLES
from appliance.words.numbers import digits_in
from appliance.words.symbols import alias_of, only_symbols, spelled_symbols, symbol_said

MIN_SCORE = 0.3
"""Below this a name is not a match at all (the policy rejects it anyway)."""
FUZZY_CAP = 0.95
"""Only an exact match scores 1.0, so a near miss never passes for one."""
SOUND_NEEDS_LETTERS = 20.0
"""A sound-alike counts only if some letters agree too (0..100)."""
OTHER_NUMBER = 0.5
"""A name with other numbers than were said is a poor match however alike the letters."""
SUBSET_SCORE = 0.9
"""Saying some of a name's words: likely meant, but another name may hold them too."""
SYMBOL_GUESS = 0.5
"""A symbol's name said ("minus") of a name that holds the symbol with more ("M−"): a
question (below the validator's CONFIRM_BELOW), never a press."""
SHORT_NAME = 2
"""A name of this many letters or fewer ("MS", "C") is matched only as said: any longer word
is letters away from it, so a near miss is noise ("times" is not "MS"). So is a name made of
symbols alone ("-", "<-"): "minus" is a few letters from "plus", and a wrong operator pressed
unasked is worse than a question."""


ROLE_WORDS: dict[str, frozenset[str]] = {
    "check box": frozenset({"check box", "check menu item"}),
    "checkbox": frozenset({"check box", "check menu item"}),
    "tick box": frozenset({"check box"}),
    "radio button": frozenset({"radio button"}),
    "toggle button": frozenset({"toggle button"}),
    "toggle": frozenset({"toggle button", "check box"}),
    "switch": frozenset({"toggle button", "check box"}),
    "combo box": frozenset({"combo box"}),
    "drop down": frozenset({"combo box"}),
    "dropdown": frozenset({"combo box"}),
    "text field": TEXT_FIELD_ROLES,
    "text box": TEXT_FIELD_ROLES,
    "menu item": frozenset({"menu item", "check menu item"}),
    "list item": frozenset({"list item"}),
    "button": BUTTON_ROLES,
    "field": TEXT_FIELD_ROLES | {"combo box"},
    "box": TEXT_FIELD_ROLES | {"check box", "combo box", "list"},
    "entry": TEXT_FIELD_ROLES,
    "tab": frozenset({"page tab"}),
    "link": frozenset({"link"}),
    "item": SELECTABLE_ROLES,
    "option": SELECTABLE_ROLES | {"radio button", "check box"},
    "menu": frozenset({"menu", "menu item"}),
    "slider": frozenset({"slider"}),
    "list": frozenset({"list"}),
    "icon": BUTTON_ROLES | {"icon"},
}
_ROLE_SUFFIX = re.compile(
    r"\s+(?:" + "|".join(re.escape(w) for w in sorted(ROLE_WORDS, key=len, reverse=True)) + r")$"
)
_ARTICLE = re.compile(r"^(?:the|a|an|my|this|that|your)\s+")
_NOT_WORD = re.compile(r"[^\w\s]+|_")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_APOSTROPHE = re.compile(r"['’]")


@dataclass(frozen=True)
class Match:
    node: Node
    score: float  # 0..1; 1.0 = exact (case/punctuation-insensitive)


@lru_cache(maxsize=8192)
def name_key(text: str) -> str:
    """A name folded for comparison: lower case, symbols that label spelled out ("+" is
    "plus"), other punctuation dropped, numbers as digits."""
    folded = _NOT_WORD.sub(" ", _APOSTROPHE.sub("", spelled_symbols(text).casefold()))
    return digits_in(" ".join(folded.split()))


@lru_cache(maxsize=8192)
def sound_key(key: str) -> str:
    return jellyfish.metaphone(key) if key else ""


@lru_cache(maxsize=1024)
def spoken_forms(words: str) -> tuple[tuple[str, ...], frozenset[str] | None]:
    """The ways a spoken reference may name an element, and the roles its role word hints at.

    "the send button" -> (("send button", "send"), button roles).
    """
    key = name_key(words)
    while (stripped := _ARTICLE.sub("", key)) != key:
        key = stripped
    forms = [key] if key else []
    hint: frozenset[str] | None = None
    m = _ROLE_SUFFIX.search(key)
    if m:
        core = key[: m.start()].strip()
        core = _ARTICLE.sub("", core)
        if core:
            forms.append(core)
            hint = ROLE_WORDS[m.group(0).strip()]
    return tuple(forms), hint


def _score(forms: tuple[str, ...], index: _Names) -> dict[int, float]:
    """Score of every candidate key (by index) against the spoken forms; exact = 1.0.

    Letters: the better of rapidfuzz's ratio and token_sort_ratio, and 0.9 when every spoken word
    is in the name ("delete" for "Delete conversation"). A metaphone match lifts a weak letter
    score halfway towards the sound score ("fan" for "send", "fone" for "phone").
    """
    exact = {i for form in forms if (i := index.position.get(form)) is not None}
    if not exact:  # "add" for a "+" button, but never over a name said as it is
        exact = {
            i for form in forms
            if (alias := alias_of(form)) and (i := index.position.get(alias)) is not None
        }
    if exact:
        return dict.fromkeys(exact, 1.0)
    keys, cutoff = index.keys, MIN_SCORE * 100
    scores: dict[int, float] = {}
    for form in forms:
        letters = {
            i: s for _k, s, i in process.extract(
                form, keys, scorer=fuzz.ratio, limit=None, score_cutoff=cutoff
            )
        }
        for _k, s, i in process.extract(
            form, keys, scorer=fuzz.token_sort_ratio, limit=None, score_cutoff=cutoff
        ):
            letters[i] = max(letters.get(i, 0.0), s)
        holding = index.containing(form.split())
        for i in holding:
            letters[i] = max(letters.get(i, 0.0), SUBSET_SCORE * 100)
        symbol = symbol_said(form) is not None
        sound = sound_key(form)
        if sound:
            for _k, s, i in process.extract(
                sound, index.sounds, scorer=fuzz.ratio, limit=None, score_cutoff=cutoff
            ):
                mine = letters.get(i)
                if mine is None:
                    mine = fuzz.ratio(form, keys[i])
                # a sound key of one letter, or no letter in common, is no evidence
                if s > mine and mine >= SOUND_NEEDS_LETTERS and len(sound) > 1:
                    letters[i] = (mine + s) / 2
        said_numbers = _numbers(form)
        said_words = _NUMBER.sub("", form).strip()
        for i, s in letters.items():
            if index.exact_only[i]:
                continue
            score = min(s / 100, FUZZY_CAP)
            if symbol:
                # A symbol's name is matched as said: one spelled alike ("M+" for "minus",
                # "Backspace" for "close") is no match; a name holding it is, and one that
                # holds the symbol with more ("M−") is asked about, never pressed.
                if i not in holding:
                    continue
                if index.symbolic[i]:
                    score = min(score, SYMBOL_GUESS)
            if said_numbers and said_numbers != index.numbers[i]:
                score *= OTHER_NUMBER  # "button 250" is not "Button 20"
            elif said_numbers and said_words:
                # Same numbers: the words must carry the match ("item 42" is not "Field 42").
                words = _NUMBER.sub("", keys[i]).strip()
                score = min(score, fuzz.ratio(said_words, words) / 100 if words else score)
            if score >= MIN_SCORE and score > scores.get(i, 0.0):
                scores[i] = score
    return scores


def _numbers(key: str) -> tuple[str, ...]:
    return tuple(sorted(_NUMBER.findall(key)))


class _Names:
    """Distinct folded names, their sound keys and a word index, for scoring."""

    def __init__(self, names: dict[str, list[str]]) -> None:
        """`names`: each folded key and the names on screen that fold to it."""
        keys = list(names)
        self.keys = keys
        self.position = {k: i for i, k in enumerate(keys)}
        self.sounds = [sound_key(k) for k in keys]
        self.numbers = [_numbers(k) for k in keys]
        self.exact_only = [len(k.replace(" ", "")) <= SHORT_NAME
                           or all(only_symbols(n) for n in names[k]) for k in keys]
        self.symbolic = [any(spelled_symbols(n) != n for n in names[k]) for k in keys]
        self.by_word: dict[str, set[int]] = {}
        for i, k in enumerate(keys):
            for w in k.split():
                self.by_word.setdefault(w, set()).add(i)

    def containing(self, words: list[str]) -> set[int]:
        """Names holding every one of the words."""
        sets = [self.by_word.get(w, set()) for w in words]
        return set.intersection(*sets) if sets else set()


class _ScreenIndex(_Names):
    """The names of one snapshot and the nodes that carry each."""

    def __init__(self, snapshot: Snapshot) -> None:
        by_key: dict[str, list[int]] = {}
        names: dict[str, list[str]] = {}
        for i, node in enumerate(snapshot.nodes):
            if node.name.strip():
                key = name_key(node.name)
                if key:
                    by_key.setdefault(key, []).append(i)
                    names.setdefault(key, []).append(node.name)
        super().__init__(names)
        self.nodes_of = [by_key[k] for k in self.keys]
        self.scored: dict[tuple[str, ...], dict[int, float]] = {}  # asked again by role, often


_last: tuple[Snapshot, _ScreenIndex] | None = None


def _index(snapshot: Snapshot) -> _ScreenIndex:
    """The index of this snapshot; the last one is kept, as a turn asks about one screen often."""
    global _last
    last = _last  # one read: another thread may replace it meanwhile
    if last is not None and last[0] is snapshot:
        return last[1]
    index = _ScreenIndex(snapshot)
    _last = (snapshot, index)
    return index


def find_targets(
    name: str, snapshot: Snapshot, roles: frozenset[str] | None = None, limit: int = 5
) -> list[Match]:
    """Best first. Exact beats fuzzy; the active window beats others; visible beats invisible."""
    forms, hint = spoken_forms(name)
    if not forms:
        return []
    index = _index(snapshot)
    scores = index.scored.get(forms)
    if scores is None:
        scores = index.scored[forms] = _score(forms, index)
    found: list[tuple[float, bool, bool, bool, int, Node]] = []
    for k, score in scores.items():
        for i in index.nodes_of[k]:
            node = snapshot.nodes[i]
            if roles is not None and node.role not in roles:
                continue
            active = node.app == snapshot.active_app and node.window == snapshot.active_window
            hinted = hint is not None and node.role in hint
            found.append((score, hinted, active, node.visible, i, node))
    if any(f[1] for f in found):
        # "the fan button": among buttons only, if any button is a match at all
        found = [f for f in found if f[1] or f[0] == 1.0]
    # An exact name first; then what is showing, so a folded menu item never outranks a
    # button on screen in the same window by a closer fuzzy score.
    found.sort(key=lambda f: (f[0] < 1.0, not f[1], not f[2], not f[3], -f[0], f[4]))
    return [Match(node=f[5], score=f[0]) for f in found[:limit]]


def best_name(words: str, names: Iterable[str]) -> tuple[str, float] | None:
    """The closest name to spoken words and its 0..1 score (rapidfuzz), or None below 0.3."""
    forms, _hint = spoken_forms(words)
    if not forms:
        return None
    folded: dict[str, list[str]] = {}
    for n in names:
        if n.strip() and (key := name_key(n)):
            folded.setdefault(key, []).append(n)
    keys = list(folded)
    scores = _score(forms, _Names(folded))
    if not scores:
        return None
    i = max(scores, key=lambda j: (scores[j], -j))
    return folded[keys[i]][0], scores[i]
