"""Journals written by earlier versions still load: the stored events keep their shape, and
what the turn folds from them is typed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from appliance.desktop.model import Action
from appliance.journal.application import Journal
from appliance.recorded import RecordedState
from tests.test_journal import executed_turn


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
