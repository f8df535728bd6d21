"""The contract every planner backend (grammar, Ollama, embedded LLM) fulfils."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from appliance.desktop.model import Snapshot
from appliance.intents.model import Intent


@dataclass(frozen=True)
class Plan:
    """A proposal: the intent (or None when nothing matched) and where it came from."""

    intent: Intent | None
    planner: str  # "grammar", "ollama", "llama-cpp"
    model: str = ""
    latency_ms: float = 0.0
    notes: tuple[str, ...] = field(default=())
    context: str = ""  # what a language model was given for this request (its user message)


class Planner(Protocol):
    def plan(self, text: str, snapshot: Snapshot, history: Sequence[str] = ()) -> Plan:
        """Propose an intent; `history` is the last few turns, oldest first ("do that again")."""
        ...
