"""A number said while numbers or the grid are shown: which mark it picks, and whether it
clicks. Read before the planners, since what "7" means depends on what is on the screen now."""

from __future__ import annotations

import re

from appliance.intents.model import PickMark
from appliance.words.numbers import parse_number

_VERBS = ("click", "press", "tap", "hit", "choose", "pick", "select", "push", "open")
_SAID = re.compile(
    rf"^(?:(?P<verb>{'|'.join(_VERBS)})\s+)?(?:on\s+)?"
    r"(?:(?:number|cell|square|box)\s+)?(?P<number>[\w-]+(?:\s+[\w-]+)?)?$"
)
_SOUNDS_LIKE = {"to": 2, "too": 2, "for": 4, "fore": 4, "won": 1, "ate": 8}
"""What a recogniser writes for a number said alone."""
_FILLERS = re.compile(r"\b(?:please|now|the|here|there|thanks|thank you)\b|[.,!?]")


_TEACH = re.compile(
    r"^(?:call|name)\s+(?:(?:number|cell|square|box)\s+)?(?P<what>this|that|it|here|[\w-]+)"
    r"\s+(?P<name>\w[\w' -]*?)[\s.!?]*$", re.IGNORECASE,
)


def teach_pick(text: str, kind: str) -> PickMark | None:
    """"call 7 Save" (a badge, or a grid cell) or "call this Save" (the grid as it is now):
    the spot to learn and its name, in the person's own words; None for anything else."""
    m = _TEACH.match(" ".join(text.split()))
    if m is None:
        return None
    what, name = m.group("what").casefold(), m.group("name").strip()
    if what in ("this", "that", "it", "here"):
        return PickMark(click=False, teach=name, words=text) if kind == "grid" else None
    value = parse_number(what)
    if value is None or value != int(value) or not 1 <= value <= 99:
        return None
    return PickMark(number=int(value), click=False, teach=name, words=text)


def mark_pick(text: str, kind: str) -> PickMark | None:
    """The pick "7", "click 7", "press number 7" or, on a grid, "click" means, or the spot
    "call 7 Save" teaches; None when the words are something else (then the planners read
    them as usual)."""
    taught = teach_pick(text, kind)
    if taught is not None:
        return taught
    words = " ".join(_FILLERS.sub(" ", text.casefold()).split())
    if words in _VERBS:  # "click" alone clicks the middle of the grid; with numbers, nothing
        return PickMark(click=True, words=text) if kind == "grid" else None
    m = _SAID.match(words)
    if m is None:
        return None
    verb, said = m.group("verb"), m.group("number")
    if said is None:
        return None
    number = _SOUNDS_LIKE.get(said) if verb is None else None
    if number is None:
        value = parse_number(said)
        if value is None or value != int(value) or not 1 <= value <= 99:
            return None
        number = int(value)
    # On the grid a bare number narrows it; a number with a verb clicks there.
    click = kind == "numbers" or verb is not None
    return PickMark(number=number, click=click, words=text)
