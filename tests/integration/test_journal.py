"""The journal on real SQLite and a real PostgreSQL server (scripts/postgres.sh, loopback)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from appliance.journal.aggregates import SETTINGS_ID
from appliance.journal.application import Journal
from appliance.journal.store import StoreError
from appliance.turn import Outcome, Turn


def executed_turn(journal: Journal, text: str = "hello") -> Turn:
    turn = Turn(trigger="text")
    turn.heard(f"type {text} into message", "text", None, {})
    turn.planned({"intent": "type_text", "text": text, "target": "Message"}, "grammar", "", 0.2)
    turn.validated("execute", "harmless", [])
    turn.start_action(0, {"kind": "type_text", "target": "0.0.0", "text": text}, "Message", {})
    journal.record(turn)
    state = {
        "role": "text",
        "name": "Message",
        "value": "",
        "states": [],
        "activations": 0,
        "running": None,
    }
    turn.action_succeeded({"0.0.0": state}, {"0.0.0": {**state, "value": text}}, True, "sim")
    turn.spoke(text=f"Typed {text} into Message.", timings={})
    turn.end(Outcome.executed)
    journal.record(turn)
    return turn


def test_turns_round_trip_and_projections(store: str) -> None:
    journal = Journal(store)
    first = executed_turn(journal, "one")
    second = executed_turn(journal, "two")
    pending = Turn(trigger="text")
    pending.heard("click send", "text", None, {})
    pending.planned({"intent": "activate", "target": "Send"}, "grammar", "", 0.1)
    pending.validated("confirm", "moderate", ["moderate action"])
    pending.ask_confirmation("Send needs a yes.", expires_at=1e12)
    journal.record(pending)

    again = Journal(store)  # a new process would see the same
    loaded = again.turn(first.id)
    assert loaded.transcripts == ["type one into message"]
    assert loaded.steps[0].after is not None and loaded.steps[0].after["0.0.0"].value == "one"
    assert [t.id for t in again.undo_stack()] == [second.id, first.id]
    found = again.pending_turn()
    assert found is not None and found.id == pending.id
    assert again.in_flight_turns() == []
    assert again.find_turn(first.short_id) is not None
    assert again.verify() == []


def test_settings_changes_name_who_what_from_and_to(store: str) -> None:
    journal = Journal(store)
    assert journal.settings().allow_destructive is False
    journal.change_setting("allow_destructive", True, by="carol")
    journal.change_setting("denylist_apps", ("Terminal",), by="sam")
    settings = Journal(store).settings()
    assert settings.allow_destructive is True and settings.denylist_apps == ("Terminal",)
    changes = [e for _, e in journal.domain_events() if type(e).__name__ == "SettingChanged"]
    assert [(e.key, e.old, e.new, e.by) for e in changes] == [  # type: ignore[attr-defined]
        ("allow_destructive", False, True, "carol"),
        ("denylist_apps", [], ["Terminal"], "sam"),
    ]


def test_settings_are_snapshotted_as_they_grow(store: str) -> None:
    journal = Journal(store)
    for i in range(45):
        journal.change_setting("confirm_timeout_s", float(i + 1), by="test")
    assert journal.snapshots is not None
    snapshots = list(journal.snapshots.get(SETTINGS_ID))
    assert snapshots, "the settings aggregate should have been snapshotted"
    assert Journal(store).settings().confirm_timeout_s == 45.0


def test_an_interrupted_action_is_found(store: str) -> None:
    journal = Journal(store)
    turn = Turn(trigger="text")
    turn.heard("tick urgent", "text", None, {})
    turn.planned({"intent": "set_value", "target": "Urgent", "value": True}, "grammar", "", 0.1)
    turn.validated("execute", "harmless", [])
    turn.start_action(0, {"kind": "set_value", "target": "0.0.1"}, "Urgent", {})
    journal.record(turn)
    assert [t.id for t in Journal(store).in_flight_turns()] == [turn.id]


def test_unknown_or_broken_stores_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="unknown store"):
        Journal("mysql://localhost/x")
    with pytest.raises(StoreError, match="directory"):
        Journal(str(tmp_path))
    not_db = tmp_path / "notes.txt"
    not_db.write_text("hello, this is not a database at all")
    with pytest.raises(StoreError, match="not a SQLite journal"):
        Journal(str(not_db))
    with pytest.raises(StoreError, match="cannot open"):
        Journal("postgresql://nobody@127.0.0.1:1/none")


# -- tampering -------------------------------------------------------------------------


def _sql(store: str) -> Callable[[str, tuple[Any, ...]], list[Any]]:
    """Run SQL directly against the store, behind the journal's back."""
    if "://" in store:

        def run_pg(sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
            with psycopg.connect(store, autocommit=True) as conn:
                cur = conn.execute(
                    sql.replace("?", "%s")
                    .replace("rowid", "notification_id")
                    .replace("stored_events", "appliance_events"),
                    params,
                )
                return cur.fetchall() if cur.description else []

        return run_pg

    def run_sqlite(sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with sqlite3.connect(store) as conn:
            return conn.execute(sql, params).fetchall()

    return run_sqlite


def _filled(store: str) -> Journal:
    journal = Journal(store)
    for i in range(3):
        executed_turn(journal, f"text {i}")
    assert journal.verify() == []
    return journal


def test_verify_names_a_modified_event(store: str) -> None:
    journal = _filled(store)
    sql = _sql(store)
    sql("UPDATE stored_events SET state = ? WHERE rowid = ?", (b'{"transcript":"forged"}', 5))
    breaks = journal.verify()
    assert len(breaks) == 1
    assert breaks[0].notification_id == 5 and breaks[0].problem == "modified"
    assert "v" in breaks[0].event  # names the event: "<Name> v<version> of <turn>"


def test_verify_names_a_deleted_event(store: str) -> None:
    journal = _filled(store)
    _sql(store)("DELETE FROM stored_events WHERE rowid = ?", (7,))
    breaks = journal.verify()
    assert [(b.notification_id, b.problem) for b in breaks] == [(7, "deleted")]


def test_verify_names_reordered_events(store: str) -> None:
    journal = _filled(store)
    sql = _sql(store)
    # Swap the positions of events 3 and 4 in the global order.
    sql("UPDATE stored_events SET rowid = ? WHERE rowid = ?", (-1, 3))
    sql("UPDATE stored_events SET rowid = ? WHERE rowid = ?", (3, 4))
    sql("UPDATE stored_events SET rowid = ? WHERE rowid = ?", (4, -1))
    breaks = journal.verify()
    assert [b.notification_id for b in breaks] == [3, 4]
    assert [b.problem for b in breaks] == [
        "reordered (it was stored as #4)",
        "reordered (it was stored as #3)",
    ]


def test_the_kept_tail_follows_own_saves_and_other_writers(store: str) -> None:
    """A long-running appliance folds only new events; its own saves are not applied twice."""
    mine, other = Journal(store), Journal(store)
    first = executed_turn(mine, "one")
    assert [t.id for t in mine.recent_turns()] == [first.id]
    second = executed_turn(other, "two")  # e.g. the caregiver's web page in another process
    assert [t.id for t in mine.recent_turns()] == [second.id, first.id]

    question = Turn(trigger="text")
    question.heard("click send", "text", None, {})
    question.planned({"intent": "activate", "target": "Send"}, "grammar", "", 0.1)
    question.validated("confirm", "moderate", [])
    question.ask_confirmation("Send needs a yes.", expires_at=1e12)
    mine.record(question)
    cached = mine.pending_turn(mine.recent_turns())
    assert cached is not None and cached.id == question.id
    cached.heard("yes", "text", None, {})
    cached.confirm(by="voice")
    cached.start_action(0, {"kind": "activate", "target": "0.0.2"}, "Send", {})
    mine.record(cached)
    refreshed = mine.recent_turns()
    assert refreshed[0] is cached and refreshed[0].version == cached.version
    assert [t.id for t in mine.in_flight_turns(refreshed)] == [question.id]
    assert Journal(store).turn(question.id).version == cached.version
