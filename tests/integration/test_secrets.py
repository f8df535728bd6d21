"""Secrets: words typed into a password field never leave the turn, at any depth of a plan.

Not into the journal file, `audit --json`, `plan --json`, `say --json`, a language model's
prompt or what is spoken. The sim scene file is the one place that holds the secret, as the
application on a real screen would.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from appliance.desktop.model import REDACTED, Action, Snapshot
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.model import (
    PressKey,
    SetValue,
    TypeText,
    parse_intent,
)
from appliance.intents.model import Sequence as SequenceIntent
from appliance.intents.planner import Plan
from appliance.intents.prompt import render_context
from appliance.intents.router import Router
from appliance.journal.application import Journal
from appliance.policy.validator import HIDDEN_WORDS
from appliance.session import Session
from tests.cli_runner import Kiosk, Result, run
from tests.scenes import messages

REPRO = "type 86420975 into PIN and then press enter"
FORGOTTEN = "I didn't keep what was hidden. Please say it again."


def store_bytes(store: str) -> bytes:
    """The journal as it lies on disk: the SQLite file and its -wal / -shm companions."""
    path = Path(store)
    return b"".join(p.read_bytes() for p in [path, *path.parent.glob(path.name + "-*")])


def ok(result: Result) -> Result:
    assert result.code == 0, result.err
    return result


def plan_json(kiosk: Kiosk, text: str) -> Result:
    return ok(run("plan", text, "--desktop", f"sim:{kiosk.scene}", "--store", kiosk.store,
                  "--json"))


def say_json(kiosk: Kiosk, text: str) -> Result:
    return ok(run("say", text, "--desktop", f"sim:{kiosk.scene}", "--store", kiosk.store,
                  "--json"))


def audit_json(kiosk: Kiosk) -> Result:
    return ok(run("audit", "--json", "--store", kiosk.store))


class PromptRecorder:
    """A language model that proposes nothing and keeps the exact context it was shown."""

    def __init__(self) -> None:
        self.contexts: list[str] = []

    def plan(self, text: str, snapshot: Snapshot, history: Sequence[str] = ()) -> Plan:
        self.contexts.append(render_context(text, snapshot, history, examples=()))
        return Plan(intent=None, planner="recorder")


def next_model_context(kiosk: Kiosk) -> str:
    """What a language model is shown on the turn after: a real Session with the grammar in
    front, on the same journal and screen, given words the grammar cannot plan."""
    recorder = PromptRecorder()
    session = Session(
        Journal(kiosk.store), SimDesktop.from_file(kiosk.scene), Router(GrammarPlanner(), recorder)
    )
    session.say("zorp the wibble")
    assert len(recorder.contexts) == 1, "the grammar knows nothing of it, so the model is asked"
    return recorder.contexts[0]


def secret_fields(scene: dict[str, Any]) -> list[dict[str, Any]]:
    """Every password field of a printed scene."""
    found: list[dict[str, Any]] = []

    def walk(elements: list[dict[str, Any]]) -> None:
        for el in elements:
            if el.get("role") == "password text":
                found.append(el)
            walk(el.get("children", []))

    for group in ("applications", "launchable"):
        for application in scene[group]:
            for window in application["windows"]:
                walk(window.get("children", []))
    return found


def spoken_in(rows: list[dict[str, Any]]) -> list[str]:
    return [str(r["data"]["text"]) for r in rows if r["event"] == "Spoke"]


def bank_scene() -> dict[str, Any]:
    """The messages window, plus a Bank application (not open yet) with its own secret field."""
    scene = messages()
    scene["launchable"].append(
        {
            "name": "Bank",
            "windows": [
                {
                    "title": "Bank",
                    "children": [
                        {"role": "password text", "name": "Code", "value": ""},
                        {"role": "push button", "name": "Go", "risk": "moderate"},
                    ],
                }
            ],
        }
    )
    return scene


def pin_changed(scene: dict[str, Any], **changes: Any) -> dict[str, Any]:
    children = scene["applications"][0]["windows"][0]["children"]
    pin = next(c for c in children if c["name"] == "PIN")
    pin.update(changes)
    return scene


def assert_nowhere(secret: str, kiosk: Kiosk, *outputs: Result) -> None:
    """The secret is in none of the outputs, the journal file or `audit --json`."""
    for output in outputs:
        assert secret not in output.out and secret not in output.err, output.out
    assert secret.encode() not in store_bytes(kiosk.store)
    assert secret not in audit_json(kiosk).out


# -- the reproductions from the issue ---------------------------------------------------------


def test_plan_json_hides_a_pin_typed_inside_a_sequence(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    out = plan_json(kiosk, REPRO)
    assert "86420975" not in out.out
    data = out.json()
    assert data["transcript"] == HIDDEN_WORDS
    typed, enter = data["intent"]["steps"]
    assert typed == {"confidence": 1.0, "words": REDACTED, "intent": "type_text",
                     "text": REDACTED, "target": "PIN"}
    assert enter["key"] == "Return" and enter["words"] == "press enter", "the rest stays readable"


def test_say_keeps_a_pin_typed_inside_a_sequence_out_of_journal_and_output(
    tmp_path: Path,
) -> None:
    kiosk = Kiosk(tmp_path, messages())
    said = say_json(kiosk, REPRO)
    data = said.json()
    assert data["decision"] == "executed" and data["spoken"] == "Typed into PIN. Pressed enter."
    assert kiosk.element("PIN")["value"] == "86420975", "typed, on the screen only"
    assert_nowhere("86420975", kiosk, said)
    rows = audit_json(kiosk).json()
    planned = next(r for r in rows if r["event"] == "Planned")["data"]["intent"]
    assert planned["words"] == REDACTED
    assert [s["words"] for s in planned["steps"]] == [REDACTED, "press enter"]
    assert planned["steps"][0]["text"] == REDACTED
    assert next(r for r in rows if r["event"] == "Heard")["data"]["transcript"] == HIDDEN_WORDS


# -- yes and no: a hidden step is never rebuilt ----------------------------------------------


def test_a_sequence_asking_first_cannot_type_what_it_did_not_keep(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    asked = say_json(kiosk, "type 86420975 into pin and then click send")
    assert asked.json()["decision"] == "needs_confirmation"
    yes = say_json(kiosk, "yes")
    assert yes.json()["decision"] == "rejected" and yes.json()["spoken"] == FORGOTTEN
    assert kiosk.element("PIN")["value"] == "" and kiosk.element("Send").get("activations", 0) == 0
    assert_nowhere("86420975", kiosk, asked, yes)


def test_a_hidden_step_already_done_does_not_stop_the_rest_after_a_yes(tmp_path: Path) -> None:
    """Go turns out to need a yes only once Bank is open, after the PIN was typed: the yes
    carries on with Go, which the journal kept in full, and types nothing again."""
    kiosk = Kiosk(tmp_path, bank_scene())
    asked = say_json(kiosk, "type 97531864 into pin and then open bank and then click go")
    assert asked.json()["decision"] == "needs_confirmation"
    assert kiosk.element("PIN")["value"] == "97531864"
    assert kiosk.element("Go").get("activations", 0) == 0
    yes = say_json(kiosk, "yes")
    assert yes.json()["decision"] == "executed" and yes.json()["spoken"] == "Pressed Go."
    assert kiosk.element("Go")["activations"] == 1 and kiosk.element("PIN")["value"] == "97531864"
    assert_nowhere("97531864", kiosk, asked, yes)


# -- failing closed: words whose field is not yet known, or not taken -------------------------


def test_words_for_a_field_on_a_screen_not_yet_open_are_hidden(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, bank_scene())
    planned = plan_json(kiosk, "open bank and then type 97531 into code")
    said = say_json(kiosk, "open bank and then type 97531 into code")
    assert said.json()["decision"] == "executed"
    assert kiosk.element("Code")["value"] == "97531"
    assert_nowhere("97531", kiosk, planned, said)


def test_a_pin_that_cannot_be_typed_is_not_kept_either(tmp_path: Path) -> None:
    greyed = Kiosk(tmp_path / "greyed", pin_changed(messages(), states=["insensitive"])) \
        if (tmp_path / "greyed").mkdir() is None else None
    assert greyed is not None
    refused = say_json(greyed, "press enter and then type 86420975 into pin")
    assert refused.json()["decision"] == "rejected" and "greyed out" in refused.json()["spoken"]
    assert_nowhere("86420975", greyed, refused, plan_json(greyed, "type 86420975 into pin"))


def test_which_of_two_pins_asks_and_then_cannot_type_what_it_did_not_keep(
    tmp_path: Path,
) -> None:
    scene = pin_changed(messages(), name="Card PIN")
    children = scene["applications"][0]["windows"][0]["children"]
    children.append({"role": "password text", "name": "Phone PIN", "value": ""})
    kiosk = Kiosk(tmp_path, scene)
    asked = say_json(kiosk, "type 86420975 into pin")
    assert asked.json()["decision"] == "clarify"
    assert asked.json()["spoken"] == "Did you mean Card PIN or Phone PIN?"
    answer = say_json(kiosk, "card pin")
    assert answer.json()["decision"] == "rejected" and answer.json()["spoken"] == FORGOTTEN
    assert kiosk.element("Card PIN")["value"] == ""
    assert_nowhere("86420975", kiosk, asked, answer)


def test_words_nothing_was_planned_from_are_hidden_when_they_name_a_secret_field(
    tmp_path: Path,
) -> None:
    kiosk = Kiosk(tmp_path, messages())
    ok(run("settings", "set", "llm", "off", "--by", "test", "--store", kiosk.store))
    said = say_json(kiosk, "put 86420975 into my pin code")
    assert said.json()["decision"] == "rejected" and said.json()["transcript"] == HIDDEN_WORDS
    assert_nowhere("86420975", kiosk, said, plan_json(kiosk, "put 86420975 into my pin code"))
    other = say_json(kiosk, "put 86420975 into my shoe")
    assert other.json()["transcript"] == "put 86420975 into my shoe", "kept for the caregiver"


def test_set_value_into_a_secret_field_is_hidden_and_not_spoken(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    said = say_json(kiosk, "set pin to 86420975")
    assert said.json()["spoken"] == "Set PIN." and kiosk.element("PIN")["value"] == "86420975"
    assert_nowhere("86420975", kiosk, said, plan_json(kiosk, "set pin to 86420975"))


def test_words_naming_a_secret_field_are_never_written_into_another_field(
    tmp_path: Path,
) -> None:
    """The grammar reads this as typing "doctor and then type ... go to" into Message (a known
    misparse): writing it there would show the secret on screen and to every later prompt."""
    kiosk = Kiosk(tmp_path, messages())
    words = "select doctor and then type 86420975 into PIN and then go to message"
    said = say_json(kiosk, words)
    assert said.json()["decision"] == "rejected", said.out
    assert "one step at a time" in said.json()["spoken"]
    assert kiosk.element("Message")["value"] == "" and not kiosk.element("PIN").get("value")
    assert_nowhere("86420975", kiosk, said, plan_json(kiosk, words))
    # Words that name no secret field still go where they were meant to.
    typed = say_json(kiosk, "type see you at ten into message")
    assert typed.json()["decision"] == "executed"


# -- the one definition -----------------------------------------------------------------------


def test_redacted_walks_every_step_and_every_field_with_the_persons_words() -> None:
    plan = SequenceIntent(
        words="press enter and type 86420975 into PIN and set Code to 77",
        steps=(
            PressKey(key="Return", words="press enter"),
            TypeText(text="86420975", target="PIN", words="type 86420975 into PIN"),
            SetValue(target="Code", value=77.0, words="set Code to 77"),
        ),
    )
    shown = plan.redacted({1, 2}, names={1: "PIN"})
    assert shown.words == REDACTED
    assert shown.steps[0] == plan.steps[0]
    assert shown.steps[1] == TypeText(text=REDACTED, target="PIN", words=REDACTED)
    assert shown.steps[2] == SetValue(target=REDACTED, value=REDACTED, words=REDACTED), (
        "a target not tied to the screen may hold more than a name"
    )
    assert shown.lost_steps() == {1, 2} and plan.lost_steps() == frozenset()
    assert plan.redacted(()) is plan
    assert parse_intent(json.dumps(shown.model_dump(mode="json"))) == shown, "journal data"
    tick = SetValue(target="Urgent", value=True, words="tick urgent").redacted({0}, {0: "Urgent"})
    assert tick.value is True and tick.words == REDACTED and tick.lost_steps() == frozenset()
    action = Action(kind="set_value", target="0.0.6", value="86420975").redacted()
    assert action.value == REDACTED and action.text is None


# -- the property -------------------------------------------------------------------------------

SAID_FORMS = ("type {} into PIN", "put {} in the PIN field", "type {} into the pin field",
              "enter {} into pin")
HARMLESS = ("untick urgent", "select doctor", "press enter", "scroll down", "go to message",
            "type {marker} into message")
# The grammar sometimes reads two of these as one step ("select doctor and then type X into
# PIN" as setting PIN to "doctor and then type X"); the property holds all the same.
MARKER = "plainwords"
"""Typed into the ordinary Message field: proves each place looked at does show typed words."""

# A secret that cannot occur by chance in a journal (hex digests, ids, times, zero padding) or
# in English: 10-14 digits of which at least six differ (hypothesis favours "0000000000", which
# a store does hold), or digits with consonants from outside the hex alphabet, two of each.
digits = st.text("0123456789", min_size=10, max_size=14).filter(lambda s: len(set(s)) >= 6)
mixed = st.text("0123456789ghjkmnpqrtvwxz", min_size=6, max_size=12).filter(
    lambda s: sum(c.isdigit() for c in s) >= 2 and sum(c.isalpha() for c in s) >= 2
)


@st.composite
def secret_plans(draw: st.DrawFn) -> tuple[str, str, int, bool]:
    """(utterance, secret, index of the secret step, ends with a step that needs a yes)."""
    secret = draw(st.one_of(digits, mixed))
    asks = draw(st.booleans())
    others = draw(st.lists(st.sampled_from(HARMLESS), max_size=3, unique=True))
    at = draw(st.integers(0, len(others)))
    steps = [s.format(marker=MARKER) for s in others]
    steps.insert(at, draw(st.sampled_from(SAID_FORMS)).format(secret))
    if asks:
        steps.append("click send")
    return draw(st.sampled_from((" and then ", " and "))).join(steps), secret, at, asks


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret_plans())
def test_a_secret_typed_at_any_depth_never_leaves_the_turn(
    case: tuple[str, str, int, bool],
) -> None:
    utterance, secret, at, asks = case
    with tempfile.TemporaryDirectory() as tmp:
        kiosk = Kiosk(Path(tmp), messages())
        ok(run("settings", "set", "llm", "off", "--by", "test", "--store", kiosk.store))
        planned = plan_json(kiosk, utterance)
        intent = planned.json()["intent"]
        steps = intent["steps"] if intent["intent"] == "sequence" else [intent]
        said = [say_json(kiosk, utterance)]
        as_meant = len(steps) == len(utterance.split(" and "))
        if not as_meant:  # the grammar read several steps as one; still nothing may leak
            event("the grammar merged steps")
        elif asks:
            assert steps[at]["intent"] == "type_text" and steps[at]["target"] == "PIN"
            said.append(say_json(kiosk, "yes"))
            assert said[-1].json()["spoken"] == FORGOTTEN, "the hidden step was still to run"
        else:
            assert steps[at]["intent"] == "type_text" and steps[at]["target"] == "PIN"
            assert said[0].json()["decision"] == "executed", said[0].out
            assert kiosk.element("PIN")["value"] == secret, "the secret was really typed"
        context = next_model_context(kiosk)
        rows = audit_json(kiosk).json()

        for printed in said:  # the screen it prints may show what was typed, but no secret
            data = printed.json()
            screen = data.pop("desktop")
            assert secret not in json.dumps(data)
            assert secret not in json.dumps(secret_fields(screen))
        assert_nowhere(secret, kiosk, planned)
        assert secret not in context
        assert HIDDEN_WORDS in context, "the secret turn is in the model's history, hidden"
        for spoken in [*spoken_in(rows), *(s.json()["spoken"] for s in said)]:
            assert secret not in spoken
        if as_meant and not asks and MARKER in utterance:  # these places show typed words
            assert MARKER.encode() in store_bytes(kiosk.store)
            assert MARKER in audit_json(kiosk).out and MARKER in context
