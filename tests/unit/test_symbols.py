"""Buttons named by a symbol are said by its name: resolved against a calculator's keypad the
way GNOME Calculator and KCalc label theirs (+ − × ÷ = . % M+ x²)."""

from __future__ import annotations

import pytest

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.resolve import find_targets, name_key
from appliance.desktop.uinput.keymap import char_stroke, parse_chord
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.model import Activate, dump_intent
from appliance.policy.validator import CONFIRM_BELOW, validate
from appliance.settings import Settings
from appliance.words.symbols import spelled_symbols

KEYPAD = ["7", "8", "9", "÷", "4", "5", "6", "×", "1", "2", "3", "−", "0", ".", "=", "+",
          "MC", "MR", "M+", "M−", "C", "AC", "%", "x²", "Add", "⌫"]


@pytest.fixture(scope="module")
def keypad() -> Snapshot:
    nodes = tuple(Node(id=str(i), role="push button", name=n, app="calc", window="Calc")
                  for i, n in enumerate(KEYPAD))
    return Snapshot(nodes=nodes, active_app="calc", active_window="Calc")


@pytest.mark.parametrize(("said", "button"), [
    ("plus", "+"), ("minus", "−"), ("times", "×"), ("multiply", "×"), ("divide", "÷"),
    ("divided by", "÷"), ("equals", "="), ("equal", "="), ("point", "."), ("dot", "."),
    ("percent", "%"), ("the plus button", "+"), ("m plus", "M+"), ("memory plus", "M+"),
    ("memory recall", "MR"), ("clear", "C"), ("all clear", "AC"), ("x squared", "x²"),
    ("backspace", "⌫"), ("seven", "7"),
])
def test_a_symbol_is_said_by_its_name(keypad: Snapshot, said: str, button: str) -> None:
    found = find_targets(said, keypad)
    assert found[0].node.name == button and found[0].score == 1.0
    assert all(m.score < 1.0 for m in found[1:]), "a second exact match would need a question"


def test_a_name_said_as_it_is_wins_over_a_symbol_it_could_stand_for(keypad: Snapshot) -> None:
    assert [m.node.name for m in find_targets("add", keypad) if m.score == 1.0] == ["Add"]


@pytest.mark.parametrize(("name", "key"), [
    ("e-mail", "e mail"), ("3.5", "3 5"), ("Inbox - Mail", "inbox mail"), ("1/x", "1 x"),
    ("Close ✕", "close"), ("50%", "50 percent"), ("+/-", "plus minus"), ("M−", "m minus"),
])
def test_a_symbol_inside_a_word_or_between_words_stays_punctuation(name: str, key: str) -> None:
    assert name_key(name) == key


def test_text_without_symbols_is_left_as_it_is() -> None:
    assert spelled_symbols("Send message") == "Send message"


MEMORY_KEYS = ["MC", "MR", "MS", "M+", "M−", "C", "CE", "±", "Backspace"]


@pytest.mark.parametrize("said", ["times", "miss", "emcee", "mister", "see", "multiply"])
def test_a_near_miss_never_lands_on_a_two_letter_button(said: str) -> None:
    nodes = tuple(Node(id=str(i), role="push button", name=n, app="calc", window="Calc")
                  for i, n in enumerate(MEMORY_KEYS))
    snap = Snapshot(nodes=nodes, active_app="calc", active_window="Calc")
    assert not [m.node.name for m in find_targets(said, snap) if len(m.node.name) <= 2
                and m.score >= CONFIRM_BELOW]
    assert validate(Activate(target=said, words=f"press {said}"), snap, Settings()).decision in (
        "reject", "clarify", "confirm")


def test_an_operator_word_on_a_key_that_holds_it_is_a_question_not_a_press() -> None:
    """"minus" with no minus key: M− holds the word and is asked about; ± ("plus minus") is
    a name of symbols alone, matched only as said."""
    nodes = tuple(Node(id=str(i), role="push button", name=n, app="calc", window="Calc")
                  for i, n in enumerate(MEMORY_KEYS))
    snap = Snapshot(nodes=nodes, active_app="calc", active_window="Calc")
    verdict = validate(Activate(target="minus", words="press minus"), snap, Settings())
    assert verdict.decision == "confirm", verdict
    assert [s.node.name for s in verdict.steps if s.node] == ["M−"]
    for said in ("times", "close"):  # "close" is letters from "Backspace": no match at all
        verdict = validate(Activate(target=said, words=f"press {said}"), snap, Settings())
        assert verdict.decision == "reject", verdict


GALCULATOR = ["<-", "C", "AC", "%", "sqrt", "=", "2", "1", ".", "0", "(", ")", "MS", "MR", "M+",
              "*", "+/-", "+", "-", "3", "6", "5", "4", "/", "9", "8", "7"]
"""galculator's keypad as AT-SPI names it (its erase key is "<-")."""


def _pad(names: list[str]) -> Snapshot:
    nodes = tuple(Node(id=str(i), role="toggle button", name=n, app="galculator",
                       window="galculator") for i, n in enumerate(names))
    return Snapshot(nodes=nodes, active_app="galculator", active_window="galculator")


@pytest.mark.parametrize(("said", "button"), [
    ("click minus", "-"), ("minus", "-"), ("click backspace", "<-"), ("click delete", "<-"),
    ("click times", "*"), ("click plus minus", "+/-"),
])
def test_galculator_minus_is_its_minus_and_the_arrow_is_backspace(said: str, button: str) -> None:
    plan = GrammarPlanner().plan(said, _pad(GALCULATOR))
    assert isinstance(plan.intent, Activate) and plan.intent.target == button, plan.intent


@pytest.mark.parametrize("said", ["click minus", "click times", "click the minus button"])
def test_a_symbol_not_on_screen_is_said_to_be_missing_not_guessed(said: str) -> None:
    """No minus key: "<-", "+" and "+/-" are letters away, but never pressed for it."""
    snap = _pad(["+", "+/-", "=", "<-", "<="])
    plan = GrammarPlanner().plan(said, snap)
    assert plan.intent is not None
    verdict = validate(plan.intent, snap, Settings())
    assert verdict.decision == "reject" and "can't find" in verdict.reasons[0], verdict


@pytest.mark.parametrize(("name", "key"), [("<-", "backspace"), ("<=", ""), ("->", "")])
def test_a_name_of_symbols_is_spelled_whole_or_not_at_all(name: str, key: str) -> None:
    """Its known part alone would name another key: "<=" is not "equals"."""
    assert name_key(name) == key


@pytest.mark.parametrize(("said", "wanted"), [
    ("press plus", {"intent": "activate", "target": "+"}),
    ("press equals", {"intent": "activate", "target": "="}),
    ("press the plus key", {"intent": "press_key", "key": "plus"}),
    ("press enter", {"intent": "press_key", "key": "Return"}),
    ("control plus", {"intent": "press_key", "key": "plus", "modifiers": ["ctrl"]}),
])
def test_press_names_a_symbol_button_but_a_key_stays_a_key(
    keypad: Snapshot, said: str, wanted: dict[str, object],
) -> None:
    plan = GrammarPlanner().plan(said, keypad)
    assert plan.intent is not None
    got = dump_intent(plan.intent)
    assert {k: got.get(k) for k in wanted} == wanted, got


@pytest.mark.parametrize(("name", "char"), [("plus", "+"), ("minus", "-"), ("asterisk", "*"),
                                            ("period", "."), ("equal", "=")])
def test_a_key_said_by_its_symbol_name_is_that_character(name: str, char: str) -> None:
    assert parse_chord(name) == char_stroke(char)
