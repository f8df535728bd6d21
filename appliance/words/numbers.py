"""Spoken numbers: "seventy" -> 70, "three point five" -> 3.5, "radio four" -> "radio 4".

hassil and unicode-rbnf only go from digits to words (rbnf formats, hassil matches range lists
against those formats inside a template), so words -> digits is parsed here. The other direction,
for spoken aliases of on-screen names ("Radio 4" said as "radio four"), uses unicode-rbnf.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from unicode_rbnf import RbnfEngine
from unicode_rbnf.engine import RbnfError

UNITS = {
    "zero": 0, "nought": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19,
}
TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}
SCALES = {"thousand": 1_000, "million": 1_000_000}
PERCENT_WORDS = ("percent", "per cent", "%")
_NUMBER_START = frozenset({*UNITS, *TENS, "a"})
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


class _Run:
    """Accumulates one spoken number, word by word, refusing words that cannot continue it."""

    def __init__(self) -> None:
        self.total = 0
        self.current = 0
        self.last = ""  # "unit" | "teen" | "tens" | "hundred" | "scale" | "a"
        self.words = 0

    def take(self, word: str) -> bool:
        kind, value = self._kind(word)
        if kind is None or not self._fits(kind):
            return False
        if kind == "hundred":
            self.current = (self.current or 1) * 100
        elif kind == "scale":
            self.total += (self.current or 1) * value
            self.current = 0
        elif kind != "a":
            self.current += value
        self.last = kind
        self.words += 1
        return True

    @staticmethod
    def _kind(word: str) -> tuple[str | None, int]:
        if word in TENS:
            return "tens", TENS[word]
        if word in UNITS:
            return ("unit" if UNITS[word] < 10 else "teen"), UNITS[word]
        if word == "hundred":
            return "hundred", 100
        if word in SCALES:
            return "scale", SCALES[word]
        if word == "a":
            return "a", 0
        return None, 0

    def _fits(self, kind: str) -> bool:
        last = self.last
        if not last:
            return True
        if last == "a":  # "a hundred", "a thousand"
            return kind in ("hundred", "scale")
        if kind in ("unit", "teen"):
            return last in ("tens", "hundred", "scale") and not (last == "tens" and kind == "teen")
        if kind == "tens":
            return last in ("hundred", "scale")
        if kind == "hundred":
            return last in ("unit", "teen") and self.current < 100
        if kind == "scale":
            return last in ("unit", "teen", "tens", "hundred") and self.total == 0
        return False

    @property
    def complete(self) -> bool:
        return self.words > 0 and self.last != "a"

    @property
    def value(self) -> int:
        return self.total + self.current


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[\s\-]+", text.casefold().strip()) if w]


def _integer(words: list[str]) -> int | None:
    """The integer the whole word list spells, or None."""
    if len(words) == 1 and words[0].isdigit():
        return int(words[0])
    run = _Run()
    words = [w for i, w in enumerate(words) if not (w == "and" and 0 < i < len(words) - 1)]
    for w in words:
        if not run.take(w):
            return None
    return run.value if run.complete else None


def parse_number(text: str) -> float | None:
    """The number spoken or written in `text` ("seventy", "twenty five", "3.5", "fifty percent").

    Returns None unless the whole text is one number (optionally signed, optionally "percent").
    """
    t = text.casefold().strip()
    for word in PERCENT_WORDS:
        if t.endswith(word):
            t = t[: -len(word)].strip()
            break
    sign = 1.0
    for neg in ("minus ", "negative ", "-"):
        if t.startswith(neg):
            sign, t = -1.0, t[len(neg):].strip()
            break
    if not t:
        return None
    try:
        return sign * float(t.replace(",", ""))
    except ValueError:
        pass
    words = _words(t)
    if "point" in words:
        i = words.index("point")
        whole = _integer(words[:i]) if i else 0
        digits = [_integer([w]) for w in words[i + 1:]]
        if whole is None or not digits or any(d is None or d > 9 for d in digits):
            return None
        return sign * float(f"{whole}." + "".join(str(d) for d in digits))
    if words == ["half"] or words == ["a", "half"]:
        return sign * 0.5
    number = _integer(words)
    return None if number is None else sign * float(number)


def digits_in(text: str) -> str:
    """Spoken numbers inside a phrase as digits: "radio four" -> "radio 4", "channel twenty one"
    -> "channel 21". Other words are kept as they are."""
    tokens = text.split()
    if _NUMBER_START.isdisjoint(text.casefold().split()):
        return text
    out: list[str] = []
    i = 0
    while i < len(tokens):
        run = _Run()
        j = i
        end = i  # one past the last token of the longest complete run
        value = 0
        while j < len(tokens):
            word = tokens[j].casefold()
            if word == "and" and run.last == "hundred" and j + 1 < len(tokens):
                j += 1  # "one hundred and five"
                continue
            if not run.take(word):
                break
            j += 1
            if run.complete:
                end, value = j, run.value
        if end > i:
            number = str(value)
            if end + 1 < len(tokens) and tokens[end].casefold() == "point":
                decimals = []
                k = end + 1
                while k < len(tokens) and tokens[k].casefold() in UNITS and UNITS[
                    tokens[k].casefold()
                ] < 10:
                    decimals.append(str(UNITS[tokens[k].casefold()]))
                    k += 1
                if decimals:
                    number += "." + "".join(decimals)
                    end = k
            out.append(number)
            i = end
        else:
            out.append(tokens[i])
            i += 1
    return " ".join(out)


@cache
def _engine() -> RbnfEngine:
    return RbnfEngine.for_language("en")


@lru_cache(maxsize=4096)
def _number_words(digits: str) -> str:
    words = _engine().format_number(digits, ruleset_names=["spellout-numbering"]).text
    return words.replace("-", " ")


@lru_cache(maxsize=4096)
def spoken_digits(text: str) -> str:
    """Digits inside a name as words, the way they are said: "Radio 4" -> "Radio four"."""
    if not _DIGITS.search(text):
        return text

    def words(m: re.Match[str]) -> str:
        try:
            spoken = _number_words(m.group(0))
        except (ValueError, RbnfError):  # no rule (a huge number, "0.1" in "127.0.0.1")
            return m.group(0)
        glued = m.start() > 0 and text[m.start() - 1].isalpha()  # "F4" is said "F four"
        return " " + spoken if glued else spoken

    return _DIGITS.sub(words, text)
