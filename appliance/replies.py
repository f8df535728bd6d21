"""What the appliance says: short, plain sentences that name what happened. Pure functions."""

from __future__ import annotations

from appliance.desktop.content import changed_text, document_text, sent_text, writing_text
from appliance.desktop.describe import describe_element, describe_screen, describe_selection
from appliance.desktop.marks import Marks
from appliance.desktop.model import Node, Risk, Snapshot
from appliance.desktop.roles import BUTTON_ROLES, TEXT_ROLES
from appliance.desktop.seeing.taught import SEEN_REASON, TAUGHT_MISSED_REASON
from appliance.intents.keys import letters_alike
from appliance.intents.model import (
    Activate,
    OpenApp,
    PressKey,
    Read,
    Scroll,
    SetValue,
    Step,
    TypeText,
)
from appliance.limits import MAX_SPOKEN_CHARS, clip
from appliance.policy.doubts import Doubt, doubt_reason
from appliance.policy.risk import sends
from appliance.policy.validator import UNSURE, ResolvedStep, Verdict

KEY_WORDS = {
    "ctrl": "control",
    "Return": "enter",
    "BackSpace": "backspace",
    "Page_Down": "page down",
    "Page_Up": "page up",
    "super": "super",
}


def spoken_chord(chord: str) -> str:
    return " ".join(KEY_WORDS.get(k, k.upper() if len(k) == 1 else k) for k in chord.split("+"))


def role_word(role: str) -> str:
    """What a person calls an element of this role: 'text field', 'button', 'check box'."""
    if role in TEXT_ROLES:
        return "text field"
    if role in BUTTON_ROLES:
        return "button"
    return role


def _number(value: float) -> str:
    return f"{value:g}"


def did(step: ResolvedStep, hidden: bool = False) -> str:
    """Past tense, one sentence: 'Typed hello grandma into Message.' (cut if very long).
    `hidden`: the step's words must not leave the turn (`Verdict.hidden`)."""
    return clip(_did(step, hidden), MAX_SPOKEN_CHARS)


def _did(step: ResolvedStep, hidden: bool) -> str:
    i = step.intent
    # An unnamed element is called what the person called it ("number 7"), else its role.
    name = (step.node.name if step.node else "") or getattr(i, "target", "") or ""
    if not name.strip() and step.node is not None:
        name = f"the {role_word(step.node.role)}"  # "Typed hello into the text field."
    hidden = hidden or step.secret
    if step.action is not None and step.action.kind == "click_at":
        return f"Clicked {name or 'there'}."
    if isinstance(i, TypeText):
        return f"Typed into {name}." if hidden else f"Typed {i.text} into {name}."
    if isinstance(i, SetValue) and not isinstance(i.value, bool):
        if hidden:
            return f"Set {name}."
        shown = _number(i.value) if isinstance(i.value, float | int) else i.value
        return f"Set {name} to {shown}."
    phrase = _phrase(i, name)
    return f"{phrase[1]} {phrase[2]}." if phrase else "Done."


def verb(step: Step, words: bool = False) -> str:
    """Infinitive for questions: 'send', 'type into PIN', 'tick Urgent'; `words`: with the words
    to type ('type see you soon into Message')."""
    name = getattr(step, "target", None) or ""
    if isinstance(step, Activate) and len(name.split()) <= 3:
        return name.lower()
    if isinstance(step, TypeText):
        typed = f"type {step.text}" if words and step.text else ""
        return f"{typed or 'type'} into {name}" if name else typed or "type that"
    if isinstance(step, SetValue) and not isinstance(step.value, bool):
        return f"set {name}"
    phrase = _phrase(step, name)
    return f"{phrase[0]} {phrase[2]}" if phrase else "do that"


_VERBS: dict[str, tuple[str, str]] = {
    "activate": ("press", "Pressed"),
    "select": ("select", "Selected"),
    "focus": ("go to", "Moved to"),
    "open_app": ("open", "Opened"),
    "scroll": ("scroll", "Scrolled"),
    "press_key": ("press", "Pressed"),
}
"""(infinitive, past tense) of the steps said the same way in both tenses."""


def _phrase(step: Step, name: str) -> tuple[str, str, str] | None:
    """(infinitive, past tense, object) for the steps said the same way in both tenses."""
    if isinstance(step, SetValue):
        ticked = step.value is True
        return ("tick", "Ticked", name) if ticked else ("untick", "Unticked", name)
    verbs = _VERBS.get(step.intent)
    return None if verbs is None else (*verbs, _object(step, name))


def _object(step: Step, name: str) -> str:
    if isinstance(step, OpenApp):
        return step.app
    if isinstance(step, Scroll):
        return step.direction
    if isinstance(step, PressKey):
        return spoken_chord(step.chord())
    return name


def confirmation(
    verdict: Verdict,
    steps: tuple[ResolvedStep, ...] | None = None,
    snapshot: Snapshot | None = None,
) -> str:
    """'Send needs a yes. Message says see you soon. Say yes to send, or no.' What a press of
    Send would send is read back first: the fields of `snapshot`, or the words typed before it."""
    hidden = verdict.hidden if steps is None else frozenset()
    steps = steps if steps is not None else verdict.steps
    first = steps[0]
    # Words to write heard unsurely are read back, unless they are secret or may be; so are
    # words about to be sent.
    last_send = max((i for i, s in enumerate(steps) if _sends(s)), default=-1)
    read_back = doubt_reason(Doubt.WORDS_UNSURE) in verdict.reasons
    what = " and then ".join(
        verb(_unnamed(s.intent) if i in hidden and s.node is None else s.intent,
             words=(read_back or i < last_send)
             and i not in hidden and s.node is not None and not s.node.secret)
        for i, s in enumerate(steps)
    )
    # Sent alone, what the fields say now; after typing, the words typed are what goes.
    sent = sent_text(snapshot) if snapshot is not None and _sends(first) else None
    subject = first.node.name if first.node and len(steps) == 1 else "That"
    if first.action is not None and first.action.kind == "click_at" and first.node is None:
        return "I can't tell what is under that point. Say yes to click there anyway, or no."
    seen = seen_question(verdict.reasons, first.node)
    if seen:
        return seen
    if UNSURE in verdict.reasons:
        return " ".join(filter(None, [f"Did you mean {what}?", sent, "Say yes or no."]))
    if verdict.risk == Risk.destructive:
        return f"{subject} can delete things and needs a yes. Say yes to {what}, or no."
    if verdict.risk == Risk.harmless:
        return f"That's a lot of actions in a minute. Say yes to {what}, or no."
    return " ".join(filter(None, [f"{subject} needs a yes.", sent, f"Say yes to {what}, or no."]))


def seen_question(reasons: tuple[str, ...], node: Node | None) -> str:
    """The question before clicking what was only read off the screen, or a taught target
    that missed; "" for anything else. The text read is quoted: it is data."""
    if node is None:
        return ""
    if SEEN_REASON in reasons:
        return (f"I can see '{node.name}' but the application doesn't say what it is. "
                "Say yes to click it, or no.")
    if TAUGHT_MISSED_REASON in reasons:
        return (f"{node.name} didn't seem to work the last two times. "
                "Say yes to click it anyway, or no.")
    return ""


def _sends(step: ResolvedStep) -> bool:
    """A press of an element that sends what its window's fields say."""
    return isinstance(step.intent, Activate) and step.node is not None and sends(step.node.name)


def _unnamed(step: Step) -> Step:
    """A hidden step not tied to the screen: its target is what the person said, so "that"."""
    return step.model_copy(update={"target": "that"}) if hasattr(step, "target") else step


ASKED_AGAIN = "I'm not sure that was a yes."
"""Said before the question again, when a yes was heard doubtfully."""


def asked_again(prompt: str) -> str:
    return f"{ASKED_AGAIN} {prompt}"


def declined(intent_step: Step | None) -> str:
    if intent_step is None:
        return "Okay, cancelled."
    said = f"Okay, I won't {verb(intent_step)}."
    if isinstance(intent_step, PressKey) and letters_alike(intent_step.key):
        # The letter was likely misheard for one that rhymes with it: say how to be sure.
        said += " A letter is heard surely as in the spelling alphabet: charlie for C."
    return said


def answer_text(verdict: Verdict, snapshot: Snapshot, changed_from: Snapshot | None = None) -> str:
    """The answer to a question about the screen: each element, the selection, the content,
    the result (what changed since `changed_from`, the screen before the last action) or the
    screen. On-screen text is read out as data, cut to what can be listened to."""
    parts = []
    for step in verdict.steps:
        read = step.intent
        assert isinstance(read, Read)
        if step.node is not None:
            parts.append(describe_element(step.node))
        elif read.what == "selection":
            parts.append(describe_selection(snapshot))
        elif read.what in ("content", "result"):
            changed = changed_text(changed_from, snapshot) if changed_from else None
            parts.append(
                (changed if read.what == "result" else None)
                or writing_text(snapshot)
                or document_text(snapshot)
                or describe_selection(snapshot)
            )
        else:
            parts.append(describe_screen(snapshot))
    return clip(" ".join(parts), MAX_SPOKEN_CHARS)


def marks_said(marks: Marks | None) -> str:
    """What showing, narrowing or hiding numbers or the grid says."""
    if marks is None:
        return "Numbers and grid hidden."
    if marks.kind == "numbers":
        count = len(marks.numbers)
        return f"Showing {count} number{'s' if count != 1 else ''}. Say a number to use it."
    if not marks.grid().refinable():
        return "That is as close as the grid goes. Say click to click there."
    return "Showing the grid. Say a number to look closer, or click and a number to click there."
