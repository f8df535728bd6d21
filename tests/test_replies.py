"""What the appliance says after a step and when it asks: each kind of step in both tenses."""

from __future__ import annotations

import pytest

from appliance.desktop.model import Node, Risk
from appliance.intents.model import (
    Activate,
    Focus,
    OpenApp,
    PressKey,
    Scroll,
    Select,
    SetValue,
    Step,
    TypeText,
)
from appliance.policy.validator import ResolvedStep
from appliance.replies import declined, did, verb


def _on(step: Step, name: str, role: str = "push button") -> ResolvedStep:
    node = Node(id="n", role=role, name=name, app="A", window="W")
    return ResolvedStep(step, None, node, Risk.harmless)


@pytest.mark.parametrize(("step", "name", "role", "past", "asked"), [
    (TypeText(text="hello", target="Message"), "Message", "text", "Typed hello into Message.",
     "type into Message"),
    (SetValue(target="Urgent", value=True), "Urgent", "check box", "Ticked Urgent.",
     "tick Urgent"),
    (SetValue(target="Urgent", value=False), "Urgent", "check box", "Unticked Urgent.",
     "untick Urgent"),
    (SetValue(target="Volume", value=40.0), "Volume", "slider", "Set Volume to 40.",
     "set Volume"),
    (Activate(target="Send"), "Send", "push button", "Pressed Send.", "send"),
    (Activate(target="Send it to all of them"), "Send it to all of them", "push button",
     "Pressed Send it to all of them.", "press Send it to all of them"),
    (Select(target="Inbox"), "Inbox", "list item", "Selected Inbox.", "select Inbox"),
    (Focus(target="Message"), "Message", "text", "Moved to Message.", "go to Message"),
])
def test_each_step_is_said_in_both_tenses(
    step: Step, name: str, role: str, past: str, asked: str,
) -> None:
    assert did(_on(step, name, role)) == past
    assert verb(step) == asked


@pytest.mark.parametrize(("step", "past", "asked"), [
    (OpenApp(app="Messages"), "Opened Messages.", "open Messages"),
    (Scroll(direction="down"), "Scrolled down.", "scroll down"),
    (PressKey(key="s", modifiers=("ctrl",)), "Pressed control S.", "press control S"),
])
def test_steps_without_an_element(step: Step, past: str, asked: str) -> None:
    assert did(ResolvedStep(step, None, None, Risk.harmless)) == past
    assert verb(step) == asked


def test_a_field_with_no_name_is_called_by_what_it_is() -> None:
    assert did(_on(TypeText(text="hello"), "", "entry")) == "Typed hello into the text field."
    assert did(_on(Activate(target="x"), " ", "push button")) == "Pressed the button."


def test_hidden_words_are_not_said() -> None:
    assert did(_on(TypeText(text="hello", target="PIN"), "PIN", "text"), hidden=True) == (
        "Typed into PIN.")
    assert did(_on(TypeText(text="hello", target="PIN"), "PIN", "password text")) == (
        "Typed into PIN.")
    assert did(_on(SetValue(target="Name", value="Ann"), "Name", "combo box"), hidden=True) == (
        "Set Name.")


def test_a_letter_key_declined_is_answered_with_how_to_say_it_surely() -> None:
    """A letter asked about was likely misheard for one that rhymes with it ("z" for "c")."""
    assert declined(PressKey(key="z", modifiers=("ctrl",))) == (
        "Okay, I won't press control Z. A letter is heard surely as in the spelling alphabet: "
        "charlie for C.")
    assert declined(PressKey(key="Return")) == "Okay, I won't press enter."
    assert declined(None) == "Okay, cancelled."
