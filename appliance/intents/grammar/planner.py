"""The grammar planner: an utterance, with what was said before, to one intent on a screen."""

from __future__ import annotations

import time
from collections.abc import Iterable

from appliance.desktop.model import Node, Snapshot
from appliance.intents.grammar.history import AGAIN, CORRECTION, REPEAT, corrected, replayed
from appliance.intents.grammar.screen_lists import ScreenLists
from appliance.intents.grammar.sequences import PartParses
from appliance.intents.grammar.targets import ASK_FROM
from appliance.intents.grammar.templates import load_intents
from appliance.intents.grammar.wording import strip_fillers
from appliance.intents.model import Intent
from appliance.intents.planner import Plan

WARM_UP = (
    "click box 1", "type hi into box one and then press control c", "tick box", "set box to 5",
    "select box", "open box", "go to box", "focus box", "scroll down in box", "read the screen",
    "what does box say", "undo", "cancel", "yes", "no", "copy that",
)


class GrammarPlanner:
    """Implements the Planner protocol with hassil templates and the screen's names."""

    def __init__(self) -> None:
        self.intents = load_intents()
        self._lists = ScreenLists()
        # Parse the templates, compile hassil's patterns and load the number words now, so the
        # first turn is as quick as the rest.
        warm = Snapshot(nodes=(Node(id="0", role="text", name="Box 1", app="A", window="A"),))
        for phrase in WARM_UP:
            self.parse(phrase, warm)

    def plan(self, text: str, snapshot: Snapshot, history: Iterable[str] = ()) -> Plan:
        started = time.perf_counter()
        intent = self.parse(text, snapshot, tuple(history))
        return Plan(
            intent=intent, planner="grammar", latency_ms=(time.perf_counter() - started) * 1000
        )

    def parse(
        self, text: str, snapshot: Snapshot, history: tuple[str, ...] = ()
    ) -> Intent | None:
        """The intent the words mean on this screen, or None. `history`: what the person said
        before, oldest first, for "do that again" and "not her, the doctor"."""
        words = " ".join(text.split())
        bare = strip_fillers(words)
        if REPEAT.fullmatch(bare):
            return replayed(self.parse, text, snapshot, history)
        correction = CORRECTION.fullmatch(bare)
        if correction is not None and history:
            name = correction["name"] or correction["other"]
            again = corrected(self.parse, text, name, snapshot, history)
            if again is not None:
                return again
        words = AGAIN.sub("", words) or words  # "louder again" is "louder"
        candidates = dict.fromkeys((
            strip_fillers(words),
            strip_fillers(words, end=False),  # "please do": the filler was the command
            strip_fillers(words, start=False),
        ))
        parts = PartParses(self.intents, self._lists, snapshot)
        weak: Intent | None = None
        for i, candidate in enumerate(candidates):
            if candidate:
                # "type thank you and press enter": the end filler was words to type
                parsed = parts.parse(candidate, split=i <= 1)
                if parsed is None:
                    continue
                if parsed.intent.confidence >= ASK_FROM:
                    return parsed.intent.model_copy(update={"words": text})
                if weak is None or parsed.intent.confidence > weak.confidence:
                    weak = parsed.intent
        return None if weak is None else weak.model_copy(update={"words": text})
