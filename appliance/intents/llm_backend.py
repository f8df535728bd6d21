"""What the Ollama and embedded (llama-cpp) planners share: prompt, parsing, failure reporting."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from appliance.desktop.model import Snapshot
from appliance.intents.llm_examples import Example
from appliance.intents.llm_grounding import ungrounded
from appliance.intents.llm_repair import fit_to_request, fit_to_screen
from appliance.intents.llm_schema import llm_intent_schema
from appliance.intents.model import Intent, parse_intent
from appliance.intents.model import Sequence as SequenceIntent
from appliance.intents.planner import Plan
from appliance.intents.prompt import Message, build_prompt, default_examples

NOT_ANSWERING = "The language model is not answering; I only understood simple commands."
TOO_SLOW = "The language model took too long; I only understood simple commands."
UNUSABLE = "The language model gave an answer I could not use; I only understood simple commands."


class LanguageModelError(Exception):
    """A language-model backend failed; `notice` can be spoken, `detail` is for the journal."""

    def __init__(self, notice: str, detail: str) -> None:
        super().__init__(detail)
        self.notice = notice
        self.detail = detail


def _with_words(intent: Intent, words: str) -> Intent:
    if isinstance(intent, SequenceIntent):
        steps = tuple(s.model_copy(update={"words": s.words or words}) for s in intent.steps)
        return intent.model_copy(update={"words": words, "steps": steps})
    return intent.model_copy(update={"words": words})


def parse_reply(content: str, words: str) -> Intent:
    """Model output -> Intent, or LanguageModelError: malformed output never becomes an action."""
    try:
        intent = parse_intent(content)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc)}
        raise LanguageModelError(UNUSABLE, f"invalid intent: {first.get('msg', '')}") from exc
    return _with_words(intent, words)


class LanguageModelPlanner(ABC):
    """A planner backed by a language model; `plan` raises LanguageModelError on any failure."""

    backend: str = "llm"

    def __init__(self, model: str, examples: Sequence[Example] | None = None) -> None:
        self.model = model
        self._examples = None if examples is None else tuple(examples)

    @property
    def examples(self) -> tuple[Example, ...]:
        """The prompt's worked examples, built on first use: building them parses the grammar's
        templates (about a second), and a request the grammar answers never needs them."""
        if self._examples is None:
            self._examples = default_examples()
        return self._examples

    @abstractmethod
    def complete(self, messages: list[Message], schema: dict[str, Any]) -> str:
        """Send the messages; return the raw reply text (expected to be JSON)."""

    def messages(self, text: str, snapshot: Snapshot, history: Sequence[str] = ()) -> list[Message]:
        return build_prompt(text, snapshot, history, self.examples)

    def plan(self, text: str, snapshot: Snapshot, history: Sequence[str] = ()) -> Plan:
        started = time.perf_counter()
        messages = self.messages(text, snapshot, history)
        content = self.complete(messages, llm_intent_schema())
        intent = fit_to_screen(parse_reply(content, text), snapshot)
        if ungrounded(intent, text, history, snapshot) is None:
            # Trimmed only when nothing in it came from the screen: a proposal steered by screen
            # text reaches the router whole, and is refused there.
            intent = fit_to_request(intent, text, snapshot)
        return Plan(
            intent=intent,
            planner=self.backend,
            model=self.model,
            latency_ms=(time.perf_counter() - started) * 1000,
            context=messages[-1]["content"],
        )
