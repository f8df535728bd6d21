"""The imperative shell around `Turn`: snapshot, plan, validate, confirm, act, speak, journal.

Everything with side effects happens here, in one order: the journal gets `ActionStarted`
before the desktop is touched (write-ahead), and the outcome after.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, assert_never
from uuid import UUID

from appliance import naming
from appliance.desktop.marks import Marks, grid_marks, number_marks
from appliance.desktop.model import (
    Action,
    ActionResult,
    Desktop,
    DesktopError,
    ElementState,
    Snapshot,
)
from appliance.desktop.seeing.teach import teach_spot
from appliance.intents.aliases import PLANNER as ALIASES
from appliance.intents.aliases import forget_command, plan_with_aliases, teach_command
from appliance.intents.marks import mark_pick
from appliance.intents.model import (
    PERSON_ONLY_INTENTS,
    ForgetName,
    Intent,
    NameElement,
    PickMark,
    ShowMarks,
    Undo,
    dump_intent,
)
from appliance.intents.planner import Plan, Planner
from appliance.journal.alias_log import Alias
from appliance.journal.application import CONFLICT_ATTEMPTS, Journal, JournalConflict
from appliance.journal.owners import performing, this_process
from appliance.journal.projections import history, shown_marks, unconfirmed_actions
from appliance.journal.shared import (
    abandoned,
    change_shared,
    interrupt,
    is_open,
    record_undone,
    replace_question,
    time_out,
)
from appliance.policy.doubts import Doubt, doubt_reason
from appliance.policy.recheck import recheck_step
from appliance.policy.validator import (
    HIDDEN_WORDS,
    UNSURE,
    Decision,
    ResolvedStep,
    Verdict,
    validate,
)
from appliance.questions import FORGOTTEN, first_step, pick_option, stored_intent, undo_alike
from appliance.recorded import state_json
from appliance.replies import (
    answer_text,
    asked_again,
    confirmation,
    declined,
    did,
    marks_said,
    verb,
)
from appliance.settings import Settings
from appliance.turn import Outcome, Turn
from appliance.undo import changed_since, restore_action


@dataclass(frozen=True)
class Recognition:
    """How the words came in (what the journal's `Heard` event records beside them), and any
    doubt about them."""

    engine: str  # "vosk", "whisper"; "text" (typed), "switch", "web": how else they came
    confidence: float | None = None
    timings: dict[str, float] = field(default_factory=dict)  # the voice layer's (voice/sink.py)
    doubt: str = ""  # why the recogniser may have misheard (hearing/clarity.py): acting asks


@dataclass(kw_only=True)
class TurnReport:
    """What one utterance led to; the CLI's `--json` object. `decision` is the turn's
    `Outcome`, filled in as the turn ends or asks."""

    transcript: str
    intent: dict[str, Any] | None
    turn_id: str
    decision: str = ""
    reasons: list[str] = field(default_factory=list)
    spoken: str = ""
    planner: str = ""
    expects_answer: bool = False
    notices: list[str] = field(default_factory=list)
    marks: dict[str, Any] | None = None  # the numbers or grid on screen after this turn

    def as_json(self) -> dict[str, Any]:
        return {
            "transcript": self.transcript,
            "intent": self.intent,
            "decision": self.decision,
            "reasons": self.reasons,
            "spoken": self.spoken,
            "turn_id": self.turn_id,
            "planner": self.planner,
            "expects_answer": self.expects_answer,
            "notices": self.notices,
            "marks": self.marks,
        }



def recover_interrupted(journal: Journal, recent: list[Turn] | None = None) -> list[str]:
    """Turns whose acting process died before the outcome, marked Interrupted; what to say."""
    notices = []
    for turn in journal.in_flight_turns(recent):
        marked = change_shared(journal, turn, abandoned, interrupt)
        if marked is not None:
            notices.append(marked.spoken[-1])
    return notices

class Session:
    """Runs turns against one journal, one desktop and one planner."""

    def __init__(
        self,
        journal: Journal,
        desktop: Desktop,
        planner: Planner,
        clock: Callable[[], float] = time.time,
        speaks_later: bool = False,
        device: str = "",
    ) -> None:
        self.journal = journal
        self.desktop = desktop
        self.planner = planner
        self.clock = clock
        self.speaks_later = speaks_later  # the voice layer records Spoke once audio is out
        self.device = device
        self._recent: list[Turn] = []
        self._performing: list[UUID] = []  # turns whose actions this utterance carries out
        self._settings = Settings()
        self._changed_from: Snapshot | None = None  # the screen before the last action
        self._marks: Marks | None = None  # numbers or the grid, as the person sees them
        self._clicked = False  # this utterance clicked a point of the grid
        self._aliases: list[Alias] = []  # names the person gave elements (vouched for)

    # -- start-up ----------------------------------------------------------------------

    def recover(self, recent: list[Turn] | None = None) -> list[str]:
        """Mark turns whose action's process died before its outcome as Interrupted, and say so.

        A turn whose process is alive (in this process or another) is left alone: that process
        is still acting and will record the real outcome.
        """
        return recover_interrupted(self.journal, recent)

    # -- one utterance -----------------------------------------------------------------

    def say(
        self,
        text: str,
        trigger: str = "text",
        engine: str = "text",
        confidence: float | None = None,
        timings: dict[str, float] | None = None,
        doubt: str = "",
    ) -> TurnReport:
        """`doubt`: why the recogniser may have misheard (hearing/clarity.py): acting asks."""
        heard = Recognition(engine, confidence, timings or {}, doubt)
        return self._utterance(text, None, trigger, heard)

    def choose(self, intent: Intent, words: str, trigger: str = "switch") -> TurnReport:
        """Run an intent picked without words (a switch press, a scan selection) the way `say`
        runs a planned one: an open question takes it as its answer, else it is a new turn."""
        return self._utterance(words, intent, trigger, Recognition(trigger))

    def _utterance(
        self, text: str, chosen: Intent | None, trigger: str, heard: Recognition
    ) -> TurnReport:
        try:
            return self._run(text, chosen, trigger, heard)
        finally:
            # Every outcome is recorded by now, or never will be by this session (it failed
            # half-way): either way no action of this utterance is under way any more.
            for turn_id in self._performing:
                performing(turn_id, busy=False)
            self._performing.clear()

    def _run(
        self, text: str, chosen: Intent | None, trigger: str, heard: Recognition
    ) -> TurnReport:
        # Read the journal once per utterance, from what the chain vouches for: what was added
        # since the last check (by any process), its tail and the settings.
        self.journal.check_trust()
        self._recent = self.journal.recent_turns()
        self._settings = self.journal.settings()
        self._aliases = self.journal.aliases()
        notices = self.journal.take_notices()  # damage found in the journal, said, not raised
        notices += self.recover(self._recent)
        self._marks, self._clicked = shown_marks(self._recent), False
        snapshot = self.desktop.snapshot()
        notices.extend(self.desktop.problems())
        pending = self._open_question(notices)

        pick = mark_pick(text, self._marks.kind) if self._marks and chosen is None else None
        naming_words = None if pick is not None or chosen is not None else (
            teach_command(text, snapshot) or forget_command(text, self._aliases))
        if pick is not None:  # "7" while numbers are shown: the badge, before any planner
            plan = Plan(intent=pick, planner="marks")
        elif naming_words is not None:  # "call Doctor Patel my doctor", "forget my doctor"
            plan = Plan(intent=naming_words, planner=ALIASES)
        elif chosen is None:
            plan = self._plan(text, snapshot, history(self._recent))
            if plan.intent is not None and plan.intent.intent in PERSON_ONLY_INTENTS and (
                plan.planner not in ("grammar", ALIASES)
            ):  # a model never saw the numbers the person sees
                plan = Plan(intent=None, planner=plan.planner, model=plan.model,
                            latency_ms=plan.latency_ms, notes=plan.notes)
        else:
            plan = Plan(intent=chosen, planner=trigger)
        notices.extend(plan.notes)
        args = (text, plan, trigger, snapshot, heard)
        report = None
        for _attempt in range(CONFLICT_ATTEMPTS):
            report = self._dispatch(pending, *args)
            if report is not None:
                break
            # Another process answered, declined or timed out that question first: look again.
            self._recent = self.journal.recent_turns()
            pending = self._open_question(notices)
        if report is None:  # lost every race for an open question: a command of its own
            report = self._dispatch(None, *args)
            assert report is not None  # without a question there is no race to lose
        report.notices = notices + report.notices
        return report

    def _plan(self, text: str, snapshot: Snapshot, said_before: list[str] | None = None) -> Plan:
        """The planner's plan, with a name the person gave an element standing for it."""
        return plan_with_aliases(self.planner, text, snapshot, said_before or [], self._aliases)

    def _unconfirmed(self) -> int:
        """Actions done without a yes in the last minute (the rate limit's count)."""
        since = datetime.fromtimestamp(self.clock(), UTC) - timedelta(minutes=1)
        return unconfirmed_actions(self._recent, since)

    def _open_question(self, notices: list[str]) -> Turn | None:
        """The question waiting for an answer, if any; one whose wait is over is timed out."""
        questions = self.journal.open_questions(self._recent)
        for older in questions[1:]:
            # Asked while the newest one was (two processes at once): the newest replaced it,
            # as any new command replaces an open question. Else it would wait for ever.
            change_shared(self.journal, older, is_open, replace_question)
        pending = questions[0] if questions else None
        if pending is not None and self.clock() > pending.expires_at:
            notice = self._expire(pending)
            if notice:
                notices.append(notice)
            return None
        return pending

    def _dispatch(
        self,
        pending: Turn | None,
        text: str,
        plan: Plan,
        trigger: str,
        snapshot: Snapshot,
        heard: Recognition,
    ) -> TurnReport | None:
        """Answer the open question or run a new turn; None when another process answered,
        declined or timed out the question before this answer was recorded."""
        kind = plan.intent.intent if plan.intent else None
        if pending is not None and pending.asks_which and kind not in ("deny", "cancel"):
            choice = pick_option(text, pending.options)
            if choice is not None:
                return self._which(pending, choice, text, snapshot, heard)
        if pending is not None and kind == "confirm" and heard.doubt:
            return self._ask_again(pending, text, plan, heard)
        if pending is not None and kind in ("confirm", "deny", "cancel"):
            by = trigger  # "voice", "text" (typed), "switch": how the answer came
            return self._answer(pending, text, plan, kind == "confirm", heard, by)
        if pending is not None:  # a new command replaces the open question
            change_shared(self.journal, pending, is_open, replace_question)
        meant = undo_alike(text) if kind == "deny" and trigger == "voice" else None
        if pending is None and meant and self.journal.undo_stack(self._recent):
            # No question to say no to, and something to undo: it may have been "undo that".
            plan = replace(plan, intent=Undo(words=meant))
            heard = replace(heard, doubt=Doubt.UNDO_ALIKE)
        return self._new_turn(text, trigger, plan, snapshot, heard)

    def _claim(self, pending: Turn) -> bool:
        """Record an answer's first events, before anything is done; False when another process
        answered, declined or timed out the question first."""
        try:
            self.journal.record(pending)
        except JournalConflict:
            return False
        return True

    def _which(
        self,
        pending: Turn,
        choice: str,
        text: str,
        snapshot: Snapshot,
        heard: Recognition,
    ) -> TurnReport | None:
        """The answer to "Did you mean A or B?": plan the first words again with only the choice
        left among the options, then validate on the whole screen as for any plan."""
        pending.heard(text, heard.engine, heard.confidence, heard.timings)
        if pending.transcripts[0] == HIDDEN_WORDS:
            if not self._claim(pending):
                return None
            report = TurnReport(transcript=text, intent=None, turn_id=pending.id.hex)
            return self._finish(pending, report, Outcome.rejected, FORGOTTEN)
        others = set(pending.options) - {choice}
        narrowed = snapshot.model_copy(
            update={"nodes": tuple(n for n in snapshot.nodes if n.name not in others)}
        )
        plan = self._plan(pending.transcripts[0], narrowed)
        verdict = validate(
            plan.intent, snapshot, self._settings, self._unconfirmed(), marks=self._marks
        )
        intent_json = verdict.shown_json()
        pending.clarify(choice, intent_json)
        pending.validated(verdict.decision, verdict.risk.value, list(verdict.reasons))
        if not self._claim(pending):
            return None
        report = _report(pending, text, intent_json, verdict, plan)
        # Still not clear: don't ask the same thing forever.
        if verdict.decision == Decision.clarify:
            return self._finish(pending, report, Outcome.rejected, "Sorry, I still can't tell.")
        return self._decide(pending, report, verdict, snapshot)

    def expire_due(self) -> str | None:
        """Time out a question whose wait is over (no press, no answer); returns what to say."""
        pending = self.journal.pending_turn()
        if pending is None or self.clock() <= pending.expires_at:
            return None
        return self._expire(pending)

    def _expire(self, pending: Turn) -> str | None:
        """Time the question out, unless another process answered or ended it meanwhile."""

        def due(question: Turn) -> bool:
            return question.pending and self.clock() > question.expires_at

        if change_shared(self.journal, pending, due, time_out) is None:
            return None
        return "The earlier question timed out, so I did nothing."

    def _new_turn(
        self,
        text: str,
        trigger: str,
        plan: Plan,
        snapshot: Snapshot,
        heard: Recognition,
    ) -> TurnReport:
        verdict = validate(
            plan.intent, snapshot, self._settings, self._unconfirmed(), heard.doubt,
            self._marks,
        )
        turn = Turn(trigger=trigger, device=self.device)
        transcript = verdict.shown_words(text, snapshot)
        turn.heard(transcript, heard.engine, heard.confidence, heard.timings)
        intent_json = verdict.shown_json()
        turn.planned(
            intent_json, plan.planner, plan.model, round(plan.latency_ms, 3), list(plan.notes)
        )
        if plan.context:  # hidden as the words are: the request's own words are in it
            turn.prompted(plan.context if transcript != HIDDEN_WORDS else HIDDEN_WORDS)
        turn.validated(verdict.decision, verdict.risk.value, list(verdict.reasons))
        report = _report(turn, transcript, intent_json, verdict, plan)
        return self._decide(turn, report, verdict, snapshot)

    def _decide(
        self, turn: Turn, report: TurnReport, verdict: Verdict, snapshot: Snapshot
    ) -> TurnReport:
        """Carry out a verdict: speak a reason, answer, ask, undo or act."""
        match verdict.decision:
            case Decision.reject:
                return self._finish(turn, report, Outcome.rejected, verdict.reasons[0])
            case Decision.clarify:
                options = list(verdict.options)
                if len(options) > 1 and len(set(options)) == len(options):
                    return self._ask(turn, report, verdict.reasons[0], 0, options)
                report.expects_answer = True  # twins we can't tell apart by name
                return self._finish(turn, report, Outcome.clarify, verdict.reasons[0])
            case Decision.answer:
                answer = answer_text(verdict, snapshot, self._changed_from)
                return self._finish(turn, report, Outcome.answered, answer)
            case Decision.control:
                return self._control(turn, report, verdict, snapshot)
            case Decision.show:
                return self._show(turn, report, verdict, snapshot)
            case Decision.confirm:
                prompt = confirmation(verdict, snapshot=snapshot)
                return self._ask(turn, report, prompt, 0)
            case Decision.execute:
                return self._act(turn, report, verdict, start=0, snapshot=snapshot)
            case unknown:
                assert_never(unknown)

    def _ask(
        self,
        turn: Turn,
        report: TurnReport,
        prompt: str,
        resume_step: int,
        options: list[str] | None = None,
    ) -> TurnReport:
        timeout = self._settings.confirm_timeout_s
        turn.ask_confirmation(prompt, self.clock() + timeout, resume_step, options)
        self._speak(turn, prompt)
        self.journal.record(turn)
        decision = Outcome.clarify if options else Outcome.needs_confirmation
        report.decision, report.spoken, report.expects_answer = decision, prompt, True
        report.marks = self._marks.model_dump(mode="json") if self._marks else None
        return report

    def _finish(self, turn: Turn, report: TurnReport, outcome: Outcome, spoken: str) -> TurnReport:
        self._refresh_marks(turn)
        report.marks = self._marks.model_dump(mode="json") if self._marks else None
        self._speak(turn, spoken)
        turn.end(outcome)
        self.journal.record(turn)
        report.decision, report.spoken = outcome.value, spoken
        return report

    def _speak(self, turn: Turn, text: str) -> None:
        if text and not self.speaks_later:
            turn.spoke(text=text, timings={})

    # -- numbers and the grid ----------------------------------------------------------

    def _show(
        self, turn: Turn, report: TurnReport, verdict: Verdict, snapshot: Snapshot
    ) -> TurnReport:
        """Show or hide numbers or the grid, or narrow the grid to a cell."""
        intent = verdict.intent
        shown: Marks | None = None
        if isinstance(intent, NameElement | ForgetName):  # a name given or taken back
            by, turn_id = turn.trigger, turn.id.hex
            said = (naming.teach(self.journal, intent, snapshot, by, turn_id)
                    if isinstance(intent, NameElement)
                    else naming.forget(self.journal, intent, snapshot.active_app, by, turn_id))
            return self._finish(turn, report, Outcome.answered, said)
        if isinstance(intent, PickMark) and intent.teach and self._marks is not None:
            said = teach_spot(self.desktop, self._marks, intent.number, intent.teach,
                              by=f"{turn.trigger} turn {turn.id.hex}")
            return self._finish(turn, report, Outcome.answered, said)
        if isinstance(intent, ShowMarks):
            kinds = {"numbers": number_marks, "grid": grid_marks}
            shown = kinds[intent.kind](snapshot) if intent.kind in kinds else None
        elif isinstance(intent, PickMark) and intent.number and self._marks is not None:
            shown = self._marks.refined(intent.number)  # the validator allows only this here
        if shown is not None and shown.kind == "numbers" and not shown.numbers:
            return self._finish(
                turn, report, Outcome.rejected, "There is nothing here to put numbers on."
            )
        self._marks = shown
        turn.show_marks(shown.model_dump(mode="json") if shown else None)
        return self._finish(turn, report, Outcome.answered, marks_said(shown))

    def _refresh_marks(self, turn: Turn) -> None:
        """After a click the grid goes; numbers follow the screen, so a number said next means
        what the person sees then."""
        marks = self._marks
        if marks is None or turn.marks_changed or turn.phase == "ended":
            return
        if marks.kind == "grid":
            if self._clicked:
                self._marks = None
                turn.show_marks(None)
            return
        fresh = number_marks(self.desktop.snapshot())
        if fresh != marks:
            self._marks = fresh if fresh.numbers else None
            turn.show_marks(fresh.model_dump(mode="json") if fresh.numbers else None)

    # -- answers to a pending question -------------------------------------------------

    def _answer(
        self,
        pending: Turn,
        text: str,
        plan: Plan,
        yes: bool,
        heard: Recognition,
        by: str = "voice",
    ) -> TurnReport | None:
        """None when another process answered, declined or timed out the question first."""
        report = self._answered(pending, text, plan, heard)
        original = stored_intent(pending)
        if not yes:
            pending.decline(by=by)
            if not self._claim(pending):
                return None
            first = first_step(original)
            return self._finish(pending, report, Outcome.cancelled, declined(first))
        pending.confirm(by=by)
        if not self._claim(pending):
            return None
        if original is None:
            return self._finish(pending, report, Outcome.rejected, FORGOTTEN)
        snapshot = self.desktop.snapshot()
        verdict = validate(original, snapshot, self._settings, marks=self._marks)
        pending.validated(verdict.decision, verdict.risk.value, list(verdict.reasons))
        report.reasons = list(verdict.reasons)
        if verdict.decision == Decision.reject:
            return self._finish(pending, report, Outcome.rejected, verdict.reasons[0])
        if verdict.decision == Decision.control and isinstance(original, Undo):
            return self._undo(pending, report, snapshot)
        if verdict.decision not in (Decision.execute, Decision.confirm):
            return self._finish(pending, report, Outcome.rejected, "That can't be done now.")
        return self._act(pending, report, verdict, start=pending.resume_step, confirmed=True)

    def _ask_again(
        self, pending: Turn, text: str, plan: Plan, heard: Recognition
    ) -> TurnReport | None:
        """A yes heard doubtfully is no yes: the question is asked again and stays open. None
        when another process answered, declined or timed out the question first."""
        reason = doubt_reason(heard.doubt)
        report = self._answered(pending, text, plan, heard, reason)
        timeout = self._settings.confirm_timeout_s
        pending.ask_confirmation(pending.prompt, self.clock() + timeout, pending.resume_step,
                                 pending.options)
        spoken = asked_again(pending.prompt)
        self._speak(pending, spoken)
        if not self._claim(pending):
            return None
        report.decision, report.spoken, report.expects_answer = (
            Outcome.clarify if pending.options else Outcome.needs_confirmation, spoken, True)
        report.reasons = [reason]
        report.marks = self._marks.model_dump(mode="json") if self._marks else None
        return report

    def _answered(
        self, pending: Turn, text: str, plan: Plan, heard: Recognition, *notes: str
    ) -> TurnReport:
        """Record what was heard as the answer and what the planner made of it."""
        answer = dump_intent(plan.intent) if plan.intent else None
        latency = round(plan.latency_ms, 3)
        pending.answer(
            text, heard.engine, heard.confidence, heard.timings,
            answer, plan.planner, plan.model, latency, [*plan.notes, *notes],
        )
        return TurnReport(
            transcript=text, intent=answer, turn_id=pending.id.hex, planner=plan.planner
        )

    # -- acting ------------------------------------------------------------------------

    def _act(
        self,
        turn: Turn,
        report: TurnReport,
        verdict: Verdict,
        start: int,
        confirmed: bool = False,
        snapshot: Snapshot | None = None,
    ) -> TurnReport:
        """Perform the verdict's steps from `start`; each later one is checked again first."""
        done: list[str] = []
        for i in range(start, len(verdict.steps)):
            step = verdict.steps[i]
            if i > start or step.deferred or snapshot is None:
                # Earlier steps may have changed the screen: check this one against it afresh.
                snapshot = self.desktop.snapshot()
                check = recheck_step(verdict, i, snapshot, self._settings, confirmed)
                step = check.step
                if check.decision != "run":
                    turn.validated(check.validated, step.risk.value, [check.reason], step=i)
                    if check.question is not None:
                        prompt = " ".join([*done, confirmation(check.question, snapshot=snapshot)])
                        return self._ask(turn, report, prompt, i)
                    stop = Outcome.failed if check.decision == "failed" else Outcome.rejected
                    return self._finish(turn, report, stop, " ".join([*done, check.reason]))
            failure = self._perform_step(turn, i, step, snapshot, i in verdict.hidden)
            if failure:
                return self._finish(turn, report, Outcome.failed, " ".join([*done, failure]))
            done.append(did(step, i in verdict.hidden))
        return self._finish(turn, report, Outcome.executed, " ".join(done))

    def _perform_step(
        self, turn: Turn, index: int, step: ResolvedStep, snapshot: Snapshot, hidden: bool
    ) -> str:
        """One step of a plan. Returns what to say on failure, else ''.
        `hidden`: the step's words must not leave the turn, nor the values it changed."""
        action = step.action
        assert action is not None
        node = snapshot.node(step.node.id) if step.node else None
        before = (
            state_json(
                {node.id: ElementState(value=node.value, states=node.states)}, snapshot, hidden
            )
            if node
            else {}
        )
        shown = action.redacted() if hidden or step.secret else action
        target = node.name if node else (action.target or action.key or action.direction or "")

        def unverified(result: ActionResult) -> str:
            observed = state_json(result.after, snapshot, hidden)
            return f"not verified; observed {observed} {result.detail}".strip()

        done = self._perform(
            turn, index, action, shown, target, before, snapshot, hidden, unverified
        )
        if isinstance(done, DesktopError):
            return f"I couldn't {verb(step.intent)}: {done}"
        if not done.verified:
            return f"I tried to {verb(step.intent)}, but it didn't take effect."
        return ""

    def _perform(
        self,
        turn: Turn,
        index: int,
        action: Action,
        shown: Action,
        target: str,
        before: dict[str, Any],
        snapshot: Snapshot,
        hidden: bool,
        unverified: Callable[[ActionResult], str],
    ) -> ActionResult | DesktopError:
        """Write-ahead, act, verify, record the outcome: every action, a plan's step or an undo.
        `shown` is the action as journaled; `unverified` says what a result that did not take
        shows. Returns the result (recorded as failed unless verified) or the desktop's error."""
        performing(turn.id, busy=True)  # this process's other sessions leave the turn alone
        self._performing.append(turn.id)
        turn.start_action(
            index,
            shown.model_dump(mode="json", exclude_none=True),
            target,
            before,
            owner=str(this_process()),
        )
        self.journal.record(turn)  # write-ahead: on disk before the desktop is touched
        self._clicked = self._clicked or action.kind == "click_at"
        try:
            result = self.desktop.perform(action)
        except DesktopError as e:
            turn.action_failed(str(e))
            return e
        if not result.verified:
            turn.action_failed(unverified(result))
            return result
        self._changed_from = snapshot  # "what is the result": what this action changed
        turn.action_succeeded(
            state_json(result.before, snapshot, hidden),
            state_json(result.after, snapshot, hidden),
            result.verified,
            result.via,
        )
        return result

    # -- undo and cancel ---------------------------------------------------------------

    def _control(
        self, turn: Turn, report: TurnReport, verdict: Verdict, snapshot: Snapshot
    ) -> TurnReport:
        kind = verdict.intent.intent if verdict.intent else ""
        if kind == "undo":
            return self._undo(turn, report, snapshot, ask=UNSURE in verdict.reasons)
        if kind == "cancel":
            return self._finish(turn, report, Outcome.cancelled, "Nothing to cancel.")
        return self._finish(
            turn, report, Outcome.rejected, "There's no question waiting for an answer."
        )

    def _undo(
        self, turn: Turn, report: TurnReport, snapshot: Snapshot, ask: bool = False
    ) -> TurnReport:
        """Reverse the newest undoable turn; `snapshot` is the screen this utterance began on.
        `ask`: the undo may have been misheard, so a yes comes first (when it could be done)."""
        stack = self.journal.undo_stack(self._recent)
        if not stack:
            return self._finish(turn, report, Outcome.rejected, "There's nothing to undo.")
        target = stack[0]
        action = restore_action(target)
        if isinstance(action, str):
            return self._finish(turn, report, Outcome.rejected, action)
        changed = changed_since(target, snapshot)
        if changed:
            return self._finish(
                turn, report, Outcome.rejected, f"{changed} has changed since, so I left it alone."
            )
        names = ", ".join(dict.fromkeys(s.target for s in target.steps))
        if ask:
            words = (turn.intent or {}).get("words") or "undo that"
            return self._ask(turn, report, f"Did you mean {words}? Say yes or no.", 0)

        def unverified(result: ActionResult) -> str:
            return f"undo not verified: {result.detail}".strip()

        done = self._perform(turn, 0, action, action, names, {}, snapshot, False, unverified)
        if isinstance(done, DesktopError):
            return self._finish(turn, report, Outcome.failed, f"I couldn't undo that: {done}")
        if not done.verified:
            return self._finish(
                turn, report, Outcome.failed, "I tried to undo that, but it didn't take."
            )
        record_undone(self.journal, turn, target)
        return self._finish(
            turn, report, Outcome.undone, f"Undone: {target.spoken[-1] if target.spoken else names}"
        )


def _report(
    turn: Turn, transcript: str, intent_json: dict[str, Any] | None, verdict: Verdict, plan: Plan
) -> TurnReport:
    """What a new or re-planned turn says so far, before it is decided."""
    return TurnReport(
        transcript=transcript,
        intent=intent_json,
        reasons=list(verdict.reasons),
        turn_id=turn.id.hex,
        planner=plan.planner,
    )
