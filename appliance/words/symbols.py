"""Spoken names of the symbols that label buttons: "+" is said "plus", "÷" "divide".

Calculators, editors and web pages name buttons by a symbol alone, which the name folding would
otherwise drop as punctuation. Each symbol has one name it folds to and the other ways people
say it; the name is also the key it stands for, where there is one.
"""

from __future__ import annotations

import re

SYMBOL_NAMES: dict[str, str] = {
    "+/-": "plus minus",
    "+/−": "plus minus",
    "+": "plus",
    "−": "minus",  # U+2212, the minus sign calculators draw
    "-": "minus",
    "–": "minus",
    "×": "times",
    "*": "times",
    "∗": "times",
    "÷": "divide",
    "/": "divide",
    "∕": "divide",
    "=": "equals",
    "%": "percent",
    "±": "plus minus",
    "√": "square root",
    "²": "squared",
    "π": "pi",
    ".": "point",
    ",": "comma",
    "⌫": "backspace",
    "<-": "backspace",  # galculator's erase key, drawn as an ASCII arrow
    "←": "back",
    "→": "forward",
    "✕": "close",
    "✖": "close",
    "⨯": "close",
}
"""A symbol standing alone (or as the whole of a word) -> the words it folds to."""

SPOKEN_ALIASES: dict[str, str] = {
    "add": "plus",
    "and": "plus",
    "subtract": "minus",
    "take away": "minus",
    "multiply": "times",
    "multiplied by": "times",
    "into": "times",
    "divided by": "divide",
    "over": "divide",
    "equal": "equals",
    "is": "equals",
    "makes": "equals",
    "dot": "point",
    "decimal": "point",
    "decimal point": "point",
    "per cent": "percent",
    "delete": "backspace",
    "back space": "backspace",
    "go back": "back",
    "previous": "back",
    "next": "forward",
    "exit": "close",
}
"""Other ways to say a symbol's name; tried only when no name on screen is said exactly."""

SPOKEN_ABBREVIATIONS: dict[str, str] = {
    "clear": "c",
    "all clear": "ac",
    "clear all": "ac",
    "clear entry": "ce",
    "memory clear": "mc",
    "memory recall": "mr",
    "memory store": "ms",
    "memory plus": "m plus",
    "memory add": "m plus",
    "memory minus": "m minus",
    "memory subtract": "m minus",
}
"""What people say for the short labels of calculator-like keypads, as folded names."""

_SYMBOL = re.compile("|".join(re.escape(s) for s in sorted(SYMBOL_NAMES, key=len, reverse=True)))
_WORD_CHAR = re.compile(r"\w")
OPERATORS = frozenset("×÷−±√²π")
"""Symbols that are never a separator or part of a word, wherever they stand."""


def only_symbols(name: str) -> bool:
    """Whether a name is made of symbols alone ("+", "<-", "+/-"): no letter or digit."""
    return bool(name.strip()) and not _WORD_CHAR.search(name)


def spelled_symbols(name: str) -> str:
    """`name` with the symbols that label something spelled out: a name that is only symbols
    ("+", "+/-"), an operator anywhere ("x²"), a symbol on a word's edge ("M+", "50%"). A
    symbol inside a word ("e-mail", "3.5") or standing apart ("Inbox - Mail") is punctuation.
    A name of symbols with one not known here ("<=") is not spelled at all: its known part
    alone ("=") would name a different button."""
    if not _SYMBOL.search(name):
        return name
    alone = not _WORD_CHAR.search(name)
    if alone and _SYMBOL.sub("", name).strip():
        return name
    out: list[str] = []
    last = 0
    for m in _SYMBOL.finditer(name):
        before = bool(_WORD_CHAR.match(name[m.start() - 1])) if m.start() > 0 else False
        after = bool(_WORD_CHAR.match(name[m.end()])) if m.end() < len(name) else False
        if alone or m.group() in OPERATORS or before != after:
            out.append(f"{name[last:m.start()]} {SYMBOL_NAMES[m.group()]} ")
            last = m.end()
    out.append(name[last:])
    return "".join(out)


SAID_SYMBOLS = frozenset(SYMBOL_NAMES.values())
"""Every symbol's spoken name ("plus", "backspace")."""


def symbol_said(key: str) -> str | None:
    """The symbol's name a folded spoken reference says ("take away" -> "minus"), if it says
    one: such a name matches only its own symbol, never a near one."""
    name = SPOKEN_ALIASES.get(key, key)
    return name if name in SAID_SYMBOLS else None


def alias_of(key: str) -> str | None:
    """The folded name a spoken reference is another way of saying ("add" -> "plus",
    "memory recall" -> "mr"), if it is one."""
    return SPOKEN_ALIASES.get(key) or SPOKEN_ABBREVIATIONS.get(key)
