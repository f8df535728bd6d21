"""An open question and its answer: which option an answer names, and what a yes carries on
with. Pure."""

from __future__ import annotations

from appliance.desktop.resolve import best_name
from appliance.intents.grammar.wording import words
from appliance.intents.model import CONTROL_INTENTS, Intent, Sequence, Step, parse_intent
from appliance.policy.validator import CONFIRM_BELOW
from appliance.turn import Turn

ORDINALS = {
    "first": 0,
    "one": 0,
    "1": 0,
    "second": 1,
    "two": 1,
    "2": 1,
    "third": 2,
    "three": 2,
    "3": 2,
    "last": -1,
}

FORGOTTEN = "I didn't keep what was hidden. Please say it again."

UNDO_ALIKE = {"don't do that": "undo that", "dont do that": "undo that",
              "don't do it": "undo it", "dont do it": "undo it"}
"""How Whisper may write an undo as a "no", and the undo each may have been."""


def undo_alike(said: str) -> str | None:
    """The undo a spoken "no" with no question open may have been ("don't do that": "undo
    that"), or None."""
    return UNDO_ALIKE.get(" ".join(words(said.replace("\u2019", "'"))))


def pick_option(answer: str, options: list[str]) -> str | None:
    """Which option an answer names: "Radio 4", "radio four", "the second one"."""
    found = best_name(answer, options)
    if found and found[1] == 1.0:
        return found[0]
    for word in answer.casefold().replace("-", " ").split():
        if word in ORDINALS and ORDINALS[word] < len(options):
            return options[ORDINALS[word]]
    return found[0] if found and found[1] >= CONFIRM_BELOW else None


def stored_intent(turn: Turn) -> Intent | None:
    """The journaled intent, to carry on after a yes; None when a step still to run lost what
    it needs to the redaction (typed words were never stored, so they cannot be typed)."""
    if turn.intent is None:
        return None
    intent = parse_intent(turn.intent)
    if any(i >= turn.resume_step for i in intent.lost_steps()):
        return None
    return intent


def first_step(intent: Intent | None) -> Step | None:
    """The step a question was about (to name it when declined); None for a control intent."""
    if isinstance(intent, Sequence):
        return intent.steps[0]
    if intent is None or intent.intent == "undo" or intent.intent in CONTROL_INTENTS:
        return None
    return intent  # type: ignore[return-value]
