"""The validator: the only thing that decides whether a proposed intent may run.

Planners (grammar or LLM) only propose. `validate` checks the proposal against the schema, the
live screen, the risk rules and the caregiver's settings, and returns a `Verdict`. It is pure:
same inputs, same verdict, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from pydantic import ValidationError

from appliance.desktop.marks import Marks, node_at
from appliance.desktop.model import REDACTED, Action, Node, Risk, Snapshot
from appliance.desktop.resolve import Match, best_name, find_targets, name_key
from appliance.desktop.roles import (
    CHOICE_ROLES,
    ITEM_ROLES,
    NUMBER_ROLES,
    SELECTABLE_ROLES,
    TEXT_ROLES,
    TOGGLE_ROLES,
)
from appliance.desktop.seeing.taught import seen_reason, seen_refusal
from appliance.intents.aliases import name_refusal
from appliance.intents.model import (
    SCREEN_CHANGING,
    Activate,
    Clarify,
    Focus,
    ForgetName,
    Intent,
    NameElement,
    OpenApp,
    PickMark,
    PressKey,
    Read,
    Scroll,
    Select,
    Sequence,
    SetValue,
    ShowMarks,
    Step,
    TypeText,
    dump_intent,
    parse_intent,
)
from appliance.policy.doubts import doubt_reason
from appliance.policy.risk import highest, risk_of_chord, risk_of_element, risk_of_name
from appliance.settings import Settings

REJECT_BELOW = 0.3
CONFIRM_BELOW = 0.6
SURE_MATCH = 0.85  # a name this close means that element, even if its role does not fit
RIVAL_MARGIN = 0.1  # a fuzzy guess must beat the next different name by this much

UNSURE = "unsure what was meant"
HIDDEN_WORDS = f"{REDACTED} (typed into a hidden field)"
"""What is journaled and printed instead of an utterance that carried a secret."""


class Decision(StrEnum):
    """What the validator decides (`Validated.decision`). What came of the turn is another
    idea, `turn.Outcome`: the session picks it, as one decision can end a turn several ways."""

    execute = "execute"
    confirm = "confirm"  # ask first
    reject = "reject"
    clarify = "clarify"  # ask which was meant
    answer = "answer"  # only reads: nothing acts
    control = "control"  # undo, cancel, yes, no
    show = "show"  # show or hide numbers or the grid


@dataclass(frozen=True)
class ResolvedStep:
    """One step of a plan, tied to what it acts on."""

    intent: Step
    action: Action | None  # None for read
    node: Node | None
    risk: Risk
    deferred: bool = False  # target not on screen yet; checked again just before it runs

    @property
    def secret(self) -> bool:
        return self.node is not None and self.node.secret


@dataclass(frozen=True)
class Verdict:
    """What may happen with a proposal. `hidden`: the steps whose words must never leave the
    turn (the journal, printouts, prompts, replies); `shown_*` give what may."""

    decision: Decision
    risk: Risk = Risk.harmless
    reasons: tuple[str, ...] = ()
    steps: tuple[ResolvedStep, ...] = ()
    intent: Intent | None = None
    options: tuple[str, ...] = field(default=())
    hidden: frozenset[int] = frozenset()

    @property
    def secret(self) -> bool:
        return bool(self.hidden) or any(s.secret for s in self.steps)

    def shown_intent(self) -> Intent | None:
        """The intent with the person's words hidden in every secret step, at any depth."""
        if self.intent is None:
            return None
        hidden = self.hidden | {i for i, s in enumerate(self.steps) if s.secret}
        names = {i: s.node.name for i, s in enumerate(self.steps) if s.node is not None}
        return self.intent.redacted(hidden, names)

    def shown_json(self) -> dict[str, Any] | None:
        """`shown_intent` as journal and report data."""
        intent = self.shown_intent()
        return dump_intent(intent) if intent is not None else None

    def shown_words(self, words: str, snapshot: Snapshot | None = None) -> str:
        """What the person said, as it may be journaled or printed: hidden when the plan
        carried a secret, or when the words name a secret field on screen."""
        return HIDDEN_WORDS if self.secret or _names_secret_field(words, snapshot) else words


class Rejected(Exception):
    """A step cannot run; the message is what the user hears."""


def validate(
    proposal: Intent | dict[str, Any] | None,
    snapshot: Snapshot,
    settings: Settings,
    recent_unconfirmed: int = 0,
    doubt: str = "",
    marks: Marks | None = None,
) -> Verdict:
    """Decide what may happen with a proposal on this screen under these settings.

    `doubt`: why the words may be misheard (voice/hearing/clarity.py); anything that would act
    then asks first, and the doubt is kept among the reasons. `marks`: the numbers or grid the
    person sees."""
    verdict = _judge(proposal, snapshot, settings, recent_unconfirmed, doubt, marks)
    if verdict.intent is None:
        return verdict
    hidden = secret_steps(verdict.intent, verdict.steps, snapshot)
    if not hidden:
        return verdict
    if any(_misdirected(i, verdict, snapshot) for i in hidden):
        return replace(verdict, decision=Decision.reject, reasons=(MISDIRECTED,), hidden=hidden)
    reasons = verdict.reasons
    for i, step in enumerate(_steps_or_none(verdict.intent)):
        if i in hidden:
            reasons = tuple(scrubbed(r, step, snapshot) for r in reasons)
    return replace(verdict, hidden=hidden, reasons=reasons)


MISDIRECTED = (
    "Those words mention a hidden field, so I won't write them into another one. "
    "Please say it again, one step at a time."
)


def _misdirected(index: int, verdict: Verdict, snapshot: Snapshot) -> bool:
    """A step that would write words naming a secret field into an ordinary field: a misheard
    or misread command (the grammar can swallow "... type 1234 into PIN ..." as the text for
    another field), which would put the secret on the screen and into every later prompt."""
    steps = _steps_or_none(verdict.intent) if verdict.intent is not None else ()
    if index >= len(steps) or index >= len(verdict.steps):
        return False
    done = verdict.steps[index]
    action = done.action
    if done.node is None or done.node.secret or action is None:
        return False
    words = action.text if action.kind == "type_text" else action.value
    if not isinstance(words, str):
        return False
    return _names_secret_field(words, snapshot)


def scrubbed(reason: str, step: Step, snapshot: Snapshot) -> str:
    """A reason as it may be spoken for a hidden step: what the person said for it (a target
    that is more than a name on screen, typed text, a value) becomes "that"."""
    on_screen = {n.name for n in snapshot.nodes}
    said = [getattr(step, f, None) for f in ("target", "text", "value")]
    for words in sorted((w for w in said if isinstance(w, str) and w), key=len, reverse=True):
        if words not in on_screen:
            reason = reason.replace(words, "that")
    return reason


def _steps_or_none(intent: Intent) -> tuple[Step, ...]:
    try:
        return _steps_of(intent)
    except Rejected:
        return ()


def _judge(
    proposal: Intent | dict[str, Any] | None,
    snapshot: Snapshot,
    settings: Settings,
    recent_unconfirmed: int,
    doubt: str,
    marks: Marks | None = None,
) -> Verdict:
    if proposal is None:
        return Verdict(Decision.reject, reasons=("Sorry, I didn't understand that.",))
    try:
        intent = proposal if not isinstance(proposal, dict) else parse_intent(proposal)
    except ValidationError:
        return Verdict(Decision.reject, reasons=("That plan was malformed, so I did nothing.",))

    if intent.intent == "undo" and doubt:  # asked about before it is done
        return Verdict(Decision.control, reasons=(UNSURE, doubt_reason(doubt)), intent=intent)
    if intent.intent in ("undo", "cancel", "confirm", "deny"):
        return Verdict(Decision.control, intent=intent)
    if isinstance(intent, Clarify):
        return Verdict(
            Decision.clarify, reasons=(intent.question,), intent=intent, options=intent.options
        )
    if isinstance(intent, ShowMarks):
        return Verdict(Decision.show, intent=intent)
    if isinstance(intent, PickMark) and intent.teach:  # "call 7 Save": naming, not acting
        taught = taught_spot(intent, marks)
        if taught is not None:
            return Verdict(Decision.reject, reasons=(taught,), intent=intent)
        return Verdict(Decision.show, intent=intent)
    if isinstance(intent, NameElement):  # "call Doctor Patel my doctor": naming, not acting
        refusal = name_refusal(intent, snapshot)
        denied = {a.casefold() for a in settings.denylist_apps}
        apps = {m.node.app for m in find_targets(intent.target, snapshot, limit=20)
                if m.score == 1.0}
        if refusal is None and apps and all(a.casefold() in denied for a in apps):
            refusal = f"{min(apps)} is not allowed on this device."
        if refusal is not None:
            return Verdict(Decision.reject, reasons=(refusal,), intent=intent)
        return Verdict(Decision.show, intent=intent)
    if isinstance(intent, ForgetName):
        return Verdict(Decision.show, intent=intent)
    if isinstance(intent, PickMark):
        try:
            picked = _picked(intent, marks, snapshot, settings)
        except Rejected as e:
            return Verdict(Decision.reject, reasons=(str(e),), intent=intent)
        if picked is None:  # a cell of the grid, to look closer: nothing is done yet
            return Verdict(Decision.show, intent=intent)
        return _weighed(intent, [picked[0]], picked[1], settings, recent_unconfirmed,
                        doubt)
    if intent.confidence < REJECT_BELOW:
        return Verdict(
            Decision.reject, reasons=("I'm not sure what you meant. Please say it again.",),
            intent=intent,
        )

    try:
        steps_in = _steps_of(intent)
    except Rejected as e:
        return Verdict(Decision.reject, reasons=(str(e),), intent=intent)
    steps: list[ResolvedStep] = []
    confidence = intent.confidence
    for i, step in enumerate(steps_in):
        screen_may_change = any(s.intent in SCREEN_CHANGING for s in steps_in[:i])
        try:
            resolved, score = resolve_step(step, snapshot, settings, defer=screen_may_change)
        except Rejected as e:
            return Verdict(Decision.reject, reasons=(str(e),), intent=intent)
        except Ambiguous as e:
            return Verdict(Decision.clarify, reasons=(str(e),), intent=intent, options=e.options)
        steps.append(resolved)
        confidence = min(confidence, step.confidence, score)

    if all(s.action is None for s in steps):
        return Verdict(Decision.answer, steps=tuple(steps), intent=intent)
    return _weighed(intent, steps, confidence, settings, recent_unconfirmed, doubt)


def _weighed(
    intent: Intent,
    steps: list[ResolvedStep],
    confidence: float,
    settings: Settings,
    recent_unconfirmed: int,
    doubt: str,
) -> Verdict:
    """Resolved steps weighed by risk, certainty and the rate limit: act, ask or refuse."""
    risk = highest([s.risk for s in steps])
    reasons: list[str] = []
    if risk == Risk.destructive and not settings.allow_destructive:
        return Verdict(
            Decision.reject,
            risk=risk,
            intent=intent,
            steps=tuple(steps),
            reasons=(
                "That could delete something, and deleting is turned off. "
                "A caregiver can allow it.",
            ),
        )
    if risk != Risk.harmless:
        reasons.append(f"{risk.value} action")
    if confidence < CONFIRM_BELOW or doubt:
        reasons.append(UNSURE)
    if doubt:
        reasons.append(doubt_reason(doubt))
    if recent_unconfirmed >= settings.max_unconfirmed_per_minute:
        reasons.append("many actions in the last minute")
    # Read off the screen, not told by the application (or taught and missing): a yes first.
    reasons.extend(dict.fromkeys(r for s in steps if s.node and (r := seen_reason(s.node))))
    decision = Decision.confirm if reasons else Decision.execute
    return Verdict(decision, risk=risk, reasons=tuple(reasons), steps=tuple(steps), intent=intent)


def secret_steps(
    intent: Intent, resolved: tuple[ResolvedStep, ...], snapshot: Snapshot
) -> frozenset[int]:
    """The one place that decides which steps' words must never leave the turn: those that act
    on a secret field or name one, and, failing closed, those whose words may yet land in one
    (a field not on this screen, a focus that earlier steps may move, a name close to a secret
    field's)."""
    if isinstance(intent, Clarify):  # "Did you mean Card PIN or Phone PIN?" about typing
        secret_names = {n.name for n in snapshot.nodes if n.secret}
        named = secret_names.intersection(intent.options) or _names_secret_field(
            intent.words, snapshot
        )
        return frozenset({0}) if named else frozenset()
    try:
        steps = _steps_of(intent)
    except Rejected:
        return frozenset()
    hidden = set()
    for i, step in enumerate(steps):
        done = resolved[i] if i < len(resolved) else None
        if isinstance(step, TypeText) and step.target is None and i > 0:
            secret = True  # typed wherever the focus is once the earlier steps have run
        elif done is not None and done.node is not None:
            secret = done.node.secret
        else:
            changing = any(s.intent in SCREEN_CHANGING for s in steps[:i])
            deferred = done is not None and done.deferred
            secret = _may_write_secret(step, snapshot, changing, deferred)
        said = (step.words, str(getattr(step, "target", "") or ""))
        if secret or any(_names_secret_field(words, snapshot) for words in said):
            hidden.add(i)
    return frozenset(hidden)


def _may_write_secret(
    step: Step, snapshot: Snapshot, screen_may_change: bool, deferred: bool
) -> bool:
    """Whether the words of a step not tied to an element may be meant for a secret field."""
    if isinstance(step, TypeText) or (isinstance(step, SetValue) and isinstance(step.value, str)):
        unseen = True  # words for a field we cannot see may be for a secret one
    elif isinstance(step, SetValue) and not isinstance(step.value, bool):
        unseen = False  # a number only ever goes into a slider: hidden if it names a secret field
    else:
        return False
    if deferred:
        return unseen
    target = step.target
    if target is None:
        fields = [n for n in snapshot.in_active_window() if n.role in TEXT_ROLES and n.visible]
        focused = [n for n in fields if "focused" in n.states]
        candidates = focused[:1] or fields
        return any(n.secret for n in candidates) if candidates else unseen
    near = [
        m
        for m in [*find_targets(target, snapshot, roles=_roles_for(step)),
                  *find_targets(target, snapshot, limit=1)]
        if m.score >= REJECT_BELOW
    ]
    if not near:
        return unseen
    best = max(m.score for m in near)
    if screen_may_change and best < 1.0:
        return unseen  # perhaps meant for a field on the screen an earlier step opens
    return any(m.node.secret for m in near if best - m.score < RIVAL_MARGIN)


def _names_secret_field(words: str, snapshot: Snapshot | None) -> bool:
    said = f" {name_key(words)} "
    return snapshot is not None and any(
        f" {name_key(n.name)} " in said for n in snapshot.nodes if n.secret and n.name.strip()
    )


def _steps_of(intent: Intent) -> tuple[Step, ...]:
    if isinstance(intent, Sequence):
        return intent.steps
    if isinstance(intent, Activate | TypeText | PressKey | OpenApp | Focus | Scroll | SetValue
                  | Select | Read):
        return (intent,)
    raise Rejected("That can't be done as an action.")


class Ambiguous(Exception):
    def __init__(self, question: str, options: tuple[str, ...]) -> None:
        super().__init__(question)
        self.options = options


def resolve_step(
    step: Step, snapshot: Snapshot, settings: Settings, defer: bool = False
) -> tuple[ResolvedStep, float]:
    """Tie one step to the screen; raises Rejected or Ambiguous. Returns the match score too."""
    denied = {a.casefold() for a in settings.denylist_apps}
    if isinstance(step, OpenApp):
        names = [*snapshot.applications, *snapshot.launchable]
        found = best_name(step.app, names)
        if found is None:
            raise Rejected(f"{step.app} isn't installed here.")
        name, score = found
        if name.casefold() in denied:
            raise Rejected(f"{name} is not allowed on this device.")
        action = Action(kind="open_app", target=name)
        return ResolvedStep(
            step.model_copy(update={"app": name}), action, None, Risk.harmless
        ), score
    if isinstance(step, PressKey):
        chord = step.chord()
        action = Action(kind="press_key", key=chord)
        return ResolvedStep(step, action, None, risk_of_chord(chord)), 1.0
    if isinstance(step, Read) and step.target is None:
        return ResolvedStep(step, None, None, Risk.harmless), 1.0
    if isinstance(step, Scroll) and step.target is None:
        action = Action(kind="scroll", direction=step.direction)
        return ResolvedStep(step, action, None, Risk.harmless), 1.0
    if isinstance(step, TypeText) and step.target is None:
        node = _typing_target(snapshot)
        return _checked(step, node, 1.0, denied), 1.0

    name = getattr(step, "target", None) or ""
    match = _one_target(name, snapshot, _roles_for(step))
    if match is None:
        if defer:
            return ResolvedStep(step, None, None, risk_of_name(name), deferred=True), 1.0
        raise Rejected(f"I can't find {name} on the screen.")
    return _checked(step, match.node, match.score, denied), match.score


NO_MARKS = "There are no numbers on the screen. Say show numbers, or show grid, first."
STALE_MARK = (
    "The screen changed since the numbers were shown, so I did nothing. "
    "Look at the new numbers and say it again."
)
NOTHING_KNOWN_THERE = 0.5
"""The certainty of a grid click on a point where no element is known: below CONFIRM_BELOW, so
the person is asked first."""


def _picked(
    intent: PickMark, marks: Marks | None, snapshot: Snapshot, settings: Settings
) -> tuple[ResolvedStep, float] | None:
    """What a number said now acts on: the control that wore it, or a point of the grid; None
    when it only narrows the grid."""
    if marks is None:
        raise Rejected(NO_MARKS)
    denied = {a.casefold() for a in settings.denylist_apps}
    if marks.kind == "grid":
        if intent.number is not None and intent.number > 9:
            raise Rejected("The grid has cells 1 to 9.")
        if intent.number is not None and not intent.click:
            return None
        area = marks.refined(intent.number).grid() if intent.number else marks.grid()
        x, y = area.centre()
        node = node_at(snapshot, x, y)
        if node is not None and node.app.casefold() in denied:
            raise Rejected(f"{node.app} is not allowed on this device.")
        step = Activate(target=node.name if node and node.name else "there", words=intent.words)
        action = Action(kind="click_at", target=node.id if node else None, point=(x, y))
        if node is None:
            return ResolvedStep(step, action, None, Risk.harmless), NOTHING_KNOWN_THERE
        # What a click lands on is the innermost element; what it does is also its container's
        # (an icon inside a Delete button deletes).
        risk = highest([risk_of_element(n, "activate") for n in _with_ancestors(node, snapshot)])
        return ResolvedStep(step, action, node, risk), 1.0
    mark = next((m for m in marks.numbers if m.number == intent.number), None)
    if mark is None:
        raise Rejected(f"There is no number {intent.number} on the screen.")
    node = snapshot.node(mark.node_id)
    if node is None or (node.name, node.role) != (mark.name, mark.role):
        raise Rejected(STALE_MARK)
    called = node.name or f"number {mark.number}"
    chosen: Step
    if node.role in TEXT_ROLES:
        chosen = Focus(target=called, words=intent.words)
    elif node.role in TOGGLE_ROLES:  # a tick's number flips it, and says which way
        chosen = SetValue(target=called, value="checked" not in node.states, words=intent.words)
    elif node.role in SELECTABLE_ROLES:
        chosen = Select(target=called, words=intent.words)
    else:
        chosen = Activate(target=called, words=intent.words)
    resolved = _checked(chosen, node, 1.0, denied)
    if not node.name:  # say "number 7", never an empty name
        resolved = replace(resolved, intent=chosen)
    return resolved, 1.0


def taught_spot(intent: PickMark, marks: Marks | None) -> str | None:
    """Why "call 7 Save" cannot name that spot (no marks, no such number), or None."""
    if marks is None:
        return NO_MARKS
    if marks.kind == "grid" and intent.number is not None and intent.number > 9:
        return "The grid has cells 1 to 9."
    if marks.kind == "numbers" and not any(m.number == intent.number for m in marks.numbers):
        return f"There is no number {intent.number} on the screen."
    return None


def _with_ancestors(node: Node, snapshot: Snapshot) -> list[Node]:
    chain = [node]
    parent = snapshot.node(node.parent_id) if node.parent_id else None
    while parent is not None and len(chain) < 64:
        chain.append(parent)
        parent = snapshot.node(parent.parent_id) if parent.parent_id else None
    return chain


def _roles_for(step: Step) -> frozenset[str] | None:
    if isinstance(step, TypeText):
        return TEXT_ROLES
    if isinstance(step, Select):
        return ITEM_ROLES
    if isinstance(step, SetValue):
        if isinstance(step.value, bool):
            return TOGGLE_ROLES
        if isinstance(step.value, float | int):
            return NUMBER_ROLES
        return CHOICE_ROLES | TEXT_ROLES
    return None


def _one_target(name: str, snapshot: Snapshot, roles: frozenset[str] | None) -> Match | None:
    """The element a name means, None when nothing on screen is close enough."""
    matches = find_targets(name, snapshot, roles=roles)
    loose = find_targets(name, snapshot, limit=1) if roles is not None else []
    if (
        loose
        and loose[0].score >= SURE_MATCH
        and (not matches or loose[0].score > matches[0].score)
    ):
        other = loose[0].node
        raise Rejected(f"{other.name} is a {other.role}; I can't do that with it.")
    if not matches:
        return None
    best = matches[0]
    twins = [
        m
        for m in matches[1:]
        if m.score == best.score
        and m.node.name == best.node.name
        and m.node.app == best.node.app
        and m.node.window == best.node.window
        and m.node.visible == best.node.visible  # a folded menu's item does not rival a button
    ]
    if twins:
        places = tuple(_place(m.node) for m in (best, *twins))
        raise Ambiguous(f"There are {len(places)} called {best.node.name}. Which one?", places)
    rivals = [
        m
        for m in matches[1:]
        if m.node.name != best.node.name and best.score - m.score < RIVAL_MARGIN
    ]
    if best.score < 1.0 and rivals:
        if best.score < CONFIRM_BELOW:
            return None  # two weak guesses are no guess
        options = (best.node.name, rivals[0].node.name)
        raise Ambiguous(f"Did you mean {options[0]} or {options[1]}?", options)
    return best


def _place(node: Node) -> str:
    return f"{node.name} ({node.role})"


def _typing_target(snapshot: Snapshot) -> Node:
    fields = [n for n in snapshot.in_active_window() if n.role in TEXT_ROLES and n.visible]
    focused = [n for n in fields if "focused" in n.states]
    if focused:
        return focused[0]
    if len(fields) == 1:
        return fields[0]
    raise Rejected("Which field should I type into? Say, for example, type hello into Message.")


def _checked(step: Step, node: Node, score: float, denied: set[str]) -> ResolvedStep:
    """Apply the per-element rules and build the concrete action."""
    if node.app.casefold() in denied:
        raise Rejected(f"{node.app} is not allowed on this device.")
    if isinstance(step, Read):
        return ResolvedStep(step, None, node, Risk.harmless)
    if not node.visible:
        raise Rejected(f"{node.name} is not showing right now.")
    if not node.enabled:
        raise Rejected(f"{node.name} is greyed out right now, so I can't use it.")
    if (refusal := seen_refusal(node)) is not None:
        raise Rejected(refusal)
    kind = step.intent
    value: Any = None
    if isinstance(step, SetValue):
        value = _checked_value(step, node)
    action = Action(
        kind=kind,
        target=node.id,
        text=step.text if isinstance(step, TypeText) else None,
        value=value,
        direction=step.direction if isinstance(step, Scroll) else None,
    )
    named = (
        step.model_copy(update={"target": node.name})
        if isinstance(step, Activate | Focus | Select | SetValue | TypeText | Scroll)
        else step
    )
    return ResolvedStep(named, action, node, risk_of_element(node, kind))


def _checked_value(step: SetValue, node: Node) -> bool | float | str:
    value = step.value
    if isinstance(value, bool):
        return value
    if node.role in NUMBER_ROLES:
        number = float(value)
        lo = node.minimum if node.minimum is not None else 0.0
        hi = node.maximum if node.maximum is not None else 100.0
        if not lo <= number <= hi:
            raise Rejected(f"{node.name} goes from {lo:g} to {hi:g}.")
        return number
    if node.role in CHOICE_ROLES and node.child_ids:
        return str(value)  # the adapter matches it against the choices and says if it can't
    return str(value)
