"""The journal in plain words: each turn as a `Story` (what was said, what the appliance made of
it, who answered, how it ended, in sentences a caregiver reads), everything else a caregiver
sees as a `Happening`. The one place the day page, a turn's page, the printed report and the
CSV take their words from; they read the audit's timeline rows, as the fleet's copy has them
too. Recorded words stay data: whatever shows them escapes them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from enum import StrEnum
from typing import Any, Literal

from pydantic import ValidationError

from appliance.audit.timeline import WINDOW, NoSuchTurn, first_at, timeline
from appliance.audit.words import TAUGHT, taught_words
from appliance.desktop.model import REDACTED
from appliance.intents.model import Sequence, parse_intent
from appliance.journal.application import Journal
from appliance.journal.retention import REMOVED
from appliance.policy.doubts import HEARD_DOUBTFULLY
from appliance.policy.validator import HIDDEN_WORDS, MISDIRECTED, UNSURE
from appliance.questions import first_step
from appliance.replies import asked_again, verb
from appliance.settings import Settings


@dataclass(frozen=True)
class Look:
    """An outcome as it is shown: a few words, and the icon beside them (never alone)."""

    label: str
    icon: str


class Group(StrEnum):
    """How a command ended, as the day's summary counts it."""

    done = "done"
    refused = "refused"
    cancelled = "cancelled"
    failed = "failed"
    waiting = "waiting"


GROUP_LOOKS = {Group.done: Look("done", "check"), Group.refused: Look("refused", "blocked"),
               Group.cancelled: Look("asked and cancelled", "cross"),
               Group.failed: Look("went wrong", "alert"),
               Group.waiting: Look("waiting for an answer", "hourglass")}
_GROUPS = {"executed": Group.done, "answered": Group.done, "undone": Group.done,
           "rejected": Group.refused, "cancelled": Group.cancelled,
           "timed_out": Group.cancelled, "clarify": Group.cancelled,
           "failed": Group.failed, "interrupted": Group.failed}


def group_of(outcome: str) -> Group:
    """The group of a turn's recorded outcome ("": it has not ended)."""
    return _GROUPS.get(outcome, Group.failed) if outcome else Group.waiting


class Ending(StrEnum):
    """How a command ended, in the words a caregiver needs: "rejected" is one of six things."""

    done = "done"
    answered = "answered"
    undo = "undo"  # this command took an earlier one back
    undone = "undone"  # done, then taken back by a later command
    not_understood = "not_understood"
    safety = "safety"
    not_allowed = "not_allowed"
    not_on_screen = "not_on_screen"
    greyed_out = "greyed_out"
    could_not = "could_not"
    declined = "declined"
    replaced = "replaced"
    timed_out = "timed_out"
    cancelled = "cancelled"
    which = "which"
    failed = "failed"
    interrupted = "interrupted"
    waiting = "waiting"


LOOKS = {
    Ending.done: Look("Done", "check"),
    Ending.answered: Look("Answered", "bubble"),
    Ending.undo: Look("Undid a change", "undo"),
    Ending.undone: Look("Done, then undone", "undo"),
    Ending.not_understood: Look("Didn't understand", "question"),
    Ending.safety: Look("Refused for safety", "shield"),
    Ending.not_allowed: Look("Not allowed here", "blocked"),
    Ending.not_on_screen: Look("Not on the screen", "search"),
    Ending.greyed_out: Look("Greyed out", "greyed"),
    Ending.could_not: Look("Couldn't be done", "blocked"),
    Ending.declined: Look("Asked, then no", "cross"),
    Ending.replaced: Look("Asked, then a new command", "cross"),
    Ending.timed_out: Look("Asked, no answer", "clock"),
    Ending.cancelled: Look("Cancelled", "cross"),
    Ending.which: Look("Couldn't tell which", "question"),
    Ending.failed: Look("Went wrong", "alert"),
    Ending.interrupted: Look("Interrupted", "alert"),
    Ending.waiting: Look("Waiting for an answer", "hourglass"),
}

_REFUSALS = {
    Ending.not_understood: "it didn't understand, so it did nothing",
    Ending.safety: "it refused, for safety, and did nothing",
    Ending.not_allowed: "that application is not allowed on this device, so it did nothing",
    Ending.not_on_screen: "it couldn't find that on the screen, so it did nothing",
    Ending.greyed_out: "that was greyed out on the screen, so it did nothing",
    Ending.could_not: "it couldn't do that, so it did nothing",
}
# The validator's and the session's own words for a refusal: all the journal keeps of why.
_NOT_UNDERSTOOD = ("Sorry, I didn't understand that.", "Sorry, I still can't tell.",
                   "I'm not sure what you meant. Please say it again.",
                   "That plan was malformed, so I did nothing.")
_NOT_ON_SCREEN = ("I can't find", "is not showing right now", "There is no number",
                  "isn't installed here", "There is nothing here to put numbers on")
_ASKED_BECAUSE = {"moderate action": "that needs a yes",
                  "destructive action": "that could delete something",
                  UNSURE: "it wasn't sure what was meant",
                  "many actions in the last minute": "many actions came in the last minute"}
_ANSWERED_BY = {"voice": "by voice", "text": "typed", "switch": "with the switch",
                "web": "from the caregiver page"}
NEW_COMMAND = "new command"  # who "declined" a question a new command replaced (journal/shared.py)
_STARTED_BY = {"voice": "Started by voice", "text": "Typed in",
               "switch": "Started with the switch"}
_DID = {"activate": "pressed {t}", "type_text": "typed into {t}", "press_key": "pressed {t}",
        "open_app": "opened {t}", "focus": "moved to {t}", "scroll": "scrolled {t}",
        "set_value": "changed {t}", "select": "selected {t}", "restore": "put {t} back",
        "click_at": "clicked on the screen"}
_STATE_WORDS = {"checked": "ticked", "expanded": "open", "focused": "in focus"}
LONGEST_TURN = timedelta(hours=1, minutes=5)
"""A turn ends this soon after it starts at the latest (a question waits at most an hour)."""
_ACTION_ENDS = ("ActionSucceeded", "ActionFailed", "Interrupted")
CAREGIVER_DEVICE = "web:"  # how the session names a caregiver's undo from the page
CAREGIVER_UNDO = "undo that"  # what the page's undo says to the session for the caregiver
_NOT_KEPT = {  # what stands for words that are not kept: (a title, an opening sentence)
    HIDDEN_WORDS: ("Words for a hidden field",
                   "They said something for a hidden field (its words are never kept)."),
    REMOVED: ("Words no longer kept",
              "What they said is no longer kept (removed after the chosen days)."),
}


@dataclass(frozen=True)
class Recorded:
    """One event of a turn as the journal holds it."""

    seq: int
    at: datetime  # in the caregiver's time zone
    event: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Step:
    """One step of a turn in words."""

    at: datetime
    text: str


@dataclass
class Story:
    """One command, from the journal's events of its turn."""

    turn: str  # the turn's id as the journal's rows give it
    started: datetime  # in the caregiver's time zone
    trigger: str  # voice, text, switch, web
    device: str = ""
    said: str = ""
    understood: str = ""  # what the planner made of the words, in words; "" for nothing
    risk: str = "harmless"
    reasons: list[str] = field(default_factory=list)  # the validator's words, last verdict
    asked: str = ""  # the question it asked
    asked_because: list[str] = field(default_factory=list)  # the validator's reasons for it
    options: list[str] = field(default_factory=list)
    answer: str = ""  # "yes", "no", or the option chosen
    answered_by: str = ""  # voice, text, switch, or "new command"
    timed_out: bool = False
    acts: list[str] = field(default_factory=list)  # what it did, in words
    reply: str = ""  # the last thing it said
    outcome: str = ""  # as recorded when it ended; "" until then
    ended: datetime | None = None
    undone_by: str = ""  # the turn that took it back
    undoer: Story | None = None
    events: list[Recorded] = field(default_factory=list)

    @property
    def short(self) -> str:
        return self.turn[:8]

    @property
    def caregiver(self) -> str:
        """The caregiver who started it from the page (an undo), else ""."""
        if self.trigger == "web" and self.device.startswith(CAREGIVER_DEVICE):
            return self.device[len(CAREGIVER_DEVICE):] or "A caregiver"
        return ""

    @property
    def group(self) -> Group:
        return group_of(self.outcome)

    @property
    def ending(self) -> Ending:
        match self.outcome:
            case "executed":
                return Ending.undone if self.undone_by else Ending.done
            case "answered":
                return Ending.answered
            case "undone":
                return Ending.undo
            case "rejected":
                return _refusal(self.reasons[0] if self.reasons else self.reply, self.risk,
                                not self.understood)
            case "cancelled":
                if self.answered_by == NEW_COMMAND:
                    return Ending.replaced
                return Ending.declined if self.answer == "no" else Ending.cancelled
            case "timed_out":
                return Ending.timed_out
            case "clarify":
                return Ending.which
            case "interrupted":
                return Ending.interrupted
            case "":
                return Ending.waiting
        return Ending.failed

    @property
    def look(self) -> Look:
        return LOOKS[self.ending]

    def _not_their_words(self) -> tuple[str, str] | None:
        """(a title, an opening sentence) when what started it is not the person's words as
        kept: a caregiver's undo from the page, or words that are not kept."""
        who, said = self.caregiver, self.said
        if who and said == CAREGIVER_UNDO:
            return (f"{who} undid the last change",
                    f"{who} pressed \u201cUndo this\u201d on the caregiver page.")
        if who:
            return (f"{who}: \u201c{said}\u201d",
                    f"{who} asked from the caregiver page: \u201c{said}\u201d.")
        return _NOT_KEPT.get(said)

    @property
    def title(self) -> str:
        """What the command was, in a few words: what was said, or who did what."""
        if (other := self._not_their_words()) is not None:
            return other[0]
        return f"\u201c{self.said}\u201d" if self.said else "Nothing heard"

    @property
    def opening(self) -> str:
        """Who started it and with what words, as a sentence."""
        if (other := self._not_their_words()) is not None:
            return other[1]
        if not self.said:
            return "Nothing was heard."
        match self.trigger:
            case "voice":
                return f"They said \u201c{self.said}\u201d."
            case "text":
                return f"They typed \u201c{self.said}\u201d."
            case "switch":
                return f"They chose \u201c{self.said}\u201d with the switch."
        return f"\u201c{self.said}\u201d came in ({self.trigger})."

    @property
    def happened(self) -> str:
        """What came of it, in one sentence without who started it."""
        clauses = []
        if self.asked:
            clauses.append(f"{self._why_asked()}, so it asked")
            clauses.append(self._answer_words())
        ending = self.ending
        match ending:
            case Ending.done | Ending.undone | Ending.undo:
                clauses.append("it " + " and ".join(self.acts) if self.acts else "it did it")
            case Ending.answered:
                clauses.append(f"it answered \u201c{self.reply}\u201d" if self.reply
                               else "it answered")
            case Ending.declined | Ending.replaced | Ending.timed_out:
                clauses.append("it did nothing")
            case Ending.cancelled:
                clauses.append("nothing was waiting to be cancelled")
            case Ending.which:
                clauses.append("it couldn't tell which one was meant, so it did nothing")
            case Ending.failed:
                tried = " and ".join(self.acts) or "do it"
                clauses.append(f"it tried ({tried}), but it went wrong")
            case Ending.interrupted:
                clauses.append("it started, but the appliance stopped before it could finish")
            case Ending.waiting:
                pass
            case _:
                clauses.append(_REFUSALS[ending])
        return _full_stop(_capital("; ".join(c for c in clauses if c) or "nothing more happened"))

    @property
    def later(self) -> str:
        """What happened to it afterwards: who took it back."""
        if self.ending != Ending.undone:
            return ""
        return f"Later it was undone{self._undone_how()}."

    def _undone_how(self) -> str:
        undoer = self.undoer
        if undoer is None:
            return ""
        if undoer.caregiver:
            return f" by {undoer.caregiver}, from the caregiver page"
        how = _ANSWERED_BY.get(undoer.trigger, "")
        return f" by them ({how})" if how else " by them"

    @property
    def sentence(self) -> str:
        """The whole command in plain words: who, what, why it asked, how it ended, what it
        said, what happened to it later."""
        parts = [self.opening, self.happened]
        if self.reply and self.ending != Ending.answered:  # an answer is in `happened`
            parts.append(_full_stop(f"It said \u201c{self.reply}\u201d"))
        parts.append(self.later)
        return " ".join(p for p in parts if p)

    @property
    def who_confirmed(self) -> str:
        """Who answered its question, and how: "yes, by voice"; "" when it asked none."""
        if not self.answer:
            return "no answer" if self.timed_out else ""
        return f"{self.answer}, {_ANSWERED_BY.get(self.answered_by, self.answered_by)}"

    @property
    def took_s(self) -> float | None:
        """Seconds from its start to its end (with the wait for an answer, if it asked)."""
        if self.ended is None:
            return None
        return round(self.ended.timestamp() - self.started.timestamp(), 1)  # across DST too

    @property
    def setting(self) -> str:
        """The setting that would have let it through or changed how it went, if one would."""
        ending = self.ending
        if ending == Ending.safety and self.risk == "destructive":
            return "allow_destructive"
        if ending == Ending.not_allowed:
            return "denylist_apps"
        if ending == Ending.timed_out:
            return "confirm_timeout_s"
        if "many actions in the last minute" in self.asked_because:
            return "max_unconfirmed_per_minute"
        return ""

    @property
    def setting_label(self) -> str:
        return Settings.label(self.setting) if self.setting else ""

    @property
    def steps(self) -> list[Step]:
        """Each event of the turn in words, in order; an action is one step once its outcome
        is in, and a question is not said twice."""
        out: list[Step] = []
        acting = asked = doubted = ""
        answered = False
        for i, e in enumerate(self.events):
            if e.event == "ActionStarted":
                acting = _did(e.data)
                if any(later.event in _ACTION_ENDS for later in self.events[i + 1:]):
                    continue  # said with its outcome
            elif e.event == "Answered":
                doubted = next((str(n) for n in e.data.get("notes") or []
                                if str(n).startswith(HEARD_DOUBTFULLY)), "")
            elif e.event == "ConfirmationAsked":
                asked = str(e.data.get("prompt", ""))
                if doubted:
                    out.append(Step(e.at, f"Not taken as a yes, as {_doubt(doubted)}: "
                                          "asked again"))
                    continue
            elif e.event == "Spoke" and e.data.get("text") in (asked, asked_again(asked)):
                continue
            elif e.event == "Confirmed":
                answered = True
            elif e.event == "Validated" and answered and e.data.get("decision") != "reject":
                out.append(Step(e.at, "Checked again with the yes: it may go ahead"))
                continue
            text = self._step(e, acting)
            if text:
                out.append(Step(e.at, text))
        return out

    def _why_asked(self) -> str:
        if self.options:
            return "it wasn't sure which one was meant"
        why = [_ASKED_BECAUSE.get(r, _doubt(r)) for r in self.asked_because]
        return " and ".join(dict.fromkeys(why)) or "it needed a yes"

    def _answer_words(self) -> str:
        if self.answered_by == NEW_COMMAND:
            return "a new command came before an answer"
        if self.timed_out:
            return "no answer came in time"
        if not self.answer:
            return "it is waiting for an answer" if not self.outcome else ""
        how = _ANSWERED_BY.get(self.answered_by, "")
        said = f"said {self.answer}" if self.answer in ("yes", "no") else f"chose {self.answer}"
        return f"they {said}" + (f" ({how})" if how and self.answered_by != "voice" else "")

    def _step(self, e: Recorded, acting: str) -> str:
        data = e.data
        match e.event:
            case "TurnStarted":
                if self.caregiver:
                    return f"Started from the caregiver page by {self.caregiver}"
                return _STARTED_BY.get(self.trigger, f"Started ({self.trigger})")
            case "Heard":
                return f"Heard \u201c{data.get('transcript', '')}\u201d" + _sureness(data)
            case "Answered":
                return f"Answer heard: \u201c{data.get('transcript', '')}\u201d" + _sureness(data)
            case "Planned":
                meant = understood(data.get("intent"))
                how = "" if data.get("planner") in ("grammar", "marks", "aliases") else \
                    f" (by {data.get('planner') or 'the planner'})"
                return (f"Understood as: {meant}" if meant else "Not understood") + how
            case "Prompted":
                return "Asked the language model (what it was given is in the details below)"
            case "Validated":
                if data.get("decision") == "show" and self.understood.startswith(_NAMING):
                    return "Checked: it only gives or takes back a name; nothing is pressed"
                return _checked(str(data.get("decision", "")), list(data.get("reasons") or []))
            case "ConfirmationAsked":
                return f"Asked: \u201c{data.get('prompt', '')}\u201d"
            case "Clarified":
                return f"They chose {data.get('choice', '')}"
            case "Confirmed":
                return f"Yes, {_ANSWERED_BY.get(str(data.get('by')), str(data.get('by')))}"
            case "Declined":
                if data.get("by") == NEW_COMMAND:
                    return "A new command came before an answer, so the question was dropped"
                return f"No, {_ANSWERED_BY.get(str(data.get('by')), str(data.get('by')))}"
            case "ConfirmationTimedOut":
                return "No answer came in time"
            case "ActionStarted":
                return f"Began: {acting}"
            case "ActionSucceeded":
                changed = changes(data.get("before") or {}, data.get("after") or {})
                checked = " and checked the screen" if data.get("verified") else ""
                return _capital(acting) + checked + (": " + "; ".join(changed) if changed else "")
            case "ActionFailed":
                return f"Tried: {acting}; it did not work: {data.get('error', '')}"
            case "Interrupted":
                return f"Began: {acting}; the appliance stopped before it could finish"
            case "Spoke":
                return f"Said: \u201c{data.get('text', '')}\u201d"
            case "MarksShown":
                marks = data.get("marks") or {}
                return f"Showed {marks.get('kind', 'numbers')} on the screen" if marks else \
                    "Took the numbers or grid off the screen"
            case "Undone":
                return f"Undone later{self._undone_how()}"
            case "TurnEnded":
                return f"Ended: {self.look.label}"
        return ""


_NAMING = ("call ", "take back the name ")
"""How `understood` begins for a name given to an element or taken back."""


def _refusal(reason: str, risk: str, understood_nothing: bool) -> Ending:
    if understood_nothing or reason in _NOT_UNDERSTOOD:
        return Ending.not_understood
    if risk == "destructive" or reason == MISDIRECTED:
        return Ending.safety
    if "is not allowed on this device" in reason:
        return Ending.not_allowed
    if "greyed out" in reason:
        return Ending.greyed_out
    if any(words in reason for words in _NOT_ON_SCREEN):
        return Ending.not_on_screen
    return Ending.could_not


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _full_stop(text: str) -> str:
    """`text` ending as a sentence, once: a quoted sentence keeps its own stop."""
    return text if text.rstrip("\u201d")[-1:] in (".", "?", "!") else text + "."


def _doubt(reason: str) -> str:
    if reason.startswith(HEARD_DOUBTFULLY):
        return "it may have misheard (" + reason.removeprefix(HEARD_DOUBTFULLY).lstrip(": ") + ")"
    return reason


def _sureness(data: dict[str, Any]) -> str:
    confidence = data.get("confidence")
    if not isinstance(confidence, int | float) or data.get("engine") in ("text", "web"):
        return ""
    if data.get("engine") == "closed:templates":  # appliance/voice/hearing/stt_closed.py
        return f" (matched to their own recorded voice, {round(100 * float(confidence))}% sure)"
    return f" ({round(100 * float(confidence))}% sure)"


def _checked(decision: str, reasons: list[str]) -> str:
    match decision:
        case "execute":
            return "Checked: allowed without asking"
        case "confirm":
            why = " and ".join(dict.fromkeys(_ASKED_BECAUSE.get(r, _doubt(r)) for r in reasons))
            return f"Checked: it asks first ({why})" if why else "Checked: it asks first"
        case "reject":
            return f"Checked: refused (\u201c{reasons[0] if reasons else ''}\u201d)"
        case "answer":
            return "Checked: it only reads the screen"
        case "control":
            return "Checked: an undo, cancel, yes or no"
        case "show":
            return "Checked: it shows or hides numbers or the grid"
        case "clarify":
            return f"Checked: not sure which one (\u201c{reasons[0] if reasons else ''}\u201d)"
    return f"Checked: {decision}"


def understood(intent: Any) -> str:
    """What a plan meant to do, in words ("press Send", "undo the last change"); "" for none."""
    if not isinstance(intent, dict) or not intent.get("intent"):
        return ""
    target = str(intent.get("target") or "")
    match intent["intent"]:
        case "activate":
            return f"press {target}"
        case "read":
            return f"read {target or 'the screen'} aloud"
        case "undo":
            return "undo the last change"
        case "cancel":
            return "cancel"
        case "confirm":
            return "yes"
        case "deny":
            return "no"
        case "show_marks":
            return f"show {intent.get('kind') or 'numbers'}"
        case "pick_mark":
            return f"number {intent.get('number', '')}".strip()
        case "clarify":
            return "ask which one"
        case "name_element":
            return f"call {target} \u201c{intent.get('name', '')}\u201d"
        case "forget_name":
            return f"take back the name \u201c{intent.get('name', '')}\u201d"
    try:
        parsed = parse_intent(intent)
    except (ValidationError, ValueError):
        return str(intent["intent"]).replace("_", " ")
    steps = parsed.steps if isinstance(parsed, Sequence) else (first_step(parsed),)
    return ", then ".join(verb(s) for s in steps if s is not None)


def _did(started: dict[str, Any]) -> str:
    """What an action did, in words, from its ActionStarted event."""
    action = started.get("action") or {}
    kind, target = str(action.get("kind", "")), str(started.get("target") or "")
    text, value = action.get("text"), action.get("value")
    if kind == "type_text" and text and text != REDACTED:
        return f"typed \u201c{text}\u201d into {target}"
    if kind == "set_value" and isinstance(value, bool):
        return f"{'ticked' if value else 'unticked'} {target}"
    if kind == "set_value" and value is not None and value != REDACTED:
        return f"set {target} to {value}"
    return _DID.get(kind, kind.replace("_", " ") + " {t}").format(t=target).strip()


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What an action changed on the screen, in words ("Urgent is no longer ticked")."""
    out = []
    for key, now in after.items():
        was = before.get(key) or {}
        name = now.get("name") or was.get("name") or "it"
        if was.get("value") != now.get("value"):
            out.append(f"{name} was {_value(was.get('value'))}, now {_value(now.get('value'))}")
        old, new = set(was.get("states") or []), set(now.get("states") or [])
        out += [f"{name} is now {_STATE_WORDS.get(s, s)}" for s in sorted(new - old)]
        out += [f"{name} is no longer {_STATE_WORDS.get(s, s)}" for s in sorted(old - new)]
        if (now.get("activations") or 0) > (was.get("activations") or 0):
            out.append(f"{name} was pressed")
        if was.get("running") != now.get("running") and now.get("running") is not None:
            out.append(f"{name} {'opened' if now['running'] else 'closed'}")
    return out


def _value(value: Any) -> str:
    """A value on the screen, quoted as text is, or "empty"."""
    if value is None or value == "" or value == []:
        return "empty"
    return f"\u201c{', '.join(map(str, value)) if isinstance(value, list) else value}\u201d"


# -- from the timeline's rows --------------------------------------------------------------


HappeningKind = Literal["caregiver", "device"]


@dataclass(frozen=True)
class Happening:
    """Something other than a command, in words: a caregiver on the page or a device."""

    at: datetime  # in the caregiver's time zone
    kind: HappeningKind
    text: str
    fault: str = ""  # the device, for a device's fault


_HAPPENINGS: dict[str, HappeningKind] = {"WebAccess": "caregiver", "SettingChanged": "caregiver",
               "DeviceFault": "device", "SwitchPressed": "device", "SpeechIgnored": "device",
               # what a person taught: spots, names for elements, takes of their voice
               "TargetTaught": "caregiver", "TargetForgotten": "caregiver",
               "TargetUsed": "device", "AliasTaught": "caregiver", "AliasForgotten": "caregiver",
               "VoiceTakesAdded": "caregiver", "VoiceTakesRemoved": "caregiver"}
_ACCESS = {"paired": "{c} paired this page with the kiosk",
           "pairing_failed": "A pairing try failed (the name given: \u201c{c}\u201d)",
           "logged_in": "{c} logged in", "logged_out": "{c} logged out",
           "logged_out_everywhere": "{c} logged out everywhere",
           "login_failed": "A login as \u201c{c}\u201d failed",
           "joined_as_caregiver": "{c} joined as a caregiver",
           "joined_as_viewer": "{c} joined as a viewer",
           "invited_caregiver": "{c} invited a caregiver",
           "invited_viewer": "{c} invited a viewer", "revoked": "{c} removed someone's access",
           "withdrew_an_invitation": "{c} withdrew an invitation before it was used",
           "ended_one_of_their_sessions": "{c} logged out one of their devices"}


@dataclass
class Told:
    """A stretch of the journal in words: its commands and its other happenings, oldest
    first."""

    stories: list[Story] = field(default_factory=list)
    happenings: list[Happening] = field(default_factory=list)


def told(rows: Iterable[dict[str, Any]], zone: tzinfo) -> Told:
    """Timeline rows (oldest first) in words. A turn begun before the rows is left out: it
    belongs to the stretch before."""
    out = Told()
    turns: dict[str, Story] = {}
    spots: dict[str, str] = {}  # taught spots' names by id: their uses name only the id
    for row in rows:
        at = datetime.fromisoformat(row["time"]).astimezone(zone)
        event, data = row["event"], row["data"]
        if row["aggregate"] != "Turn":
            target = data.get("target")
            if event == "TargetTaught" and isinstance(target, dict):
                spots[str(target.get("id", ""))] = str(target.get("name", ""))
            if event in _HAPPENINGS:
                fault = str(row.get("device") or "device") if event == "DeviceFault" else ""
                out.happenings.append(Happening(at, _HAPPENINGS[event],
                                                happening_words(row, spots), fault))
            continue
        story = turns.get(row["turn"])
        if story is None:
            if event != "TurnStarted":
                continue
            story = turns[row["turn"]] = Story(turn=row["turn"], started=at,
                                               trigger=str(data.get("trigger", "")),
                                               device=str(data.get("device", "")))
            out.stories.append(story)
        story.events.append(Recorded(int(row["seq"]), at, event, data))
        _fold(story, event, data, at)
    for story in out.stories:
        if story.undone_by:
            story.undoer = turns.get(story.undone_by[:8])
    return out


def _fold(story: Story, event: str, data: dict[str, Any], at: datetime) -> None:
    match event:
        case "Heard":
            if not story.said:
                story.said = str(data.get("transcript", ""))
            else:  # a journal from before `Answered`: the answer came as Heard + Planned
                story.answer = story.answer or str(data.get("transcript", ""))
        case "Planned":
            if not story.understood:
                story.understood = understood(data.get("intent"))
        case "Validated":
            story.risk = str(data.get("risk", story.risk))
            story.reasons = [str(r) for r in data.get("reasons") or []]
            if data.get("decision") == "confirm" and not story.asked:
                story.asked_because = list(story.reasons)
        case "ConfirmationAsked":
            story.asked = str(data.get("prompt", ""))
            story.options = [str(o) for o in data.get("options") or []]
        case "Clarified":
            story.answer, story.answered_by = str(data.get("choice", "")), ""
        case "Confirmed":
            story.answer, story.answered_by = "yes", str(data.get("by", ""))
        case "Declined":
            story.answer, story.answered_by = "no", str(data.get("by", ""))
            if story.answered_by == NEW_COMMAND:
                story.answer = ""
        case "ConfirmationTimedOut":
            story.timed_out = True
        case "ActionStarted":
            story.acts.append(_did(data))
        case "Spoke":
            story.reply = str(data.get("text", ""))
        case "Undone":
            story.undone_by = str(data.get("by_turn", ""))
        case "TurnEnded":
            story.outcome, story.ended = str(data.get("outcome", "")), at


def happening_words(row: dict[str, Any], spots: Mapping[str, str] | None = None) -> str:
    """A happening that is not a command, in a sentence; `spots`: taught spots' names by id,
    from earlier rows (a spot's use names only its id)."""
    data = row["data"]
    if row["event"] in TAUGHT:
        return taught_words(row["event"], data, spots)
    match row["event"]:
        case "WebAccess":
            what, who = str(data.get("what", "")), str(data.get("caregiver", ""))
            said = _ACCESS.get(what, "{c}: " + what.replace("_", " ")).format(c=who)
            return f"{said} (from {data.get('address', '')})"
        case "SettingChanged":
            key = str(data.get("key", ""))
            label = Settings.label(key) if key in Settings.model_fields else key
            return (f"{data.get('by', '')} changed \u201c{label}\u201d from "
                    f"{_setting(data.get('old'))} to {_setting(data.get('new'))}")
        case "DeviceFault":
            device = str(row.get("device") or "a device")
            return f"{device.capitalize()} fault: {data.get('message', '')}"
        case "SwitchPressed":
            gesture = str(data.get("gesture", "")).replace("_", " ")
            meaning = _pressed(str(data.get("meaning", "")))
            return f"Switch {data.get('switch', '')} {gesture}: {meaning}"
        case "SpeechIgnored":
            return f"Talk without the wake phrase, not acted on ({data.get('count', 0)})"
    return str(row["detail"])


_PRESSED = {
    "talk_start": "started listening", "talk_stop": "stopped listening", "yes": "yes",
    "no": "no", "cancel": "cancel", "undo": "undo", "scan_start": "started scanning",
    "scan_next": "the next item", "scan_select": "chose", "scan_hold": "held to scan",
    "scan_stop": "stopped scanning", "enrol_pause": "paused or went on learning the voice",
    "enrol_skip": "skipped a phrase of learning the voice",
    "enrol_stop": "stopped learning the voice", "none": "nothing at that moment",
}
"""What a switch press meant (switch/meaning.py), in a caregiver's words."""


def _pressed(meaning: str) -> str:
    """"scan_select: Send" reads "chose Send"."""
    kind, _, item = meaning.partition(": ")
    return " ".join(filter(None, [_PRESSED.get(kind, kind), item]))


def _setting(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "" or value == []:
        return "(empty)"
    return ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def story_of(journal: Journal, turn: str, zone: tzinfo) -> Story:
    """The turn whose id starts with `turn`, with the turn that undid it if one did;
    NoSuchTurn when there is none."""
    rows = timeline(journal, turn=turn)
    undone = next((r for r in rows if r["event"] == "Undone"), None)
    if undone is not None:
        seq = int(undone["seq"])
        with suppress(NoSuchTurn):  # the undoing turn begins just before it is recorded
            rows += timeline(journal, turn=str(undone["data"].get("by_turn", ""))[:32],
                             start=max(1, seq - WINDOW), end=seq)
    found = told(sorted(rows, key=lambda r: int(r["seq"])), zone).stories
    if not found:
        raise NoSuchTurn(f"no turn {turn!r} in the journal")
    return found[0]


def told_between(journal: Journal, since: datetime, until: datetime | None,
                 zone: tzinfo) -> Told:
    """The commands begun from `since` until `until` (None: now), whole even when they ended
    later, and everything else that happened in between, oldest first."""
    end = None
    if until is not None:
        end = first_at(journal, until + LONGEST_TURN) + WINDOW
    rows = timeline(journal, since=since, start=first_at(journal, since), end=end)
    found = told(rows, zone)
    if until is None:
        return found
    return Told([s for s in found.stories if s.started < until],
                [h for h in found.happenings if h.at < until])
