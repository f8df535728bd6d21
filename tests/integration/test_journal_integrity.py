"""Attacks on the journal by someone who can edit its store but does not hold the device key.

Each test is one tamper kind tried on real SQLite files (and the real loopback PostgreSQL where
the attack applies there); a crash must be excluded, so the verdicts come from real `appliance`
processes. Every attack must be detected and named, and the appliance must keep serving.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from eventsourcing.domain import Snapshot

from appliance.journal.aggregates import SETTINGS_ID
from appliance.journal.application import Journal
from tests.cli_runner import APPLIANCE, Kiosk, run
from tests.integration.test_journal import executed_turn
from tests.scenes import messages


class Raw:
    """SQL straight to the store, as an attacker with the file (or database) but no key."""

    def __init__(self, store: str) -> None:
        self.store = store
        self.pg = "://" in store
        self.names = (
            {
                "events": "appliance_events",
                "id": "notification_id",
                "chain": "appliance_events_chain",
                "keys": "appliance_events_chain_keys",
                "snapshots": "appliance_snapshots",
            }
            if self.pg
            else {
                "events": "stored_events",
                "id": "rowid",
                "chain": "event_chain",
                "keys": "event_chain_keys",
                "snapshots": "stored_snapshots",
            }
        )

    def __call__(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        text = sql.format(**self.names)
        if self.pg:
            with psycopg.connect(self.store, autocommit=True) as conn:
                cur = conn.execute(text.replace("?", "%s").encode(), params)
                return cur.fetchall() if cur.description else []
        with sqlite3.connect(self.store) as conn:
            return conn.execute(text, params).fetchall()


def appliance(*args: str) -> subprocess.CompletedProcess[str]:
    """A real `appliance` process: a crash shows as exit 70 or a traceback, never hidden."""
    return subprocess.run(
        [str(APPLIANCE), *args], capture_output=True, text=True, timeout=120, check=False
    )


def assert_verdict(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 1 with the damage named on one `appliance:` line (plus `also:` lines)."""
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("appliance: "), result.stderr
    assert all(line.startswith(("also: ", "appliance: ")) for line in lines), result.stderr
    for word in words:
        assert word in result.stderr, (word, result.stderr)


def verify(store: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return appliance("audit", "verify", "--store", store, *extra)


def filled(store: str, turns: int = 3) -> Journal:
    journal = Journal(store)
    for i in range(turns):
        executed_turn(journal, f"text {i}")
    assert journal.verify() == []
    return journal


def checkpoint(path: Path) -> None:
    """Everything into the main file, and no -wal or -shm left beside it."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()


# -- 2. settings forged without a trace ------------------------------------------------


def _forged_settings_snapshot(journal: Journal) -> Any:
    """A snapshot of the real settings with destructive actions allowed and a new wake phrase,
    encoded exactly as eventsourcing writes one."""
    aggregate: Any = journal.repository.get(SETTINGS_ID)
    aggregate.values["allow_destructive"] = True
    aggregate.values["wake_phrase"] = "hey mallory"
    return journal.mapper.to_stored_event(Snapshot.take(aggregate))


def test_an_inserted_settings_snapshot_decides_nothing_and_is_reported(store: str) -> None:
    journal = Journal(store)
    journal.change_setting("denylist_apps", ("Terminal",), by="carol")
    forged = _forged_settings_snapshot(journal)
    oid = forged.originator_id if Raw(store).pg else forged.originator_id.hex
    Raw(store)(
        "INSERT INTO {snapshots} VALUES (?,?,?,?)",
        (oid, forged.originator_version, forged.topic, forged.state),
    )
    settings = Journal(store).settings()
    assert settings.allow_destructive is False and settings.wake_phrase == "hey juniper"
    assert settings.denylist_apps == ("Terminal",)
    breaks = [str(b) for b in Journal(store, create=False).verify()]
    assert any("snapshot" in b and "does not match its events" in b for b in breaks), breaks
    if not Raw(store).pg:
        assert_verdict(verify(store), "snapshot", "forged or edited")


def test_an_edited_settings_snapshot_decides_nothing_and_is_reported(store: str) -> None:
    journal = Journal(store)
    for i in range(45):
        journal.change_setting("confirm_timeout_s", float(i + 1), by="test")
    raw = Raw(store)
    (version, state) = raw(
        "SELECT originator_version, state FROM {snapshots} ORDER BY 1 DESC LIMIT 1"
    )[0]
    assert version == 40
    decoded = json.loads(bytes(state))
    decoded["state"]["values"]["allow_destructive"] = True
    decoded["state"]["values"]["wake_phrase"] = "hey mallory"
    raw(
        "UPDATE {snapshots} SET state = ? WHERE originator_version = ?",
        (json.dumps(decoded).encode(), version),
    )
    settings = Journal(store).settings()
    assert settings.allow_destructive is False and settings.wake_phrase == "hey juniper"
    assert settings.confirm_timeout_s == 45.0
    breaks = [str(b) for b in Journal(store, create=False).verify()]
    assert breaks == [
        f"the snapshot of {SETTINGS_ID.hex[:8]} at v40 does not match its events (forged or edited)"
    ], breaks


def test_an_edited_device_snapshot_is_reported(tmp_path: Path) -> None:
    store = str(tmp_path / "journal.sqlite")
    journal = Journal(store)
    for _ in range(55):
        journal.switch_pressed("switch", 1, "tap", "talk")
    raw = Raw(store)
    (version, state) = raw("SELECT originator_version, state FROM {snapshots}")[0]
    assert version == 50
    decoded = json.loads(state)
    decoded["state"]["presses"] = 5
    raw("UPDATE {snapshots} SET state = ?", (json.dumps(decoded).encode(),))
    assert_verdict(verify(store), "at v50 does not match its events")


def test_a_running_appliance_sees_settings_changed_by_another_process(store: str) -> None:
    """Settings are folded once and kept; a change by another writer is seen at the next read."""
    mine = Journal(store)
    assert mine.settings().wake_phrase == "hey juniper"
    Journal(store).change_setting("wake_phrase", "hey ada", by="carol")
    assert mine.settings().wake_phrase == "hey ada"
    mine.change_setting("allow_destructive", True, by="carol")
    assert mine.settings().allow_destructive is True and mine.settings().wake_phrase == "hey ada"


def test_a_forged_setting_event_with_a_forged_chain_row_is_not_obeyed(tmp_path: Path) -> None:
    """Without the key the attacker can add an event and a chain row, but not a valid one."""
    store = str(tmp_path / "journal.sqlite")
    journal = Journal(store)
    journal.change_setting("wake_phrase", "hey ada", by="carol")
    raw = Raw(store)
    (state,) = raw("SELECT state FROM {events} ORDER BY rowid DESC LIMIT 1")[0]
    forged = json.loads(state)
    forged.update(key="allow_destructive", old=False, new=True)
    raw(
        "INSERT INTO {events} VALUES (?,?,?,?)",
        (
            SETTINGS_ID.hex,
            3,
            "appliance.journal.aggregates:DeviceSettings.SettingChanged",
            json.dumps(forged).encode(),
        ),
    )
    (head,) = raw("SELECT hash FROM {chain} ORDER BY 1 DESC LIMIT 1")[0]
    (nid,) = raw("SELECT max(rowid) FROM {events}")[0]  # after the journal's epoch and settings
    digest = hashlib.sha256(secrets.token_bytes(8)).hexdigest()
    raw("INSERT INTO {chain} VALUES (?, ?, ?)",
        (nid, digest, hashlib.sha256(head.encode()).hexdigest()))
    fresh = Journal(store)
    assert fresh.settings().allow_destructive is False
    assert fresh.settings().wake_phrase == "hey ada"
    assert any("settings" in n and "damaged" in n for n in fresh.take_notices())
    assert_verdict(verify(store), f"event #{nid}", "modified")


# -- 3. truncation, recomputation, flipped digests --------------------------------------


def test_truncating_events_with_their_chain_rows_is_caught_by_the_recorded_head(
    store: str, tmp_path: Path
) -> None:
    journal = filled(store, turns=4)
    printed = verify(store) if not Raw(store).pg else None
    head = str(journal.head())
    if printed is not None:
        assert printed.returncode == 0 and f"head {head}" in printed.stdout, printed
    witness = tmp_path / "witness"
    assert run("audit", "verify", "--store", store, "--witness", str(witness)).code == 0
    assert witness.read_text().strip() == head
    raw = Raw(store)
    last = journal.head().notification_id
    for nid in range(last - 4, last + 1):  # the last 5 events, and their chain rows
        raw("DELETE FROM {events} WHERE {id} = ?", (nid,))
        raw("DELETE FROM {chain} WHERE notification_id = ?", (nid,))
    found = Journal(store).verify()  # the device's own witness, beside its key, shows it
    assert [b.notification_id for b in found] == [0] and "removed from its end" in str(found[0])
    breaks = Journal(store, create=False).verify(expect=(last, head.split(":")[1]))
    assert [b.notification_id for b in breaks] == [0]
    assert "removed from its end" in str(breaks[0])
    for result in (
        run("audit", "verify", "--store", store, "--expect", head),
        run("audit", "verify", "--store", store, "--witness", str(witness)),
    ):
        assert result.code == 1 and "removed from its end" in result.err, result
    assert witness.read_text().strip() == head, "a failed verify keeps the recorded head"


@pytest.mark.parametrize("where", ["first", "middle"])
def test_removing_events_with_their_chain_rows_elsewhere_is_named(store: str, where: str) -> None:
    """Only a removed tail needs the recorded head; any other cut breaks the keyed links."""
    filled(store)
    raw = Raw(store)
    removed = range(1, 4) if where == "first" else range(9, 12)
    for nid in removed:
        raw("DELETE FROM {events} WHERE {id} = ?", (nid,))
        raw("DELETE FROM {chain} WHERE notification_id = ?", (nid,))
    breaks = Journal(store).verify()
    assert [(b.notification_id, b.problem) for b in breaks] == [
        (removed[-1] + 1, "cut off from the event before it (the chain was rewritten)")
    ]


def _recompute_chain(raw: Raw, key: bytes | None) -> None:
    """What an attacker does after editing: rebuild the chain from the stored events, with the
    old unkeyed algorithm (key None) or with a key of their own."""
    from appliance.journal.chain import GENESIS, digest, link
    from appliance.journal.key import key_id

    previous = GENESIS
    rows = raw(
        "SELECT {id}, originator_id, originator_version, topic, state FROM {events} ORDER BY 1"
    )
    raw("DELETE FROM {chain}")
    raw("DELETE FROM {keys}")
    if key is not None:
        raw("INSERT INTO {keys} VALUES (1, ?)", (key_id(key),))
    for nid, oid, version, topic, state in rows:
        d = digest(key, oid, version, topic, bytes(state))
        previous = link(key, previous, nid, d)
        raw("INSERT INTO {chain} VALUES (?,?,?)", (nid, d, previous))


@pytest.mark.parametrize("attacker_key", [None, b"k" * 32], ids=["unkeyed", "own-key"])
def test_an_edited_payload_with_a_recomputed_chain_is_detected(
    store: str, attacker_key: bytes | None
) -> None:
    filled(store)
    raw = Raw(store)
    (state,) = raw("SELECT state FROM {events} WHERE {id} = 5")[0]
    raw(
        "UPDATE {events} SET state = ? WHERE {id} = 5",
        (bytes(state).replace(b"text 0", b"text X"),),
    )
    _recompute_chain(raw, attacker_key)
    breaks = [str(b) for b in Journal(store).verify()]
    assert breaks, "a recomputed chain must not verify"
    expected = "without the device key" if attacker_key is None else "does not match"
    assert expected in breaks[0], breaks
    if not raw.pg:
        assert_verdict(verify(store), expected)


def test_a_flipped_byte_in_a_stored_digest_is_reported(store: str) -> None:
    filled(store)
    raw = Raw(store)
    (d,) = raw("SELECT digest FROM {chain} WHERE notification_id = 3")[0]
    flipped = ("0" if d[10] != "0" else "1").join((d[:10], d[11:]))
    raw("UPDATE {chain} SET digest = ? WHERE notification_id = 3", (flipped,))
    breaks = Journal(store).verify()
    assert [b.notification_id for b in breaks] == [3]
    assert "digest in the chain was altered" in breaks[0].problem


# -- 5. damage that used to crash verify --------------------------------------------------


def test_a_flipped_originator_id_byte_is_named_not_a_crash(tmp_path: Path) -> None:
    store = str(tmp_path / "journal.sqlite")
    filled(store)
    raw = Raw(store)
    (oid,) = raw("SELECT originator_id FROM {events} WHERE rowid = 4")[0]
    raw("UPDATE {events} SET originator_id = ? WHERE rowid = 4", ("x" + oid[1:],))
    assert_verdict(verify(store), "event #4", "modified")
    audit = appliance("audit", "--store", store, "--json")
    assert audit.returncode == 0 and "Event #4" in audit.stderr, audit


def test_a_state_stored_as_text_is_named_not_a_crash(tmp_path: Path) -> None:
    store = str(tmp_path / "journal.sqlite")
    filled(store)
    Raw(store)("UPDATE {events} SET state = CAST(state AS TEXT) WHERE rowid = 5")
    assert_verdict(verify(store), "event #5", "stored as text")


MALFORMED_AT = (0.05, 0.2, 0.3, 0.5, 0.65, 0.8, 0.95)


def test_a_malformed_page_is_a_verdict_not_a_crash(tmp_path: Path) -> None:
    """4 KiB of garbage at several places in the file: each copy gets a verdict, no crash."""
    original = tmp_path / "journal.sqlite"
    filled(str(original), turns=60).close()
    checkpoint(original)
    size = original.stat().st_size
    for where in MALFORMED_AT:
        store = tmp_path / f"damaged-{where}.sqlite"
        store.write_bytes(original.read_bytes())
        with store.open("r+b") as f:
            f.seek(int(size * where) // 4096 * 4096 + 100)
            f.write(b"\xab" * 4096)
        result = verify(str(store))
        assert_verdict(result)
        assert any(w in result.stderr for w in ("malformed", "damaged", "tampered")), result
        for reader in (("audit",), ("settings", "show")):
            read = appliance(*reader, "--store", str(store))
            assert read.returncode in (0, 1), (where, reader, read.stderr)
            assert "Traceback" not in read.stderr and "internal error" not in read.stderr


# -- 4. read-only commands never create, and read read-only media --------------------------


def test_read_only_commands_never_create_a_store(tmp_path: Path) -> None:
    typo = tmp_path / "typo.sqlite"
    for args in (
        ("audit", "verify"),
        ("audit",),
        ("settings", "show"),
        ("replay",),
    ):
        result = appliance(*args, "--store", str(typo))
        assert_verdict(result, "no journal at")
        assert not typo.exists(), args
    assert list(tmp_path.iterdir()) == []
    typo.touch()  # an empty file is no journal either, and stays empty
    assert_verdict(appliance("audit", "verify", "--store", str(typo)), "no journal at")
    assert typo.stat().st_size == 0


@pytest.mark.postgres
def test_verify_of_an_empty_postgres_database_creates_nothing(fresh_pg_url: str) -> None:
    result = verify(fresh_pg_url)
    assert_verdict(result, "no journal")
    with psycopg.connect(fresh_pg_url) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema='public'"
        ).fetchone()
    assert tables == (0,)


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """The journal and its folder without write permission."""
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in (path, path.parent)}
    path.chmod(0o444)
    path.parent.chmod(0o555)
    try:
        yield
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


@contextmanager
def read_only_mount(path: Path) -> Iterator[None]:
    """The journal on a file system mounted read-only: even root cannot write there."""
    copy = path.read_bytes()
    folder = path.parent
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder)], check=True)
    try:
        path.write_bytes(copy)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.parametrize("how", ["chmod", "mount", "mode=ro", "immutable", "not-wal"])
def test_a_journal_on_read_only_media_can_be_read(tmp_path: Path, how: str) -> None:
    if how == "mount" and os.geteuid() != 0:
        pytest.skip("mounting a read-only file system needs root")
    folder = tmp_path / "media"
    folder.mkdir()
    path = folder / "journal.sqlite"
    journal = filled(str(path))
    journal.change_setting("wake_phrase", "hey ada", by="carol")
    count = journal.head().count
    journal.close()
    checkpoint(path)
    if how == "not-wal":  # e.g. a copy made with the sqlite3 tool: opening it must not switch it
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.close()
    store = {
        "chmod": str(path),
        "mount": str(path),
        "mode=ro": f"file:{path}?mode=ro",
        "immutable": f"file:{path}?immutable=1",
        "not-wal": str(path),
    }[how]
    before = sorted(p.name for p in folder.iterdir())
    with read_only_mount(path) if how == "mount" else read_only(path):
        checked = verify(store)
        assert checked.returncode == 0, checked
        assert f"journal intact: {count} events" in checked.stdout, checked
        shown = appliance("settings", "show", "--store", store, "--json")
        assert shown.returncode == 0, shown
        assert json.loads(shown.stdout)["wake_phrase"] == "hey ada"
        audit = appliance("audit", "--store", store, "--json")
        assert audit.returncode == 0 and len(json.loads(audit.stdout)) == count, audit
        if how in ("mount", "not-wal"):
            assert sorted(p.name for p in folder.iterdir()) == before, "nothing written"
    left = sorted(p.name for p in folder.iterdir() if not p.name.endswith(("-wal", "-shm")))
    assert left == before


# -- 6. damage must not stop the appliance ------------------------------------------------


def test_deleting_the_last_event_does_not_brick_the_kiosk(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    assert kiosk.say("tick urgent")["decision"] == "executed"
    raw = Raw(kiosk.store)
    (last,) = raw("SELECT max(rowid) FROM {events}")[0]
    raw("DELETE FROM {events} WHERE rowid = ?", (last,))
    for words in ("what is on the screen", "type hello into message", "what is selected"):
        turn = appliance(
            "say", words, "--desktop", f"sim:{kiosk.scene}", "--store", kiosk.store, "--json"
        )
        assert turn.returncode == 0, turn.stderr
        assert json.loads(turn.stdout)["decision"] in ("answered", "executed"), turn.stdout
    result = verify(kiosk.store)
    assert_verdict(result, f"event #{last}", "deleted")
    assert "also:" not in result.stderr, "the turns after the break are intact"


def test_a_text_state_settings_event_falls_back_to_safe_settings_and_says_so(
    tmp_path: Path,
) -> None:
    kiosk = Kiosk(tmp_path, messages())
    for key, value in (
        ("denylist_apps", "Terminal"),
        ("allow_destructive", "true"),
        ("wake_phrase", "hey ada"),
    ):
        assert run("settings", "set", key, value, "--by", "carol", "--store", kiosk.store).code == 0
    raw = Raw(kiosk.store)
    (nid,) = raw(
        "SELECT rowid FROM {events} WHERE originator_id = ? AND originator_version = 3",
        (SETTINGS_ID.hex,),
    )[0]
    raw("UPDATE {events} SET state = CAST(state AS TEXT) WHERE rowid = ?", (nid,))

    turn = appliance(
        "say", "tick urgent", "--desktop", f"sim:{kiosk.scene}", "--store", kiosk.store, "--json"
    )
    assert turn.returncode == 0, turn.stderr
    report = json.loads(turn.stdout)
    assert report["decision"] == "executed"
    assert any("settings" in n and "safe settings" in n for n in report["notices"]), report
    shown = appliance("settings", "show", "--store", kiosk.store, "--json")
    assert shown.returncode == 0, shown.stderr
    settings = json.loads(shown.stdout)
    assert settings["allow_destructive"] is False, "never more permissive than the defaults"
    assert settings["denylist_apps"] == ["Terminal"], "nor than what the caregiver set"
    assert settings["wake_phrase"] == "hey ada"
    assert "safe settings" in shown.stderr
    assert (
        run(
            "settings", "set", "allow_destructive", "true", "--by", "carol", "--store", kiosk.store
        ).code
        == 0
    ), "a caregiver can set them again"
    assert_verdict(verify(kiosk.store), f"event #{nid}", "stored as text")


# -- the device key ---------------------------------------------------------------------------


def test_the_device_key_is_private_and_created_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from appliance.journal.key import key_path, load_key

    path = tmp_path / "config" / "appliance" / "journal.key"
    monkeypatch.setenv("APPLIANCE_KEY_FILE", str(path))
    assert load_key(create=False) is None and not path.exists()
    code = (
        "import sys; from appliance.journal.key import load_key; "
        "sys.stdout.write(load_key(create=True).hex())"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    keys = {p.communicate(timeout=60)[0] for p in procs}
    assert len(keys) == 1 and len(next(iter(keys))) == 64, keys
    assert key_path() == path and path.read_bytes().hex() in keys
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["journal.key"], "no temporary left"


def test_a_missing_or_changed_key_is_a_verdict_and_the_kiosk_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APPLIANCE_KEY_FILE", str(tmp_path / "first.key"))
    kiosk = Kiosk(tmp_path, messages())
    assert kiosk.say("tick urgent")["decision"] == "executed"
    os.environ["APPLIANCE_KEY_FILE"] = str(tmp_path / "lost.key")
    assert_verdict(verify(kiosk.store), "cannot verify", "no device key")
    assert kiosk.say("what is on the screen")["decision"] == "answered"  # a new key is made
    result = verify(kiosk.store)
    assert_verdict(result, "cannot verify events #1-#", "the device key does not match")
    os.environ["APPLIANCE_KEY_FILE"] = str(tmp_path / "first.key")
    assert_verdict(verify(kiosk.store), "cannot verify events #", "does not match")
