"""Grammar first, language model second.

The grammar answers what it knows in milliseconds and the model is never asked then. The model
is asked only when the grammar found nothing or a weak match; if the model is dead, slow or
talks nonsense, the grammar's answer (or nothing) stands and `Plan.notes` carries a short
spoken notice. Every request tries the model afresh: there is no sticky "model is down" state.
A model proposal must also be grounded in what the person said (llm_grounding), so text on
the screen cannot steer it. `history` is the last few things said, oldest first (transcripts,
and e.g. "assistant asked: Which contact?" so an answer to a clarify question has its context).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from appliance.desktop.model import Snapshot
from appliance.intents.llm_backend import NOT_ANSWERING, LanguageModelError, LanguageModelPlanner
from appliance.intents.llm_grounding import ungrounded
from appliance.intents.planner import Plan, Planner


class Router:
    """Picks the plan for one request; `last_failure` holds the technical reason for the journal."""

    def __init__(self, grammar: Planner, llm: Planner | None, weak_below: float = 0.6) -> None:
        self.grammar = grammar
        self.llm = llm
        self.weak_below = weak_below
        self.last_failure: str | None = None

    def needs_llm(self, plan: Plan) -> bool:
        return plan.intent is None or plan.intent.confidence < self.weak_below

    def _ask_llm(self, llm: Planner, text: str, snapshot: Snapshot, history: Sequence[str]) -> Plan:
        if isinstance(llm, LanguageModelPlanner):
            return llm.plan(text, snapshot, history)
        return llm.plan(text, snapshot)

    def plan(self, text: str, snapshot: Snapshot, history: Sequence[str] = ()) -> Plan:
        started = time.perf_counter()
        self.last_failure = None

        def took() -> float:
            return (time.perf_counter() - started) * 1000

        grammar = self.grammar.plan(text, snapshot)
        if self.llm is None or not text.strip() or not self.needs_llm(grammar):
            return replace(grammar, latency_ms=took())
        try:
            proposal = self._ask_llm(self.llm, text, snapshot, history)
        except LanguageModelError as exc:
            self.last_failure = exc.detail
            return replace(grammar, latency_ms=took(), notes=(*grammar.notes, exc.notice))
        except Exception as exc:  # a backend bug must cost one request, never the turn
            self.last_failure = f"{type(exc).__name__}: {exc}"
            return replace(grammar, latency_ms=took(), notes=(*grammar.notes, NOT_ANSWERING))
        if proposal.intent is None:
            return replace(grammar, latency_ms=took(), notes=(*grammar.notes, *proposal.notes))
        refusal = ungrounded(proposal.intent, text, history, snapshot)
        if refusal is not None:
            self.last_failure = f"refused {proposal.planner} proposal: {proposal.intent!r}"
            return replace(grammar, latency_ms=took(), notes=(*grammar.notes, refusal))
        return replace(proposal, latency_ms=took())
