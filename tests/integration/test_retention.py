"""Transcripts kept only as long as the caregiver chose, on real SQLite and PostgreSQL: the
words go from older events, the removal is journaled with each rewritten event's digest, and
`audit verify` still passes; a change the removal did not record still breaks it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from appliance.audit.timeline import timeline
from appliance.desktop.model import REDACTED as REDACTED_VALUE
from appliance.journal.application import Journal
from appliance.journal.retention import REMOVED
from tests.cli_runner import Kiosk, run
from tests.integration.test_journal_integrity import Raw
from tests.scenes import messages


def _journal_text(journal: Journal) -> str:
    return str([r["data"] for r in timeline(journal)])


def test_old_words_go_and_the_chain_still_verifies(store: str, tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages(), store)
    for said in ("type hello grandma into message", "click send", "yes"):
        kiosk.say(said)
    journal = Journal(store)
    assert "hello grandma" in _journal_text(journal)
    removed = journal.remove_transcripts(datetime.now(UTC) + timedelta(seconds=1), by="Carol")
    assert removed >= 5  # heard x3, planned x2, the action's text, what was said back...
    after = Journal(store)
    assert "hello grandma" not in _journal_text(after)
    assert "click send" not in _journal_text(after)
    heard = [r["data"]["transcript"] for r in timeline(after) if r["event"] == "Heard"]
    assert heard and set(heard) == {REMOVED}
    removal = [r for r in timeline(after) if r["event"] == "TranscriptsRemoved"]
    assert len(removal) == 1 and removal[0]["data"]["by"] == "Carol"
    assert after.verify() == []
    assert run("audit", "verify", "--store", store).code == 0
    # Nothing left to remove: a second run records nothing.
    assert after.remove_transcripts(datetime.now(UTC), by="Carol") == 0
    # The screen's states stay, with what was typed into a field hidden as a secret's is.
    done = [r["data"] for r in timeline(after) if r["event"] == "ActionSucceeded"]
    assert any(s["value"] == REDACTED_VALUE for d in done for s in d["after"].values())


def test_a_change_the_removal_did_not_record_still_breaks_the_chain(
    store: str, tmp_path: Path,
) -> None:
    kiosk = Kiosk(tmp_path, messages(), store)
    kiosk.say("type hello into message")
    Journal(store).remove_transcripts(datetime.now(UTC) + timedelta(seconds=1), by="Carol")
    raw = Raw(store)
    heard = next(r for r in timeline(Journal(store)) if r["event"] == "Heard")["seq"]
    state = raw("SELECT state FROM {events} WHERE {id}=?", (heard,))[0][0]
    forged = bytes(state).replace(REMOVED.encode(), b"goodbye")
    raw("UPDATE {events} SET state=? WHERE {id}=?", (forged, heard))
    breaks = Journal(store).verify()
    assert breaks and breaks[0].notification_id == heard


def test_the_setting_decides_and_new_words_stay(store: str, tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages(), store)
    kiosk.say("type hello into message")
    journal = Journal(store)
    assert journal.apply_retention(by="Carol") == 0  # 0 days: kept for good
    journal.change_setting("transcript_days", 1, by="Carol")
    assert journal.apply_retention(by="Carol") == 0  # said today: kept
    later = datetime.now(UTC) + timedelta(days=2)
    assert Journal(store).apply_retention(by="Carol", now=later) > 0
    assert "hello" not in _journal_text(Journal(store))
    assert Journal(store).verify() == []
    result = run("audit", "retain", "--store", store, "--by", "Carol")
    assert result.code == 0 and "removed the words from 0 events" in result.out
