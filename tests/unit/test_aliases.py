"""Names a person gives elements ("call Doctor Patel my GP", then "select my gp"), through
`appliance say` on sim scenes: taught and used per application, never shadowing an element's own
name, forgotten by voice or from the page, read back only from vouched events, replayed and
audited in words, and offered to the closed-set hearing."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from appliance.desktop.model import Desktop
from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop
from appliance.journal.application import Journal
from tests.cli_runner import Kiosk, run


def _clinic(app: str = "Messages", also: tuple[str, ...] = ()) -> dict[str, Any]:
    contacts = [{"role": "list item", "name": "Grandma", "states": ["selected"]},
                {"role": "list item", "name": "Doctor Patel"},
                *({"role": "list item", "name": n} for n in also)]
    return {"applications": [{"name": app, "windows": [{"title": app, "children": [
        {"role": "text", "name": "Message", "value": ""},
        {"role": "push button", "name": "Send", "risk": "moderate"},
        {"role": "list", "name": "Contacts", "children": contacts}]}]}], "keystrokes": []}


def _selected(kiosk: Kiosk, name: str) -> bool:
    return "selected" in kiosk.element(name).get("states", [])


def test_a_name_given_to_an_element_selects_and_presses_it(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, _clinic())
    taught = kiosk.say("call Doctor Patel my GP")
    assert (taught["decision"], taught["planner"]) == ("answered", "aliases")
    assert taught["intent"]["intent"] == "name_element"
    assert taught["spoken"] == "From now on, my GP means Doctor Patel in Messages."
    chosen = kiosk.say("select my gp")
    assert chosen["decision"] == "executed", chosen
    assert chosen["intent"]["target"] == "Doctor Patel"
    assert chosen["transcript"] == "select my gp", "the journal keeps what was said"
    assert _selected(kiosk, "Doctor Patel") and not _selected(kiosk, "Grandma")
    assert kiosk.say("click my GP.")["spoken"] == "Pressed Doctor Patel."
    # Among words to write, the name stays words.
    written = kiosk.say("write I saw my gp today")
    assert kiosk.element("Message")["value"] == "I saw my gp today", written

    [alias] = Journal(kiosk.store).aliases()
    assert (alias.app, alias.element, alias.name, alias.by) == (
        "Messages", "Doctor Patel", "my GP", "text")
    assert alias.turn == taught["turn_id"] and alias.at is not None


def test_a_name_counts_only_in_the_application_it_was_taught_in(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, _clinic())
    kiosk.say("call Doctor Patel my GP")
    kiosk.scene.write_text(json.dumps(_clinic(app="Mail")))  # another app, the same contact
    refused = kiosk.say("select my gp")
    assert refused["decision"] == "rejected" and not _selected(kiosk, "Doctor Patel"), refused
    kiosk.scene.write_text(json.dumps(_clinic()))
    assert kiosk.say("select my gp")["decision"] == "executed"


def test_a_name_never_shadows_an_element_called_that_it_asks(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, _clinic(also=("My GP",)))
    kiosk.say("call Doctor Patel my GP")
    asked = kiosk.say("select my gp")
    assert asked["decision"] == "clarify" and asked["expects_answer"], asked
    assert asked["spoken"] == "Did you mean My GP or Doctor Patel, which you call my GP?"
    answered = kiosk.say("Doctor Patel")
    assert answered["decision"] == "executed" and _selected(kiosk, "Doctor Patel"), answered
    kiosk.say("select my gp")
    assert kiosk.say("the first one")["decision"] == "executed"
    assert _selected(kiosk, "My GP")


def test_call_with_a_number_while_numbers_show_teaches_a_spot_not_a_name(
        tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, _clinic())
    assert kiosk.say("show numbers")["decision"] == "answered"
    spot = kiosk.say("call 2 Save")
    assert spot["planner"] == "marks" and spot["intent"]["teach"] == "Save", spot
    named = kiosk.say("call Send the post button")
    assert named["planner"] == "aliases" and named["intent"]["target"] == "Send", named
    assert [a.name for a in Journal(kiosk.store).aliases()] == ["the post button"]


def test_what_cannot_be_a_name_is_refused_and_call_alone_is_not_teaching(
        tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, _clinic())
    assert kiosk.say("call Send send")["spoken"] == "Send is already called that."
    assert "A number can't be a name" in kiosk.say("call Send 12")["spoken"]
    assert kiosk.say("call grandma now")["planner"] != "aliases"
    assert Journal(kiosk.store).aliases() == []


def test_forgetting_a_name_by_voice_and_from_the_page(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, _clinic())
    kiosk.say("call Doctor Patel my GP")
    forgot = kiosk.say("forget my gp")
    assert forgot["spoken"] == "Forgotten: my GP no longer means Doctor Patel in Messages."
    assert Journal(kiosk.store).aliases() == []
    assert kiosk.say("select my gp")["decision"] == "rejected"
    assert kiosk.say("forget it")["intent"]["intent"] == "cancel", "not a name: the grammar's"

    kiosk.say("call Grandma nan")
    journal = Journal(kiosk.store)
    [nan] = journal.aliases()
    assert journal.forget_alias(nan.id, by="Carol") is True
    assert journal.forget_alias(nan.id, by="Carol") is False
    assert journal.aliases() == []
    told = run("audit", "--store", kiosk.store).out
    assert "Carol took back the name \u201cnan\u201d (it meant Grandma in Messages)" in told


def test_an_edited_name_event_is_damage_and_left_out(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, _clinic())
    kiosk.say("call Doctor Patel my GP")
    with sqlite3.connect(kiosk.store) as db:
        [(rowid, state)] = db.execute(
            "SELECT rowid, state FROM stored_events WHERE topic LIKE '%AliasTaught%'").fetchall()
        db.execute("UPDATE stored_events SET state=? WHERE rowid=?",
                   (bytes(state).replace(b"Doctor Patel", b"Grandma"), rowid))
    journal = Journal(kiosk.store)
    assert journal.aliases() == []
    assert any("is damaged and was left out" in n for n in journal.take_notices())
    said = kiosk.say("select my gp")
    assert not _selected(kiosk, "Doctor Patel") and _selected(kiosk, "Grandma"), said
    replayed = run("replay", "--store", kiosk.store)
    assert replayed.code == 1
    assert ("the name \u201cmy GP\u201d for Grandma in Messages is not vouched for by the "
            "journal's chain, so it is not used") in replayed.out


def test_replay_and_audit_tell_names_in_words(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, _clinic())
    taught = kiosk.say("call Doctor Patel my GP")
    kiosk.say("forget my GP")
    line = (f"Someone typing at the kiosk called Doctor Patel in Messages \u201cmy GP\u201d "
            f"(in turn {taught['turn_id'][:8]})")
    replayed = run("replay", "--store", kiosk.store)
    assert replayed.code == 0, replayed.out
    assert f"  {line}" in replayed.out.splitlines()
    assert "took back the name \u201cmy GP\u201d" in replayed.out
    report = run("replay", "--json", "--store", kiosk.store).json()
    assert report["names"][0] == line and report["divergences"] == []
    audit = run("audit", "--store", kiosk.store).out
    assert line in audit and "Understood" not in audit


def test_names_on_the_screen_are_offered_to_the_closed_set(tmp_path: Path) -> None:
    from appliance.intents.planner import Plan
    from appliance.session_sink import SessionSink
    from appliance.voice.hearing.closed_set import closed_set

    store = str(tmp_path / "journal.sqlite")
    journal = Journal(store)
    journal.teach_alias("Messages", "Doctor Patel", "my GP", by="Carol")
    journal.teach_alias("Mail", "Doctor Patel", "the surgery", by="Carol")
    sim = SimDesktop(Scene.model_validate(_clinic()))

    @contextmanager
    def screen() -> Iterator[Desktop]:
        yield sim

    class Nothing:
        def plan(self, text: str, snapshot: Any, history: Any = ()) -> Plan:
            return Plan(intent=None, planner="none")

    names = SessionSink(journal, screen, Nothing()).screen_names()
    assert "my GP" in names.targets and "the surgery" not in names.targets
    said = closed_set(*names)
    assert "select my gp" in said and "click my gp" in said
    # The name given a list item is one to select, as the item's own is; Send is only pressed.
    assert names.selectable is not None and "my GP" in names.selectable
    assert said.intent_of("pick my gp") == "select" and said.intent_of("pick send") == "activate"
    assert said.means_alike("pick send", "click send")
