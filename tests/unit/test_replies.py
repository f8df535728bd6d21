"""What the appliance says after a step and when it asks: each kind of step in both tenses."""

from __future__ import annotations

import pytest

from appliance.desktop.model import Node, Risk, Snapshot
from appliance.intents.model import (
    Activate,
    Focus,
    OpenApp,
    PressKey,
    Scroll,
    Select,
    Sequence,
    SetValue,
    Step,
    TypeText,
)
from appliance.policy.validator import Decision, ResolvedStep, Verdict
from appliance.replies import confirmation, declined, did, verb


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


def _mail(reply: str, search: str = "") -> Snapshot:
    """A mail window with its reply written, something looked for, and a PIN filled in."""
    fields = [("Search mail", "text", search), ("Reply text", "text", reply),
              ("PIN", "password text", "2468"), ("Send reply", "push button", None),
              ("Delete", "push button", None)]
    nodes = tuple(Node(id=name, role=role, name=name, value=value, app="Mail", window="Mail")
                  for name, role, value in fields)
    return Snapshot(nodes=nodes, applications=("Mail",), active_app="Mail", active_window="Mail")


def _press(snapshot: Snapshot, name: str, risk: Risk = Risk.moderate) -> Verdict:
    node = snapshot.node(name)
    assert node is not None
    step = ResolvedStep(Activate(target=name), None, node, risk)
    return Verdict(Decision.confirm, risk, ("moderate risk",), (step,), Activate(target=name))


def test_what_a_press_of_send_would_send_is_read_back_first() -> None:
    """Words Whisper was sure of and wrong ("hi red" for "buy bread") are caught before they go;
    never a secret field's, nor what was looked for."""
    mail = _mail("buy bread on the way home", search="lunch")
    assert confirmation(_press(mail, "Send reply"), snapshot=mail) == (
        "Send reply needs a yes. Reply text says buy bread on the way home. "
        "Say yes to send reply, or no.")
    empty = _mail("")
    assert confirmation(_press(empty, "Send reply"), snapshot=empty) == (
        "Send reply needs a yes. Say yes to send reply, or no.")
    assert "buy bread" not in confirmation(_press(mail, "Delete", Risk.destructive),
                                           snapshot=mail)


def test_words_typed_then_sent_in_one_breath_are_read_back() -> None:
    mail = _mail("")
    field, send = mail.node("Reply text"), mail.node("Send reply")
    intent = Sequence(steps=(TypeText(text="see you soon", target="Reply text"),
                             Activate(target="Send reply")))
    steps = (ResolvedStep(intent.steps[0], None, field, Risk.harmless),
             ResolvedStep(intent.steps[1], None, send, Risk.moderate))
    verdict = Verdict(Decision.confirm, Risk.moderate, ("moderate risk",), steps, intent)
    assert confirmation(verdict, snapshot=mail) == (
        "That needs a yes. Say yes to type see you soon into Reply text and then send reply, "
        "or no.")
    hidden = Verdict(Decision.confirm, Risk.moderate, ("moderate risk",), steps, intent,
                     hidden=frozenset({0}))
    assert "see you soon" not in confirmation(hidden, snapshot=mail)
