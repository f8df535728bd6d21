"""Journals written by earlier versions still load: the stored events keep their shape, and
what the turn folds from them is typed."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from uuid import UUID

import pytest

from appliance.audit.timeline import timeline
from appliance.desktop.model import Action
from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop
from appliance.journal.application import Journal
from appliance.recorded import RecordedState
from appliance.session import Session
from appliance.settings import Settings
from appliance.turn import Outcome, Turn
from appliance.wiring import build_planner, new_session
from tests.integration.test_journal import executed_turn
from tests.scenes import messages


def _stored(store: str, event: str) -> dict[str, object]:
    with sqlite3.connect(store) as conn:
        (state,) = conn.execute(
            "SELECT state FROM stored_events WHERE topic LIKE ?", (f"%.{event}",)
        ).fetchone()
    data: dict[str, object] = json.loads(state)
    return data


def test_action_events_keep_their_stored_shape_and_load_as_typed_steps(tmp_path: Path) -> None:
    store = str(tmp_path / "journal.sqlite")
    turn = executed_turn(Journal(store), "one")
    started = _stored(store, "ActionStarted")
    assert {"step", "action", "target", "before", "owner"} <= started.keys()
    assert started["action"] == {"kind": "type_text", "target": "0.0.0", "text": "one"}
    succeeded = _stored(store, "ActionSucceeded")
    assert {"before", "after", "verified", "via"} <= succeeded.keys()
    assert succeeded["after"] == {
        "0.0.0": {
            "role": "text",
            "name": "Message",
            "value": "one",
            "states": [],
            "activations": 0,
            "running": None,
        }
    }

    (step,) = Journal(store).turn(turn.id).steps
    assert (step.index, step.target, step.via, step.error) == (0, "Message", "sim", "")
    assert step.verified
    assert step.action == Action(kind="type_text", target="0.0.0", text="one")
    assert step.after == {"0.0.0": RecordedState(role="text", name="Message", value="one")}
    assert step.result_before == {"0.0.0": RecordedState(role="text", name="Message", value="")}
    assert step.done and step.after["0.0.0"].as_state().value == "one"


def _session(store: str, scene: Scene) -> Session:
    return new_session(Journal(store), SimDesktop(scene), build_planner(Settings(llm="off")))


def test_a_yes_is_its_own_event_and_the_timeline_shows_it(tmp_path: Path) -> None:
    store = str(tmp_path / "journal.sqlite")
    session = _session(store, Scene.model_validate(messages()))
    asked = session.say("click send")
    done = session.say("yes", engine="vosk", confidence=0.9)
    assert (asked.decision, done.decision) == ("needs_confirmation", "executed")
    rows = timeline(Journal(store), turn=asked.turn_id)
    names = [r["event"] for r in rows]
    assert names.count("Heard") == 1 and names.count("Planned") == 1
    assert names[names.index("Answered") + 1] == "Confirmed"
    answered = next(r for r in rows if r["event"] == "Answered")
    assert answered["detail"].startswith('"yes" (vosk): confirm')
    assert answered["data"]["confidence"] == 0.9
    turn = Journal(store).turn(UUID(asked.turn_id))
    assert turn.transcripts == ["click send", "yes"] and turn.confirmed_by == "text"
    assert Journal(store).verify() == []


def test_a_journal_with_an_answer_as_heard_and_planned_still_reads(tmp_path: Path) -> None:
    """Before `Answered`, a yes was journaled as a second Heard and Planned on the turn."""
    store = str(tmp_path / "journal.sqlite")
    journal = Journal(store)
    turn = Turn(trigger="voice")
    turn.heard("click send", "vosk", 0.8, {})
    turn.planned({"intent": "activate", "target": "Send"}, "grammar", "", 0.1)
    turn.validated("confirm", "moderate", ["moderate action"])
    turn.ask_confirmation("Send needs a yes.", expires_at=time.time() + 60)
    journal.record(turn)
    turn._heard("yes", "vosk", 0.9, {})  # the events an older version recorded
    turn._planned({"intent": "confirm"}, "grammar", "", 0.1, [])
    turn.confirm(by="voice")
    turn.validated("execute", "moderate", [])
    turn.start_action(0, {"kind": "activate", "target": "0.0.1"}, "Send", {})
    turn.action_succeeded({}, {}, True, "sim")
    turn.spoke(text="Pressed Send.", timings={})
    turn.end(Outcome.executed)
    journal.record(turn)

    loaded = Journal(store).turn(turn.id)
    assert loaded.transcripts == ["click send", "yes"] and loaded.confirmed_by == "voice"
    assert (loaded.intent, loaded.outcome) == (turn.intent, "executed")
    rows = timeline(Journal(store), turn=turn.id.hex)
    details = [(r["event"], r["detail"]) for r in rows if r["event"] in ("Heard", "Planned")]
    assert details[2:] == [("Heard", '"yes" (vosk)'), ("Planned", "confirm {} by grammar")]
    assert Journal(store).verify() == []
    later = _session(store, Scene.model_validate(messages())).say("what is selected")
    assert later.decision == "answered"


def test_a_new_journal_has_an_epoch_kept_across_opens(tmp_path: Path) -> None:
    store = str(tmp_path / "journal.sqlite")
    epoch = Journal(store).epoch()
    assert epoch is not None and len(epoch) == 32
    executed_turn(Journal(store), "one")
    assert Journal(store).epoch() == epoch == Journal(store, create=False).epoch()
    other = Journal(str(tmp_path / "reflashed.sqlite")).epoch()
    assert other is not None and other != epoch, "a new journal is a new epoch"
    assert Journal(store).verify() == []


def test_a_journal_from_before_epochs_gets_one_on_first_open_as_an_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(tmp_path / "journal.sqlite")
    with monkeypatch.context() as older:  # written by a version that knew no epochs
        older.setattr(Journal, "_ensure_epoch", lambda self: None)
        turn = executed_turn(Journal(store), "one")
    assert Journal(store, create=False).epoch() is None, "a reader creates nothing"
    opened = Journal(store)
    epoch = opened.epoch()
    assert epoch is not None
    rows = [r for r in timeline(Journal(store)) if r["event"] == "EpochStarted"]
    assert len(rows) == 1 and rows[0]["detail"] == f"journal epoch {epoch[:8]}"
    assert rows[0]["seq"] > 1, "recorded after the older events, as a new event"
    assert Journal(store).turn(turn.id).outcome == "executed"
    assert Journal(store).verify() == []
