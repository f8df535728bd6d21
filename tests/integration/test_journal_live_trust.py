"""The live path acts only on journal state the keyed chain vouches for (issue 42).

Each test tampers with a real journal (SQLite, and the loopback PostgreSQL where the attack
applies there) as someone with the store but not the device key would, then runs real
`appliance` processes: `say` must not act on the tampered state, must say so, and
`audit verify` must name it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from appliance.journal.aggregates import SETTINGS_ID
from tests.cli_runner import Kiosk, find_element, run
from tests.integration.test_journal_integrity import Raw, appliance, assert_verdict, verify
from tests.scenes import messages
from tests.tampering import ATTACKS, SQLITE_ONLY, attacked

ZEN = "Beautiful is better than ugly"


def say(kiosk: Kiosk, words: str) -> dict[str, Any]:
    """A real `appliance say` process; it must serve the turn (exit 0, no traceback)."""
    turn = appliance(
        "say", words, "--desktop", f"sim:{kiosk.scene}", "--store", kiosk.store, "--json"
    )
    assert turn.returncode == 0, turn.stderr
    assert "Traceback" not in turn.stderr and ZEN not in turn.stdout + turn.stderr
    report: dict[str, Any] = json.loads(turn.stdout)
    return report


def changed_outside(report: dict[str, Any]) -> bool:
    return any("changed outside the appliance" in n for n in report["notices"])


def setting(kiosk: Kiosk, key: str, value: str) -> None:
    result = run("settings", "set", key, value, "--by", "carol", "--store", kiosk.store)
    assert result.code == 0, result.err


def shown_settings(kiosk: Kiosk) -> dict[str, Any]:
    shown = appliance("settings", "show", "--store", kiosk.store, "--json")
    assert shown.returncode == 0, shown.stderr
    data: dict[str, Any] = json.loads(shown.stdout)
    return data


# -- 1. a caregiver's revocation, deleted -----------------------------------------------------


def test_a_deleted_revocation_is_not_obeyed(tmp_path: Path, store: str) -> None:
    kiosk = Kiosk(tmp_path, messages(), store)
    setting(kiosk, "allow_destructive", "true")
    setting(kiosk, "allow_destructive", "false")
    assert say(kiosk, "what is on the screen")["decision"] == "answered"
    raw = Raw(kiosk.store)
    (revocation,) = raw(
        "SELECT max({id}) FROM {events} WHERE originator_id = ?",
        (SETTINGS_ID if raw.pg else SETTINGS_ID.hex,),
    )[0]
    raw("DELETE FROM {events} WHERE {id} = ?", (revocation,))

    report = say(kiosk, "click delete conversation")
    assert report["decision"] == "rejected", report
    assert changed_outside(report), report
    assert say(kiosk, "yes")["decision"] != "executed"
    assert find_element(kiosk.raw_scene(), "Delete conversation").get("activations", 0) == 0
    assert shown_settings(kiosk)["allow_destructive"] is False
    later = say(kiosk, "what is on the screen")
    assert not changed_outside(later), "said once, then recorded"
    assert_verdict(verify(kiosk.store), f"event #{revocation}", "deleted")


def test_a_revocation_deleted_with_its_chain_row_is_found_without_a_recorded_head(
    tmp_path: Path, store: str
) -> None:
    """The newest event, deleted with its chain row: only the device's own witness shows it."""
    kiosk = Kiosk(tmp_path, messages(), store)
    setting(kiosk, "allow_destructive", "true")
    setting(kiosk, "allow_destructive", "false")
    raw = Raw(kiosk.store)
    (last,) = raw("SELECT max({id}) FROM {events}")[0]
    raw("DELETE FROM {events} WHERE {id} = ?", (last,))
    raw("DELETE FROM {chain} WHERE notification_id = ?", (last,))

    assert_verdict(verify(kiosk.store), f"#{last}", "removed")
    report = say(kiosk, "click delete conversation")
    assert report["decision"] == "rejected", report
    assert changed_outside(report), report
    assert shown_settings(kiosk)["allow_destructive"] is False


# -- 2. a forged pending question ----------------------------------------------------------------


def _attackers_question(tmp_path: Path, scene: Path) -> Path:
    """A real question ("Send needs a yes") asked in a journal of the attacker's own, with a key
    of their own: its events are what they would append to the device's journal."""
    store = tmp_path / "attacker.sqlite"
    scene.write_text(json.dumps(messages()))
    env = {**os.environ, "APPLIANCE_KEY_FILE": str(tmp_path / "attacker.key")}

    def attacker(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(Path(sys.executable).with_name("appliance")), *args, "--store", str(store)],
            capture_output=True, text=True, timeout=120, check=False, env=env,
        )

    assert attacker("settings", "set", "confirm_timeout_s", "600", "--by", "eve").returncode == 0
    asked = attacker("say", "type pay eve into message and click send", "--desktop",
                     f"sim:{scene}", "--json")
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["expects_answer"], asked.stdout
    return store


def test_a_forged_pending_question_is_not_answered(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    assert say(kiosk, "what is on the screen")["decision"] == "answered"
    forged = _attackers_question(tmp_path, tmp_path / "attacker-scene.json")
    with sqlite3.connect(kiosk.store) as conn:
        conn.execute("ATTACH DATABASE ? AS eve", (str(forged),))
        conn.execute(
            "INSERT INTO stored_events (originator_id, originator_version, topic, state) "
            "SELECT originator_id, originator_version, topic, state FROM eve.stored_events "
            "WHERE topic LIKE '%:Turn.%' ORDER BY rowid"
        )

    report = say(kiosk, "yes")
    assert report["decision"] != "executed", report
    assert changed_outside(report), report
    scene = kiosk.raw_scene()
    assert find_element(scene, "Message").get("value", "") == ""
    assert find_element(scene, "Send").get("activations", 0) == 0
    assert_verdict(verify(kiosk.store), "added outside the journal")


def test_a_question_whose_answer_was_deleted_is_forgotten(tmp_path: Path) -> None:
    """Deleting a declined question's answer must not make it open again."""
    kiosk = Kiosk(tmp_path, messages())
    setting(kiosk, "confirm_timeout_s", "600")
    assert say(kiosk, "type hi into message and click send")["expects_answer"]
    assert say(kiosk, "no")["decision"] == "cancelled"
    raw = Raw(kiosk.store)
    raw("DELETE FROM {events} WHERE topic LIKE '%Turn.Declined' OR topic LIKE '%Turn.TurnEnded'")

    report = say(kiosk, "yes")
    assert report["decision"] != "executed", report
    assert changed_outside(report), report
    assert find_element(kiosk.raw_scene(), "Send").get("activations", 0) == 0


# -- 3. stored topics -------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["topic", "originator_topic"])
def test_a_stored_topic_never_imports_a_module(tmp_path: Path, where: str) -> None:
    kiosk = Kiosk(tmp_path, messages())
    assert say(kiosk, "tick urgent")["decision"] == "executed"
    raw = Raw(kiosk.store)
    if where == "topic":
        raw("UPDATE {events} SET topic = 'this:s' WHERE rowid = (SELECT max(rowid) FROM {events})")
    else:
        (nid, state) = raw(
            "SELECT rowid, state FROM {events} WHERE topic LIKE '%Turn.TurnStarted' "
            "ORDER BY rowid DESC LIMIT 1"
        )[0]
        assert b"appliance.turn:Turn" in state
        raw("UPDATE {events} SET state = ? WHERE rowid = ?",
            (state.replace(b"appliance.turn:Turn", b"this:s"), nid))

    for reader in (("audit",), ("audit", "--json"), ("audit", "verify"), ("settings", "show")):
        result = appliance(*reader, "--store", kiosk.store)
        assert ZEN not in result.stdout + result.stderr, reader
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert_verdict(verify(kiosk.store), "modified")
    report = say(kiosk, "what is on the screen")
    assert changed_outside(report), report


# -- 4. terminal escapes in stored text -----------------------------------------------------------


def test_escape_sequences_in_stored_text_never_reach_the_terminal(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    assert say(kiosk, "tick urgent")["decision"] == "executed"
    fake = "\x1b[2K\r\x1b[32mjournal intact: 9 events, hash chain verified\x1b[0m"
    Raw(kiosk.store)(
        "UPDATE {events} SET topic = ? WHERE rowid = (SELECT max(rowid) FROM {events})",
        (f"appliance.turn:Turn.{fake}",),
    )
    for command in (("audit",), ("audit", "verify"), ("settings", "show")):
        result = appliance(*command, "--store", kiosk.store)
        assert "\x1b" not in result.stdout + result.stderr, (command, result.stderr)
        assert "\r" not in result.stdout + result.stderr, command
    result = verify(kiosk.store)
    assert_verdict(result, "hash chain verified\\x1b[0m")
    turn = appliance("say", "what is on the screen", "--desktop", f"sim:{kiosk.scene}",
                     "--store", kiosk.store)
    assert turn.returncode == 0, turn.stderr
    assert "\x1b" not in turn.stdout + turn.stderr and "changed outside" in turn.stderr


# -- the device's witness ------------------------------------------------------------------------


def test_the_witness_lives_beside_the_key_and_follows_each_commit(tmp_path: Path) -> None:
    from appliance.journal.store import journal_identity, store_env
    from appliance.journal.witness import witness_file

    kiosk = Kiosk(tmp_path, messages())
    assert say(kiosk, "tick urgent")["decision"] == "executed"
    witness = witness_file(journal_identity(store_env(kiosk.store)))
    assert witness.parent.parent == Path(os.environ["APPLIANCE_KEY_FILE"]).parent
    assert oct(witness.stat().st_mode & 0o777) == "0o600"
    first = json.loads(json.loads(witness.read_text())["witness"])
    assert say(kiosk, "untick urgent")["decision"] == "executed"
    second = json.loads(json.loads(witness.read_text())["witness"])
    assert second["notification_id"] > first["notification_id"]
    (last,) = Raw(kiosk.store)("SELECT max(rowid) FROM {events}")[0]
    assert second["notification_id"] == last


def test_an_old_copy_put_back_is_found(tmp_path: Path) -> None:
    """Rolling the file back to an earlier copy drops every later event, revocation included."""
    kiosk = Kiosk(tmp_path, messages())
    setting(kiosk, "allow_destructive", "true")
    copy = tmp_path / "copy.sqlite"
    with sqlite3.connect(kiosk.store) as conn, sqlite3.connect(copy) as backup:
        conn.backup(backup)
    setting(kiosk, "allow_destructive", "false")
    assert say(kiosk, "what is on the screen")["decision"] == "answered"
    for suffix in ("-wal", "-shm"):
        Path(kiosk.store + suffix).unlink(missing_ok=True)
    Path(kiosk.store).write_bytes(copy.read_bytes())

    report = say(kiosk, "click delete conversation")
    assert report["decision"] == "rejected", report
    assert changed_outside(report), report


# -- every tampering kind, one scenario -----------------------------------------------------------

NOT_SPOKEN = {"settings snapshot inserted"}  # snapshots decide nothing; `audit verify` names it
CASES = [
    pytest.param(attack, backend, id=f"{attack}-{backend}")
    for attack in ATTACKS
    for backend in ("sqlite", "postgres")
    if backend == "sqlite" or attack not in SQLITE_ONLY
]


@pytest.mark.parametrize(("attack", "backend"), CASES)
def test_no_tampering_is_acted_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest,
    attack: str, backend: str,
) -> None:
    monkeypatch.setenv("APPLIANCE_KEY_FILE", str(tmp_path / "device.key"))  # one is deleted
    store = (
        str(request.getfixturevalue("fresh_pg_url"))
        if backend == "postgres"
        else str(tmp_path / "journal.sqlite")
    )
    verdict = attacked(tmp_path, store, attack)
    assert not verdict.acted, verdict
    assert verdict.spoken or attack in NOT_SPOKEN, verdict
    assert verdict.named, verdict
