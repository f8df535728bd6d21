"""Grammar first, language model second.

The grammar answers what it knows in milliseconds and the model is never asked then. The model
is asked only when the grammar found nothing or a weak match; if the model is dead, slow or
talks nonsense, the grammar's answer (or nothing) stands and `Plan.notes` carries a short
spoken notice. Every request tries the model afresh: there is no sticky "model is down" state.
A model proposal must also be grounded in what the person said (llm_grounding), so text on
the screen cannot steer it; a refused answer is asked for once more, then dropped. `history` is
the last few things said, oldest first (transcripts, and e.g. "assistant asked: Which contact?"
so an answer to a clarify question has its context); the grammar gets it too ("do that again").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from appliance.desktop.model import Snapshot
from appliance.intents.llm_backend import NOT_ANSWERING, LanguageModelError
from appliance.intents.llm_grounding import ungrounded
from appliance.intents.planner import Plan, Planner
from appliance.limits import MAX_UTTERANCE_CHARS, without_controls

RETRY_NOTE = (
    "assistant note: the previous answer used words the person did not say; answer again with "
    "only the person's words and names from the screen"
)
"""Shown to the model, as a history line, when its first answer failed the grounding check."""

TOO_LONG = "That was too long for me to follow. Please say it in shorter parts."
"""Said instead of planning a request over MAX_UTTERANCE_CHARS (no planner ever sees it)."""


class Router:
    """Picks the plan for one request; `last_failure` holds the technical reason for the journal."""

    def __init__(self, grammar: Planner, llm: Planner | None, weak_below: float = 0.6) -> None:
        self.grammar = grammar
        self.llm = llm
        self.weak_below = weak_below
        self.last_failure: str | None = None

    def needs_llm(self, plan: Plan) -> bool:
        return plan.intent is None or plan.intent.confidence < self.weak_below

    def plan(self, text: str, snapshot: Snapshot, history: Sequence[str] = ()) -> Plan:
        started = time.perf_counter()
        self.last_failure = None

        def took() -> float:
            return (time.perf_counter() - started) * 1000

        if len(text) > MAX_UTTERANCE_CHARS:  # planning megabytes takes minutes and gigabytes
            return Plan(intent=None, planner="none", latency_ms=took(), notes=(TOO_LONG,))
        # Escape sequences and bidi overrides are never meant to be typed into a field.
        text = without_controls(text)
        grammar = self.grammar.plan(text, snapshot, history)
        if self.llm is None or not text.strip() or not self.needs_llm(grammar):
            return replace(grammar, latency_ms=took())
        refused: list[str] = []
        refusal = ""
        for asking in (tuple(history), (*history, RETRY_NOTE)):
            try:
                proposal = self.llm.plan(text, snapshot, asking)
            except LanguageModelError as exc:
                self.last_failure = "; ".join((*refused, exc.detail))
                return replace(grammar, latency_ms=took(), notes=(*grammar.notes, exc.notice))
            except Exception as exc:  # a backend bug must cost one request, never the turn
                self.last_failure = "; ".join((*refused, f"{type(exc).__name__}: {exc}"))
                return replace(grammar, latency_ms=took(), notes=(*grammar.notes, NOT_ANSWERING))
            if proposal.intent is None:
                return replace(grammar, latency_ms=took(), notes=(*grammar.notes, *proposal.notes),
                               context=proposal.context)
            # Grounded in the person's words only: the retry note is not something they said.
            reason = ungrounded(proposal.intent, text, history, snapshot)
            if reason is None:
                self.last_failure = "; ".join(refused) or None
                return replace(proposal, latency_ms=took())
            refusal = reason
            refused.append(f"refused {proposal.planner} proposal: {proposal.intent!r}")
        self.last_failure = "; ".join(refused)
        return replace(grammar, latency_ms=took(), notes=(*grammar.notes, refusal),
                       context=proposal.context)
