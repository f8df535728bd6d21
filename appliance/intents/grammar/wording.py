"""Words as said: split into words, edge punctuation and politeness trimmed."""

from __future__ import annotations

import re

WAKE_AND_FILLER_START = (
    "hey juniper", "hi juniper", "ok juniper", "okay juniper", "juniper",
    "please", "can you", "could you", "would you", "will you", "can you please",
    "i want to", "i'd like to", "i would like to", "i wanna", "let's", "now", "just", "and",
    "i need to",
    "ok", "okay", "alright", "all right", "so", "um", "uh", "er", "erm",
)
FILLER_END = ("please", "for me", "now", "right now", "thanks", "thank you", "thankyou")
EDGE_PUNCT = re.compile(r"^[\s,.;:!?]+|[\s,.;:!?]+$")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def strip_fillers(text: str, start: bool = True, end: bool = True) -> str:
    said = EDGE_PUNCT.sub("", text).split()
    folded = [w.strip(",.;:!?").casefold() for w in said]
    changed = True
    while changed and said:
        changed = False
        for filler in WAKE_AND_FILLER_START if start else ():
            n = len(filler.split())
            if folded[:n] == filler.split() and len(said) > n:
                said, folded, changed = said[n:], folded[n:], True
                break
        for filler in FILLER_END if end else ():
            n = len(filler.split())
            if folded[-n:] == filler.split() and len(said) > n:
                said, folded, changed = said[:-n], folded[:-n], True
                break
    return EDGE_PUNCT.sub("", " ".join(said))
