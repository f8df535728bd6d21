"""Several commands in one utterance, joined by "and then", "then" or "and"."""

from __future__ import annotations

import re
from typing import TypeGuard, get_args

from hassil import Intents

from appliance.desktop.model import Snapshot
from appliance.intents.grammar.parsing import Parsed, single
from appliance.intents.grammar.screen_lists import ScreenLists
from appliance.intents.grammar.wording import strip_fillers
from appliance.intents.model import SCREEN_CHANGING, Intent, Sequence, Step

STEP_INTENTS: tuple[type, ...] = get_args(get_args(Step)[0])
"""The intent kinds a sequence's step may be (the model's Step union)."""
MAX_STEPS = 8
PARSE_BUDGET = 40
"""Most distinct parts one utterance may be parsed as while looking for a sequence."""
SEQUENCE_JOINS = (  # "then" says "next step" more surely than "and", so it is tried first
    re.compile(r"(?:\s*[,;]\s*|\s+)(?:and then|and after that|after that|then)\s+", re.I),
    re.compile(r"(?:\s*,\s*|\s+)and\s+", re.I),
)


def _is_step(intent: Intent) -> TypeGuard[Step]:
    return isinstance(intent, STEP_INTENTS)


class PartParses:
    """One utterance's parts as it is planned, each parsed once however often the text is cut."""

    def __init__(self, intents: Intents, screen_lists: ScreenLists, snapshot: Snapshot) -> None:
        self.intents = intents
        self.screen_lists = screen_lists
        self.snapshot = snapshot
        self.memo: dict[tuple[str, bool], Parsed | None] = {}

    def parse(self, text: str, split: bool) -> Parsed | None:
        """One command, or several joined by "and then"/"then"/"and"."""
        whole = self.single(text)
        if not split or (whole is not None and whole.exact):
            return whole
        # Free text or a fuzzy name may have swallowed a join: "type hi and then press enter",
        # "click the fan button and press enter". If every part is a command, it was a list.
        sequence = self.split(text, MAX_STEPS)
        if sequence is None:
            return whole
        steps, confidence = sequence
        return Parsed(Sequence(steps=tuple(steps), confidence=confidence, words=text), False, 0)

    def split(self, text: str, budget: int) -> tuple[list[Step], float] | None:
        """The first way of cutting the text at joins where every part is one step."""
        if budget < 2:
            return None
        joins = [j for pattern in SEQUENCE_JOINS for j in pattern.finditer(text)]
        for join in joins:
            if len(self.memo) >= PARSE_BUDGET:
                return None  # long dictation full of "and": don't try every way to cut it
            left = strip_fillers(text[: join.start()])
            # the end was stripped with the whole: "type thank you" keeps its words
            right = strip_fillers(text[join.end():], end=False)
            if not left or not right:
                continue
            first = self.single(left)
            if first is None or not _is_step(first.intent):
                continue
            rest: tuple[list[Step], float] | None = None
            second = self.single(right)
            if first.intent.intent in SCREEN_CHANGING and (second is None or not second.exact):
                # a later step may name what the earlier one will bring up
                second = self.single(right, not_on_screen_yet=True) or second
            if second is not None and _is_step(second.intent):
                rest = ([second.intent], second.intent.confidence)
            if second is None or not second.exact:
                more = self.split(right, budget - 1)
                if more is not None and (rest is None or more[1] >= rest[1]):
                    rest = more
            if rest is not None:
                return [first.intent, *rest[0]], min(first.intent.confidence, rest[1])
        return None

    def single(self, text: str, not_on_screen_yet: bool = False) -> Parsed | None:
        """One command: exact screen names first, then wildcards resolved by fuzzy matching."""
        key = (text, not_on_screen_yet)
        if key not in self.memo:
            self.memo[key] = single(
                self.intents, self.screen_lists, text, self.snapshot, not_on_screen_yet
            )
        return self.memo[key]
