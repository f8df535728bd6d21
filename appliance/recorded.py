"""What a turn's actions left in the journal, typed: each step's action and the states of the
elements it touched, as `ActionStarted` and `ActionSucceeded` carry them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from appliance.desktop.model import REDACTED, Action, ElementState, Snapshot, shown_value
from appliance.limits import MAX_VALUE_CHARS, clip


class RecordedState(ElementState):
    """An element's state as journaled: with its role and name, a secret value redacted and a
    long one clipped. The key of an application is "app:" and its name."""

    role: str | None = None
    name: str = ""

    def as_state(self) -> ElementState:
        return ElementState(
            value=self.value, states=self.states, activations=self.activations, running=self.running
        )


def state_json(
    states: dict[str, ElementState], snapshot: Snapshot, hidden: bool = False
) -> dict[str, Any]:
    """Element states as journal data, with role and name; secret values are redacted, and so
    is every value a hidden step touched (it may hold the words that were hidden)."""
    out: dict[str, Any] = {}
    for key, s in states.items():
        node = snapshot.node(key)
        value = clip(s.value, MAX_VALUE_CHARS) if isinstance(s.value, str) else s.value
        if hidden and value:
            value = REDACTED
        out[key] = {
            "role": node.role if node else ("application" if key.startswith("app:") else None),
            "name": node.name if node else key.removeprefix("app:"),
            "value": shown_value(node.role if node else None, value),
            "states": sorted(s.states),
            "activations": s.activations,
            "running": s.running,
        }
    return out


def recorded_states(data: dict[str, Any]) -> dict[str, RecordedState]:
    return {str(key): RecordedState.model_validate(state) for key, state in data.items()}


@dataclass(frozen=True)
class StepRecord:
    """One action of a turn: what was started on what, then (`done`) the states before and
    after it, or the `error` it ended in."""

    index: int  # the step of the intent it carries out
    action: Action  # as journaled: the words of a hidden step are redacted
    target: str
    before: dict[str, RecordedState]
    owner: str = ""  # the process performing it (`journal.owners`)
    result_before: dict[str, RecordedState] | None = None
    after: dict[str, RecordedState] | None = None
    verified: bool = False
    via: str = ""
    error: str = ""

    @classmethod
    def started(
        cls, index: int, action: dict[str, Any], target: str, before: dict[str, Any], owner: str
    ) -> StepRecord:
        return cls(index, Action.model_validate(action), target, recorded_states(before), owner)

    def succeeded(
        self, before: dict[str, Any], after: dict[str, Any], verified: bool, via: str
    ) -> StepRecord:
        return replace(
            self,
            result_before=recorded_states(before),
            after=recorded_states(after),
            verified=verified,
            via=via,
        )

    def failed(self, error: str) -> StepRecord:
        return replace(self, error=error)

    @property
    def done(self) -> bool:
        """It succeeded: the desktop showed the change."""
        return self.after is not None
