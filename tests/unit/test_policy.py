"""The validator decides; these pin down each rule of the policy."""

from __future__ import annotations

import pytest

from appliance.desktop.model import Risk
from appliance.intents.model import (
    Activate,
    OpenApp,
    PressKey,
    Read,
    Select,
    Sequence,
    SetValue,
    TypeText,
    Undo,
)
from appliance.policy.risk import risk_of_name
from appliance.policy.validator import validate
from appliance.settings import Settings
from tests.scenes import messages, settings_panel, snapshot_of

MESSAGES = snapshot_of(messages())
PANEL = snapshot_of(settings_panel())
DEFAULT = Settings()


def test_harmless_action_runs_at_once() -> None:
    v = validate(SetValue(target="Urgent", value=False), MESSAGES, DEFAULT)
    assert v.decision == "execute" and v.risk == Risk.harmless
    assert v.steps[0].action is not None and v.steps[0].action.target == "0.0.1"


def test_scene_risk_and_name_rules() -> None:
    assert validate(Activate(target="Send"), MESSAGES, DEFAULT).decision == "confirm"
    assert validate(Activate(target="Sign out"), PANEL, DEFAULT).risk == Risk.moderate
    # the element's own risk wins over the name rules, both ways
    assert validate(Activate(target="Save"), PANEL, DEFAULT).decision == "execute"
    assert validate(Activate(target="Tidy up"), PANEL, DEFAULT).risk == Risk.destructive


@pytest.mark.parametrize(
    "name", ["Delete conversation", "Erase all", "Remove user", "Format disk", "Factory reset"]
)
def test_destructive_names(name: str) -> None:
    assert risk_of_name(name) == Risk.destructive


@pytest.mark.parametrize("name", ["Send", "Pay now", "Buy", "Submit form"])
def test_moderate_names(name: str) -> None:
    assert risk_of_name(name) == Risk.moderate


def test_destructive_refused_unless_enabled_then_always_confirmed() -> None:
    refused = validate(Activate(target="Factory reset"), PANEL, DEFAULT)
    assert refused.decision == "reject" and "caregiver" in refused.reasons[0]
    allowed = Settings(allow_destructive=True)
    v = validate(Activate(target="Factory reset"), PANEL, allowed)
    assert v.decision == "confirm" and v.risk == Risk.destructive
    sure = Activate(target="Factory reset", confidence=1.0)
    assert validate(sure, PANEL, allowed, recent_unconfirmed=0).decision == "confirm"


def test_confidence_thresholds() -> None:
    assert validate(Select(target="Doctor", confidence=0.2), MESSAGES, DEFAULT).decision == "reject"
    low = validate(Select(target="Doctor", confidence=0.45), MESSAGES, DEFAULT)
    assert low.decision == "confirm" and "unsure what was meant" in low.reasons
    sure = validate(Select(target="Doctor", confidence=0.7), MESSAGES, DEFAULT)
    assert sure.decision == "execute"


def test_missing_disabled_invisible_targets_are_rejected_with_a_reason() -> None:
    missing = validate(Activate(target="Qwzx"), MESSAGES, DEFAULT)
    assert missing.decision == "reject" and "can't find" in missing.reasons[0]
    # a poor guess is never acted on without a yes
    guess = validate(Activate(target="Launch rockets"), MESSAGES, DEFAULT)
    assert guess.decision in ("reject", "confirm")
    disabled = validate(Activate(target="Call"), MESSAGES, DEFAULT)
    assert disabled.decision == "reject" and "greyed out" in disabled.reasons[0]
    hidden = validate(Activate(target="Hidden thing"), PANEL, DEFAULT)
    assert hidden.decision == "reject" and "not showing" in hidden.reasons[0]


def test_two_elements_with_one_name_ask_which() -> None:
    v = validate(Activate(target="OK"), PANEL, DEFAULT)
    assert v.decision == "clarify" and len(v.options) == 2


def test_rate_limit_asks_for_a_yes() -> None:
    v = validate(SetValue(target="Urgent", value=True), MESSAGES, DEFAULT, recent_unconfirmed=10)
    assert v.decision == "confirm" and "many actions in the last minute" in v.reasons
    limited = Settings(max_unconfirmed_per_minute=3)
    assert validate(Select(target="Doctor"), MESSAGES, limited, 3).decision == "confirm"
    assert validate(Select(target="Doctor"), MESSAGES, limited, 2).decision == "execute"


def test_denylisted_applications() -> None:
    deny = Settings(denylist_apps=("Terminal", "Messages"))
    assert validate(OpenApp(app="Terminal"), PANEL, deny).decision == "reject"
    assert validate(Select(target="Doctor"), MESSAGES, deny).decision == "reject"
    assert validate(OpenApp(app="Terminal"), PANEL, DEFAULT).decision == "execute"


def test_roles_must_fit_the_intent() -> None:
    v = validate(TypeText(text="hi", target="Send"), MESSAGES, DEFAULT)
    assert v.decision == "reject" and "push button" in v.reasons[0]
    slider = validate(SetValue(target="Brightness", value=95.0), PANEL, DEFAULT)
    assert slider.decision == "reject" and "10 to 90" in slider.reasons[0]
    assert validate(SetValue(target="Brightness", value=40.0), PANEL, DEFAULT).decision == "execute"


def test_secret_field_marks_the_verdict_secret() -> None:
    v = validate(TypeText(text="1234", target="PIN"), MESSAGES, DEFAULT)
    assert v.decision == "execute" and v.secret


def test_on_screen_text_never_changes_what_is_allowed() -> None:
    """The Notice label tells the reader that everything is harmless; the policy ignores it."""
    v = validate(Activate(target="Factory reset"), PANEL, DEFAULT)
    assert v.decision == "reject"
    assert validate(Read(what="element", target="Notice"), PANEL, DEFAULT).decision == "answer"


def test_malformed_and_missing_plans() -> None:
    assert validate(None, MESSAGES, DEFAULT).decision == "reject"
    bad = validate({"intent": "activate"}, MESSAGES, DEFAULT)
    assert bad.decision == "reject" and "malformed" in bad.reasons[0]
    evil = validate({"intent": "rm -rf", "target": "/"}, MESSAGES, DEFAULT)
    assert evil.decision == "reject"


def test_sequences_are_checked_step_by_step() -> None:
    later = Sequence(steps=(OpenApp(app="Radio"), SetValue(target="Volume", value=70.0)))
    v = validate(later, MESSAGES, DEFAULT)
    assert v.decision == "execute" and v.steps[1].deferred
    risky = Sequence(steps=(TypeText(text="hi", target="Message"), Activate(target="Send")))
    assert validate(risky, MESSAGES, DEFAULT).decision == "confirm"
    bad = Sequence(steps=(Select(target="Doctor"), Activate(target="Call")))
    assert validate(bad, MESSAGES, DEFAULT).decision == "reject"


def test_chords_and_controls() -> None:
    assert validate(PressKey(key="z", modifiers=("ctrl",)), MESSAGES, DEFAULT).decision == "execute"
    assert validate(PressKey(key="F4", modifiers=("alt",)), MESSAGES, DEFAULT).decision == "confirm"
    assert validate(Undo(), MESSAGES, DEFAULT).decision == "control"
