"""History and the unconfirmed-actions count are folds of the journal's recent turns."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from appliance.journal.application import Journal
from appliance.journal.projections import history, unconfirmed_actions
from appliance.turn import Outcome, Turn
from tests.integration.test_journal import executed_turn


def test_history_is_the_last_turns_oldest_first(tmp_path: Path) -> None:
    journal = Journal(str(tmp_path / "journal.sqlite"))
    for text in ("one", "two", "three", "four"):
        executed_turn(journal, text)
    silent = Turn(trigger="text")
    silent.heard("hello", "text", None, {})
    silent.end(Outcome.rejected)
    journal.record(silent)
    assert history(journal.recent_turns()) == [
        '"type three into message" -> Typed three into Message.',
        '"type four into message" -> Typed four into Message.',
        '"hello" -> rejected',
    ]
    assert history([]) == []


def test_unconfirmed_actions_count_done_steps_of_recent_turns_without_a_yes(
    tmp_path: Path,
) -> None:
    journal = Journal(str(tmp_path / "journal.sqlite"))
    first = executed_turn(journal, "one")
    executed_turn(journal, "two")
    recent = journal.recent_turns()
    assert unconfirmed_actions(recent, first.modified_on) == 2
    assert unconfirmed_actions(recent, first.modified_on + timedelta(microseconds=1)) == 1
    assert unconfirmed_actions(recent, recent[0].modified_on + timedelta(seconds=1)) == 0

    asked = Turn(trigger="text")
    asked.heard("click send", "text", None, {})
    asked.planned({"intent": "activate", "target": "Send"}, "grammar", "", 0.1)
    asked.validated("confirm", "moderate", [])
    asked.ask_confirmation("Send needs a yes.", expires_at=1e12)
    asked.confirm(by="voice")
    asked.start_action(0, {"kind": "activate", "target": "0.0.1"}, "Send", {})
    asked.action_succeeded({}, {}, True, "sim")
    asked.end(Outcome.executed)
    journal.record(asked)
    assert unconfirmed_actions(journal.recent_turns(), first.modified_on) == 2
