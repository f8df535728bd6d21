"""A later step of a sequence, checked again just before it runs, on the screen as it is then.

Earlier steps may have opened a window or moved the focus, so the target found when the plan was
validated (or not found: a deferred step) may be another one now. The same confidence and risk
rules as `validate` apply, against the verdict the whole plan was given.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from appliance.desktop.model import Risk, Snapshot
from appliance.intents.model import PickMark
from appliance.policy.validator import (
    CONFIRM_BELOW,
    REJECT_BELOW,
    UNSURE,
    Ambiguous,
    Decision,
    Rejected,
    ResolvedStep,
    Verdict,
    resolve_step,
    scrubbed,
)
from appliance.settings import Settings

STOPPED = "The next step could delete something, so I stopped."
RISK_MID_WAY = "risk found mid-way"


@dataclass(frozen=True)
class StepCheck:
    """What may happen with one later step: `run` it, `ask` first (about `question`), or stop
    because it `failed` (cannot be found or done now) or is `refused` (the rules forbid it).
    `reason` is what the journal and the person are told."""

    decision: Literal["run", "ask", "failed", "refused"]
    step: ResolvedStep
    reason: str = ""
    question: Verdict | None = None

    @property
    def validated(self) -> Decision:
        """The decision as the journal's `Validated` event names it."""
        named = {"run": Decision.execute, "ask": Decision.confirm}
        return named.get(self.decision, Decision.reject)  # failed or refused: it won't run


def recheck_step(
    verdict: Verdict, index: int, snapshot: Snapshot, settings: Settings, confirmed: bool
) -> StepCheck:
    """Step `index` of `verdict` against `snapshot`; `confirmed`: the person already said yes
    to the whole plan, so neither doubt nor a higher risk asks again."""
    step = verdict.steps[index]
    if isinstance(verdict.intent, PickMark):
        # A number or a grid point means what the person saw: found again by its name, it
        # could be another element. The validator has just checked it against the badges.
        return StepCheck("run", step)
    try:
        step, score = resolve_step(step.intent, snapshot, settings)
        if score < REJECT_BELOW:
            raise Rejected(f"I can't find {getattr(step.intent, 'target', '')}.")
    except (Rejected, Ambiguous) as e:
        why = scrubbed(str(e), step.intent, snapshot) if index in verdict.hidden else str(e)
        return StepCheck("failed", step, why)
    if confirmed:
        return StepCheck("run", step)
    if score < CONFIRM_BELOW:
        question = Verdict(Decision.confirm, step.risk, (UNSURE,), (step,))
        return StepCheck("ask", step, UNSURE, question)
    if step.risk.rank > verdict.risk.rank:
        if step.risk == Risk.destructive and not settings.allow_destructive:
            return StepCheck("refused", step, STOPPED)
        question = replace(verdict, steps=(step,), hidden=frozenset())
        return StepCheck("ask", step, RISK_MID_WAY, question)
    return StepCheck("run", step)
