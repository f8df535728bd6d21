"""The command lifecycle: one `Turn` aggregate per command, a pure state machine with no I/O.

Every transition is an event (a named method, the `eventsourcing` way); a transition that is not
allowed from the current phase raises `TurnError`, so a journal can only ever hold a lifecycle
that makes sense. The imperative shell (`appliance.session`) decides when to call what, and
saves the turn (write-ahead: `ActionStarted` is saved before the action is performed).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from eventsourcing.domain import Aggregate, event

from appliance.intents.model import UNDOABLE_KINDS
from appliance.recorded import StepRecord


class Phase(StrEnum):
    started = "started"
    heard = "heard"
    planned = "planned"
    validated = "validated"
    awaiting_confirmation = "awaiting_confirmation"
    acting = "acting"
    acted = "acted"
    ended = "ended"


class Outcome(StrEnum):
    """The `decision` of the CLI's JSON output."""

    executed = "executed"
    needs_confirmation = "needs_confirmation"
    rejected = "rejected"
    clarify = "clarify"
    answered = "answered"
    cancelled = "cancelled"
    undone = "undone"
    failed = "failed"
    interrupted = "interrupted"
    timed_out = "timed_out"


class TurnError(Exception):
    """A transition that the lifecycle does not allow (a programming error, not a user error)."""


class Turn(Aggregate):
    """One command from the moment it was triggered to the moment it ended."""

    @event("TurnStarted")
    def __init__(self, trigger: str, device: str = "") -> None:
        self.trigger = trigger
        self.device = device
        self.phase = Phase.started
        self.transcripts: list[str] = []
        self.intent: dict[str, Any] | None = None
        self.planner = ""
        self.decision = ""
        self.risk = "harmless"
        self.reasons: list[str] = []
        self.prompt = ""
        self.expires_at = 0.0
        self.resume_step = 0
        self.options: list[str] = []
        self.confirmed_by = ""
        self.steps: list[StepRecord] = []
        self.spoken: list[str] = []
        self.undone_by = ""
        self.outcome = ""
        self.marks: dict[str, Any] | None = None  # what the overlay shows (desktop/marks.py)
        self.marks_changed = False

    # -- guards ------------------------------------------------------------------------

    def _require(self, *phases: Phase) -> None:
        if self.phase not in phases:
            allowed = ", ".join(phases)
            raise TurnError(f"turn {self.id} is {self.phase}, expected {allowed}")

    # -- what several events do (called only from inside an event: they change state) ----

    def _stop(self, outcome: Outcome) -> None:
        """Nothing (more) is performed: the turn waits only to be ended, with `outcome`."""
        self.outcome = outcome
        self.phase = Phase.acted

    def _step_failed(self, error: str, outcome: Outcome) -> None:
        """The action in flight did not happen (`error`), and the turn stops with `outcome`."""
        self.steps[-1] = self.steps[-1].failed(error)
        self._stop(outcome)

    # -- events ------------------------------------------------------------------------

    def heard(
        self, transcript: str, engine: str, confidence: float | None, timings: dict[str, float]
    ) -> None:
        self._require(Phase.started, Phase.awaiting_confirmation)
        self._heard(transcript, engine, confidence, timings)

    @event("Heard")
    def _heard(
        self, transcript: str, engine: str, confidence: float | None, timings: dict[str, float]
    ) -> None:
        self.transcripts.append(transcript)
        if self.phase == Phase.started:
            self.phase = Phase.heard

    def planned(
        self,
        intent: dict[str, Any] | None,
        planner: str,
        model: str,
        latency_ms: float,
        notes: list[str] | None = None,
    ) -> None:
        """`notes`: what went wrong on the way (e.g. the language model did not answer)."""
        self._require(Phase.heard, Phase.awaiting_confirmation)
        self._planned(intent, planner, model, latency_ms, notes or [])

    @event("Planned")
    def _planned(
        self,
        intent: dict[str, Any] | None,
        planner: str,
        model: str,
        latency_ms: float,
        notes: list[str],
    ) -> None:
        if self.phase == Phase.heard:
            self.intent = intent
            self.planner = planner
            self.phase = Phase.planned

    def validated(
        self, decision: str, risk: str, reasons: list[str], step: int | None = None
    ) -> None:
        self._require(Phase.planned, Phase.validated, Phase.acted)
        self._validated(decision, risk, reasons, step)

    @event("Validated")
    def _validated(self, decision: str, risk: str, reasons: list[str], step: int | None) -> None:
        self.decision = decision
        self.risk = risk
        self.reasons = list(reasons)
        if self.phase == Phase.planned:
            self.phase = Phase.validated

    def ask_confirmation(
        self, prompt: str, expires_at: float, resume_step: int = 0, options: list[str] | None = None
    ) -> None:
        """Ask yes/no, or (with options) which one was meant; the answer continues this turn.
        Asked again while open, after an answer heard doubtfully."""
        self._require(Phase.validated, Phase.acted, Phase.awaiting_confirmation)
        self._confirmation_asked(prompt, expires_at, resume_step, options or [])

    @event("ConfirmationAsked")
    def _confirmation_asked(
        self, prompt: str, expires_at: float, resume_step: int, options: list[str]
    ) -> None:
        self.prompt = prompt
        self.expires_at = expires_at
        self.resume_step = resume_step
        self.options = list(options)
        self.phase = Phase.awaiting_confirmation

    def clarify(self, choice: str, intent: dict[str, Any] | None) -> None:
        """The answer to a which-one question: the plan made with it, to be validated afresh."""
        self._require(Phase.awaiting_confirmation)
        if choice not in self.options:
            raise TurnError(f"{choice!r} was not one of the options")
        self._clarified(choice, intent)

    @event("Clarified")
    def _clarified(self, choice: str, intent: dict[str, Any] | None) -> None:
        self.intent = intent
        self.options = []
        self.phase = Phase.planned

    @event("Answered")
    def answer(
        self,
        transcript: str,
        engine: str,
        confidence: float | None,
        timings: dict[str, float],
        intent: dict[str, Any] | None,
        planner: str,
        model: str,
        latency_ms: float,
        notes: list[str],
    ) -> None:
        """What was heard as the answer to a yes/no question and what the planner made of it;
        `confirm` or `decline` follows. (Journals from before this event hold a `Heard` and a
        `Planned` here instead: both still fold to the same turn.)"""
        # The guard may sit in the event itself: eventsourcing applies an event before the
        # version moves, so a refused answer leaves nothing behind, and a stored one was
        # recorded while its question was open, so replaying it passes.
        self._require(Phase.awaiting_confirmation)
        self.transcripts.append(transcript)

    def confirm(self, by: str) -> None:
        self._require(Phase.awaiting_confirmation)
        self._confirmed(by)

    @event("Confirmed")
    def _confirmed(self, by: str) -> None:
        self.confirmed_by = by
        self.phase = Phase.validated

    def decline(self, by: str) -> None:
        self._require(Phase.awaiting_confirmation)
        self._declined(by)

    @event("Declined")
    def _declined(self, by: str) -> None:
        self._stop(Outcome.cancelled)

    def time_out(self) -> None:
        self._require(Phase.awaiting_confirmation)
        self._confirmation_timed_out()

    @event("ConfirmationTimedOut")
    def _confirmation_timed_out(self) -> None:
        self._stop(Outcome.timed_out)

    def start_action(
        self,
        step: int,
        action: dict[str, Any],
        target: str,
        before: dict[str, Any],
        owner: str = "",
    ) -> None:
        """`owner`: the process performing it (`journal.owners`); only it records the outcome
        while it lives."""
        self._require(Phase.validated, Phase.acted)
        self._action_started(step, action, target, before, owner)

    @event("ActionStarted")
    def _action_started(
        self,
        step: int,
        action: dict[str, Any],
        target: str,
        before: dict[str, Any],
        owner: str = "",  # a default: events stored before owners were recorded still load
    ) -> None:
        self.steps.append(StepRecord.started(step, action, target, before, owner))
        self.phase = Phase.acting

    def action_succeeded(
        self, before: dict[str, Any], after: dict[str, Any], verified: bool, via: str
    ) -> None:
        self._require(Phase.acting)
        self._action_succeeded(before, after, verified, via)

    @event("ActionSucceeded")
    def _action_succeeded(
        self, before: dict[str, Any], after: dict[str, Any], verified: bool, via: str
    ) -> None:
        self.steps[-1] = self.steps[-1].succeeded(before, after, verified, via)
        self.phase = Phase.acted

    def action_failed(self, error: str) -> None:
        self._require(Phase.acting)
        self._action_failed(error)

    @event("ActionFailed")
    def _action_failed(self, error: str) -> None:
        self._step_failed(error, Outcome.failed)

    def interrupt(self) -> None:
        """Found on start-up: the process died between ActionStarted and its outcome."""
        self._require(Phase.acting)
        self._interrupted()

    @event("Interrupted")
    def _interrupted(self) -> None:
        self._step_failed("interrupted", Outcome.interrupted)

    @event("Spoke")
    def spoke(self, text: str, timings: dict[str, float]) -> None:
        self.spoken.append(text)

    def prompted(self, context: str) -> None:
        """What the language model was given for this request (the part that is not the same
        for every request), so a caregiver can see why it proposed what it did."""
        self._prompted(context)

    @event("Prompted")
    def _prompted(self, context: str) -> None:
        pass

    def show_marks(self, marks: dict[str, Any] | None) -> None:
        """Numbers or the grid shown from this turn on (None: hidden), so a number said next,
        by this process or another, means what the person saw."""
        if self.phase == Phase.ended:
            raise TurnError(f"turn {self.id} has already ended")
        self._marks_shown(marks)

    @event("MarksShown")
    def _marks_shown(self, marks: dict[str, Any] | None) -> None:
        self.marks = marks
        self.marks_changed = True

    def mark_undone(self, by_turn: str, outcome: str) -> None:
        if not self.undoable:
            raise TurnError(f"turn {self.id} cannot be undone")
        self._undone(by_turn, outcome)

    @event("Undone")
    def _undone(self, by_turn: str, outcome: str) -> None:
        self.undone_by = by_turn

    def end(self, outcome: str) -> None:
        if self.phase == Phase.ended:
            raise TurnError(f"turn {self.id} has already ended")
        self._ended(outcome)

    @event("TurnEnded")
    def _ended(self, outcome: str) -> None:
        self.outcome = outcome
        self.phase = Phase.ended

    # -- derived state -----------------------------------------------------------------

    @property
    def pending(self) -> bool:
        return self.phase == Phase.awaiting_confirmation

    @property
    def asks_which(self) -> bool:
        """The open question is which one was meant, not yes or no."""
        return self.pending and bool(self.options)

    @property
    def in_flight(self) -> bool:
        """An action was started and has no recorded outcome."""
        return self.phase == Phase.acting

    @property
    def undoable(self) -> bool:
        done = [s for s in self.steps if s.done]
        return (
            self.outcome == Outcome.executed
            and not self.undone_by
            and bool(done)
            and all(s.action.kind in UNDOABLE_KINDS for s in done)
        )

    @property
    def short_id(self) -> str:
        return self.id.hex[:8]
