"""The fleet: kiosks' journals pushed to one central server on a real loopback PostgreSQL, with
the central server and the uplinks as real `appliance` processes, killed with SIGKILL at random
points. Central must end up with every kiosk event exactly once, in order, and each kiosk's hash
chain must verify from the central copy."""

from __future__ import annotations

import html
import json
import os
import random
import re
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from appliance.audit.timeline import timeline
from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop
from appliance.fleet.central_app import MAX_BODY
from appliance.fleet.central_store import CentralStore
from appliance.fleet.link import FleetLink, pinned_context
from appliance.fleet.outgoing import KEPT
from appliance.fleet.verify_copy import verify_copy
from appliance.fleet.wire import Batch
from appliance.journal.application import Journal
from appliance.journal.key import load_key
from appliance.journal.retention import REMOVED
from appliance.settings import Settings
from appliance.web.health import checks
from appliance.wiring import build_planner, new_session
from tests.conftest import fresh_database
from tests.scenes import messages

pytestmark = pytest.mark.postgres

APPLIANCE = [sys.executable, "-m", "appliance.cli"]
LINES = ("untick urgent", "tick urgent", "type hello grandma into message", "select doctor")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Central:
    """`appliance central serve` as its own process, on loopback, with its own database."""

    def __init__(self, db: str, folder: Path) -> None:
        self.db, self.folder, self.port = db, folder, _free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.store = CentralStore(db, pool_size=2)

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [*APPLIANCE, "central", "serve", "--db", self.db, "--host", "127.0.0.1",
             "--port", str(self.port), "--state", str(self.folder)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=(self.folder.parent / "central.err").open("ab"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                ssl.get_server_certificate(("127.0.0.1", self.port), timeout=1)
                return
            except OSError:
                assert self.proc.poll() is None, (self.folder.parent / "central.err").read_text()
                time.sleep(0.1)
        raise AssertionError("the central server did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def enroll(self, name: str) -> str:
        done = subprocess.run(
            [*APPLIANCE, "central", "enroll", name, "--db", self.db, "--host", "127.0.0.1",
             "--state", str(self.folder)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        token = done.stdout.strip()
        assert re.fullmatch(r"[0-9a-f]{48}\.[0-9a-f]{32}", token), "never read as an --option"
        return token

    def ids(self, kiosk: str, epoch: str) -> list[int]:
        return [int(r["notification_id"]) for r in self.store.events(kiosk, epoch)]


class Kiosk:
    """One kiosk: its own SQLite journal and fleet link; `appliance` processes act for it."""

    def __init__(self, folder: Path, name: str, store: str | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.name = folder, name
        self.store = store or str(folder / "journal.sqlite")
        self.env = {**os.environ, "APPLIANCE_FLEET_FILE": str(folder / "fleet.json"),
                    "XDG_STATE_HOME": str(folder / "state")}

    def appliance(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*APPLIANCE, *args], capture_output=True, text=True,
                              env=self.env, check=False, timeout=120)

    def join(self, central: Central) -> None:
        done = self.appliance("fleet", "join", central.url, central.enroll(self.name))
        assert done.returncode == 0, done.stderr
        assert f"as kiosk {self.name}" in done.stdout

    def uplink_once(self) -> subprocess.CompletedProcess[str]:
        return self.appliance("fleet", "uplink", "--once", "--store", self.store)

    def start_uplink(self, batch: int = 500) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [*APPLIANCE, "fleet", "uplink", "--store", self.store, "--batch", str(batch)],
            env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)

    def turns(self, n: int) -> None:
        """`n` sim turns in this process (quick); `appliance say` is used where it matters."""
        journal = Journal(self.store)
        journal.change_setting("max_unconfirmed_per_minute", 600, by="test")
        session = new_session(journal, SimDesktop(Scene.model_validate(messages())),
                              build_planner(Settings(llm="off")))
        for i in range(n):
            session.say(LINES[i % len(LINES)])

    def push_turns(self, n: int) -> None:
        """`n` sim turns, then one uplink that sends them."""
        self.turns(n)
        done = self.uplink_once()
        assert done.returncode == 0, done.stderr

    @property
    def epoch(self) -> str:
        epoch = Journal(self.store).epoch()
        assert epoch is not None
        return epoch

    def ids(self) -> list[int]:
        journal = Journal(self.store, create=False)  # held: its pool closes with it
        rows = journal.chained.query("SELECT rowid FROM stored_events ORDER BY rowid")
        return [int(r[0]) for r in rows]

    def link(self) -> FleetLink:
        return FleetLink.model_validate_json((self.folder / "fleet.json").read_text())


@pytest.fixture
def central(fresh_pg_url: str, tmp_path: Path) -> Iterator[Central]:
    server = Central(fresh_pg_url, tmp_path / "central")
    server.start()
    try:
        yield server
    finally:
        server.kill()
        server.store.close()


def _held_exactly(central: Central, kiosk: Kiosk) -> None:
    """Every kiosk event once, in order, unchanged but for words, and the chain verifies."""
    epoch = kiosk.epoch
    assert central.ids(kiosk.name, epoch) == kiosk.ids()
    assert central.store.position(kiosk.name, epoch) == kiosk.ids()[-1]
    key = load_key(create=False)
    assert key is not None
    assert verify_copy(central.store, kiosk.name, epoch, key) == []


def _transaction_open(central: Central, within_s: float = 2.0) -> bool:
    """True as soon as one of the central's PostgreSQL sessions is inside a transaction (a
    batch being written); False if none was within `within_s`."""
    deadline = time.monotonic() + within_s
    with central.store.datastore.get_connection() as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE datname=current_database() "
                "AND pid<>pg_backend_pid() AND xact_start IS NOT NULL").fetchone()
            if row and row["n"]:
                return True
    return False


def _wait(predicate: Any, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


# -- enrollment, redaction, the projection -----------------------------------------------------


def test_a_joined_kiosk_pushes_its_journal_words_redacted_and_the_chain_verifies(
    central: Central, tmp_path: Path
) -> None:
    kiosk = Kiosk(tmp_path / "k1", "room-1")
    kiosk.join(central)
    assert oct((kiosk.folder / "fleet.json").stat().st_mode & 0o777) == "0o600"
    kiosk.turns(8)
    done = kiosk.uplink_once()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"acknowledged": kiosk.ids()[-1]}
    _held_exactly(central, kiosk)

    states = [bytes(r["state"]) for r in central.store.events(kiosk.name, kiosk.epoch)]
    assert not any(b"grandma" in s for s in states), "words stay on the kiosk by default"
    assert any(KEPT.encode() in s for s in states), "the copy says where the words are"
    assert not any(REMOVED.encode() in s for s in states), "nothing was removed by retention"
    with sqlite3.connect(kiosk.store) as conn:
        assert conn.execute("SELECT count(*) FROM stored_events WHERE CAST(state AS TEXT) "
                            "LIKE '%grandma%'").fetchone()[0] > 0, "the kiosk keeps them"

    (row,) = central.store.overview()
    assert (row["kiosk"], row["state"], row["events"], row["turns"]) == (
        "room-1", "ok", len(kiosk.ids()), 8)
    time.sleep(1.1)  # last seen is shown to the second
    assert kiosk.uplink_once().returncode == 0, "nothing pending: nothing changes"
    assert central.ids(kiosk.name, kiosk.epoch) == kiosk.ids()
    (again,) = central.store.overview()
    assert again["last_seen"] > row["last_seen"], "a request with nothing to send is a heartbeat"


def test_transcripts_leave_only_when_the_caregiver_enabled_them(
    central: Central, tmp_path: Path
) -> None:
    kiosk = Kiosk(tmp_path / "k1", "room-1")
    kiosk.join(central)
    set_ = kiosk.appliance("settings", "set", "fleet_transcripts", "true", "--by", "carol",
                           "--store", kiosk.store)
    assert set_.returncode == 0, set_.stderr
    kiosk.push_turns(4)
    states = [bytes(r["state"]) for r in central.store.events(kiosk.name, kiosk.epoch)]
    assert any(b"grandma" in s for s in states)
    _held_exactly(central, kiosk)


def test_refusals_and_device_faults_raise_alerts(central: Central, tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path / "k1", "room-1")
    kiosk.join(central)
    journal = Journal(kiosk.store)
    session = new_session(journal, SimDesktop(Scene.model_validate(messages())),
                          build_planner(Settings(llm="off")))
    for _ in range(3):  # destructive, not allowed: refused
        assert session.say("click delete conversation").decision == "rejected"
    journal.device_fault("microphone", "the microphone was unplugged")
    assert kiosk.uplink_once().returncode == 0
    (row,) = central.store.overview()
    assert (row["state"], row["refused"], row["device_faults"]) == ("alert", 3, 1)
    assert "repeated refusals: 3 commands refused in a row" in row["alerts"]
    assert "device fault: the microphone was unplugged" in row["alerts"]
    listed = subprocess.run([*APPLIANCE, "central", "status", "--db", central.db],
                            capture_output=True, text=True, check=False)
    assert listed.returncode == 0 and "room-1: alert" in listed.stdout, listed.stderr


def test_a_journal_that_fails_its_check_raises_an_alert(central: Central, tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path / "k1", "room-1")
    kiosk.join(central)
    kiosk.turns(2)
    with sqlite3.connect(kiosk.store) as conn:  # someone edits an outcome in the file
        nid, state = conn.execute("SELECT rowid, state FROM stored_events WHERE topic LIKE "
                                  "'%TurnEnded' ORDER BY rowid LIMIT 1").fetchone()
        conn.execute("UPDATE stored_events SET state=? WHERE rowid=?",
                     (state.replace(b'"executed"', b'"failed"'), nid))
    assert kiosk.uplink_once().returncode == 0
    (row,) = central.store.overview()
    assert row["state"] == "alert"
    assert f"journal check failed: event #{nid} (Turn.TurnEnded" in " ".join(row["alerts"])
    key = load_key(create=False)
    assert key is not None
    assert [b.notification_id for b in verify_copy(central.store, kiosk.name, kiosk.epoch,
                                                   key)] == [nid], "the copy shows it too"


# -- exactly once under SIGKILL ----------------------------------------------------------------


def test_what_a_person_taught_reaches_the_central_and_reads_in_words(
    central: Central, tmp_path: Path
) -> None:
    """Taught spots, names for elements and takes of the voice are accepted by the central
    (their topics are the journal's own) and told on its timeline as on the kiosk's page."""
    from zoneinfo import ZoneInfo

    from appliance.audit.story import told
    from appliance.desktop.seeing.taught import TaughtTarget
    from appliance.fleet.central_timeline import recent_rows

    kiosk = Kiosk(tmp_path / "k", "room-taught")
    kiosk.join(central)
    journal = Journal(kiosk.store)
    journal.teach_target(TaughtTarget(id="t1", app="TkForm", window="Clinic form", name="Save",
                                      offset=(1, 2, 30, 20), text="", fingerprint="0" * 16,
                                      by="voice turn 1a2b3c4d"))
    journal.target_used("t1", hit=True)
    alias = journal.teach_alias("Messages", "Doctor Patel", "my doctor", by="voice",
                                turn="9f8e7d6c5b4a")
    journal.forget_alias(alias.id, by="Carol")
    journal.voice_takes_added("click send", "command", 3, "enrolled", by="Carol")
    journal.voice_takes_removed("click send", 1, by="Carol")
    done = kiosk.uplink_once()
    assert done.returncode == 0, done.stderr
    _held_exactly(central, kiosk)
    said = [h.text for h in told(recent_rows(central.store, kiosk.name), ZoneInfo("UTC"))
            .happenings]
    assert said == [
        "The person taught the spot \u201cSave\u201d in TkForm (Clinic form) (in turn 1a2b3c4d)",
        "The taught spot \u201cSave\u201d was clicked, and the screen changed",
        "The person called Doctor Patel in Messages \u201cmy doctor\u201d (in turn 9f8e7d6c)",
        "Carol took back the name \u201cmy doctor\u201d (it meant Doctor Patel in Messages)",
        "Carol added 3 takes of \u201cclick send\u201d to the person's voice",
        "Carol removed 1 take of \u201cclick send\u201d from the person's voice",
    ]


def test_exactly_once_when_the_uplinks_and_the_central_are_killed_at_random_points(
    central: Central, tmp_path: Path
) -> None:
    rng = random.Random(int(os.environ.get("FLEET_KILL_SEED", "16")))
    kiosks = [Kiosk(tmp_path / "k1", "room-1"), Kiosk(tmp_path / "k2", "room-2")]
    for kiosk in kiosks:
        kiosk.join(central)
        kiosk.turns(60)

    def held() -> int:
        return sum(central.store.position(k.name, k.epoch) for k in kiosks)

    killed = {"uplink": 0, "central": 0, "central mid-transaction": 0}
    for round_ in range(8):
        before = held()
        uplinks = [k.start_uplink(batch=5) for k in kiosks]
        try:
            _wait(lambda before=before: held() > before)
            time.sleep(rng.uniform(0, 0.25))
            victim = ("uplink", "central", "both")[round_ % 3]
            if victim in ("central", "both"):
                caught = _transaction_open(central)  # wait (briefly) for one to be open
                central.kill()
                killed["central"] += 1
                killed["central mid-transaction"] += caught
            if victim in ("uplink", "both"):
                for uplink in uplinks:
                    os.kill(uplink.pid, signal.SIGKILL)
                killed["uplink"] += len(uplinks)
        finally:
            for uplink in uplinks:
                if uplink.poll() is None:
                    os.kill(uplink.pid, signal.SIGKILL)
                uplink.wait()
        if central.proc is None:
            central.start()
        for kiosk in kiosks:
            kiosk.turns(25)  # the kiosks go on taking turns between the faults
    print("kills:", killed)
    assert killed["uplink"] >= 10 and killed["central"] >= 5
    assert killed["central mid-transaction"] >= 2, killed
    for kiosk in kiosks:
        done = kiosk.uplink_once()
        assert done.returncode == 0, done.stderr
        _held_exactly(central, kiosk)


# -- offline, re-flashed -------------------------------------------------------------------------


def test_a_kiosk_works_offline_and_everything_arrives_when_the_central_is_back(
    central: Central, tmp_path: Path
) -> None:
    kiosk = Kiosk(tmp_path / "k1", "room-1")
    kiosk.join(central)
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(messages()))
    central.kill()
    uplink = kiosk.start_uplink()
    try:
        for words in ("tick urgent", "type hello into message", "untick urgent"):
            said = kiosk.appliance("say", words, "--desktop", f"sim:{scene}", "--store",
                                   kiosk.store, "--json")
            assert said.returncode == 0 and json.loads(said.stdout)["decision"] == "executed"
        status_file = kiosk.folder / "fleet-uplink.json"

        def behind() -> Any:
            return json.loads(status_file.read_text()) if status_file.exists() else {}

        _wait(lambda: behind().get("lag_events") == len(kiosk.ids()))  # as it retries
        assert behind()["state"] == "away" and behind()["lag_s"] > 0
        shown = kiosk.appliance("fleet", "status", "--store", kiosk.store)
        assert shown.returncode == 0 and shown.stdout.startswith("away:"), shown.stderr
        health = next(c for c in checks(Journal(kiosk.store), kiosk.folder, None)
                      if c.what == "Central server")
        assert health.state == "problem" and "not yet at https://127.0.0.1" in health.detail
        central.start()
        _wait(lambda: central.store.position(kiosk.name, kiosk.epoch) == kiosk.ids()[-1], 120)
    finally:
        uplink.kill()
        uplink.wait()
    _held_exactly(central, kiosk)


def test_a_reflashed_kiosk_is_a_new_epoch_of_the_same_kiosk(
    central: Central, tmp_path: Path
) -> None:
    kiosk = Kiosk(tmp_path / "k1", "room-1")
    kiosk.join(central)
    kiosk.push_turns(3)
    old_epoch, old_ids = kiosk.epoch, kiosk.ids()
    for path in kiosk.folder.iterdir():  # re-flashed: a new journal, a new link
        path.unlink()
    kiosk.join(central)
    kiosk.push_turns(2)
    assert kiosk.epoch != old_epoch and kiosk.ids()[0] == 1
    assert central.ids("room-1", old_epoch) == old_ids, "the old epoch is kept as it was"
    _held_exactly(central, kiosk)
    (row,) = central.store.overview()
    assert (row["epoch"], row["epochs"]) == (kiosk.epoch, 2)


def test_a_kiosk_whose_journal_is_on_postgresql_pushes_it_the_same_way(
    central: Central, tmp_path: Path, pg_url: str
) -> None:
    with fresh_database(pg_url) as journal_url:
        kiosk = Kiosk(tmp_path / "k1", "room-pg", store=journal_url)
        kiosk.join(central)
        kiosk.push_turns(4)
        _held_exactly(central, kiosk)
        assert (tmp_path / "k1" / "state" / "appliance" / "fleet-uplink.json").exists()


def test_a_kiosk_restored_from_a_backup_goes_on_in_a_new_epoch_and_loses_nothing(
    central: Central, tmp_path: Path
) -> None:
    kiosk = Kiosk(tmp_path / "k1", "room-1")
    kiosk.join(central)
    kiosk.push_turns(3)
    backup = tmp_path / "backup.sqlite"
    with sqlite3.connect(kiosk.store) as live, sqlite3.connect(backup) as copy:
        live.backup(copy)
    old_epoch = kiosk.epoch
    kiosk.push_turns(3)
    sent = central.ids("room-1", old_epoch)
    Path(kiosk.store).unlink()
    for suffix in ("-wal", "-shm"):
        Path(kiosk.store + suffix).unlink(missing_ok=True)
    with sqlite3.connect(backup) as copy, sqlite3.connect(kiosk.store) as restored:
        copy.backup(restored)
    # Numbered again from where the backup ended: ids the central already has.
    kiosk.push_turns(4)
    assert central.ids("room-1", old_epoch) == sent, "the old epoch is left as it was"
    assert kiosk.epoch != old_epoch
    _held_exactly(central, kiosk)  # the whole restored journal, under its new epoch
    rows = [r for r in timeline(Journal(kiosk.store)) if r["event"] == "EpochRestarted"]
    assert len(rows) == 1 and "restored from a backup" in rows[0]["detail"]
    (row,) = central.store.overview()
    assert (row["epoch"], row["epochs"]) == (kiosk.epoch, 2)


# -- security ----------------------------------------------------------------------------------


def _client(kiosk: Kiosk, credential: str | None = None) -> httpx.Client:
    link = kiosk.link()
    return httpx.Client(base_url=link.url, verify=pinned_context(link.certificate),
                        headers={"Authorization": f"Bearer {credential or link.credential}"})


def _batch(kiosk: Kiosk) -> dict[str, Any]:
    """A real batch of this kiosk's first events, as its uplink would send it."""
    from appliance.fleet.uplink import Uplink

    uplink = Uplink(Journal(kiosk.store), kiosk.link())
    try:
        notes = uplink.log.select(0, 5, inclusive_of_start=False)
        return json.loads(uplink._batch(0, notes).model_dump_json())  # type: ignore[no-any-return]
    finally:
        uplink.close()


def test_unenrolled_revoked_and_cross_kiosk_writes_are_refused(
    central: Central, tmp_path: Path
) -> None:
    alice, bob = Kiosk(tmp_path / "a", "room-a"), Kiosk(tmp_path / "b", "room-b")
    alice.join(central)
    bob.join(central)
    alice.turns(2)
    bob.turns(2)
    batch = _batch(alice)
    with _client(alice, credential="not-a-credential-anyone-holds") as stranger:
        assert stranger.post("/v1/batches", json=batch).status_code == 401
    with _client(alice) as client:
        huge = client.post("/v1/batches", content=b" " * (MAX_BODY + 1))
        assert huge.status_code == 413, "refused before it is read as a batch"
        unsized = client.post("/v1/batches", content=iter([b"{}"]))  # chunked: no length
        assert unsized.status_code == 411
    with _client(bob) as as_bob:
        named = as_bob.post("/v1/batches", json={**batch, "kiosk": "room-a"})
        assert named.status_code == 422, "a batch cannot name a kiosk"
        reply = as_bob.post("/v1/batches", json=batch)  # alice's events, bob's credential
        assert reply.status_code == 403, "signed with alice's key: bob's credential is not enough"
    assert central.ids("room-a", alice.epoch) == [], "nothing was written as alice"
    assert central.ids("room-b", alice.epoch) == [], "nor as bob"

    token = central.enroll("room-c")
    used = alice.appliance("fleet", "join", central.url, token)
    assert used.returncode == 0
    again = bob.appliance("fleet", "join", central.url, token)
    assert again.returncode == 1 and "unknown, used or expired" in again.stderr
    wrong_pin = token[:-4] + ("0000" if not token.endswith("0000") else "1111")
    pinned = bob.appliance("fleet", "join", central.url, wrong_pin)
    assert pinned.returncode == 1 and "not the one the token was made for" in pinned.stderr
    assert len(pinned.stderr.splitlines()) == 1

    revoked = subprocess.run([*APPLIANCE, "central", "revoke", "room-b", "--db", central.db],
                             capture_output=True, text=True, check=False)
    assert revoked.returncode == 0, revoked.stderr
    refused = bob.uplink_once()
    assert refused.returncode == 1 and "revoked" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    row = next(r for r in central.store.overview() if r["kiosk"] == "room-b")
    assert (row["state"], row["ingest_refusals"]) == ("revoked", 1)


def test_a_batch_that_skips_ahead_is_refused_and_a_repeated_one_changes_nothing(
    central: Central, tmp_path: Path
) -> None:
    kiosk = Kiosk(tmp_path / "k1", "room-1")
    kiosk.join(central)
    kiosk.turns(2)
    batch = _batch(kiosk)
    with _client(kiosk) as client:
        ahead = {**batch, "after": batch["events"][0]["id"],
                 "events": batch["events"][1:]}
        skipped = client.post("/v1/batches", json=ahead)
        assert skipped.status_code == 409 and skipped.json()["position"] == 0
        first = client.post("/v1/batches", json=batch)
        assert first.status_code == 200
        held = central.store.position(kiosk.name, kiosk.epoch)
        assert client.post("/v1/batches", json=batch).json()["position"] == held
    assert central.ids(kiosk.name, kiosk.epoch) == [e["id"] for e in batch["events"]]
    Batch.model_validate(batch)  # what was sent is what the boundary accepts


# -- the fleet page ----------------------------------------------------------------------------


def test_the_caregiver_page_at_the_central_lists_every_kiosk_read_only(
    central: Central, tmp_path: Path
) -> None:
    from tests.integration.test_web import _login, _pair, _start, _stop

    quiet, busy = Kiosk(tmp_path / "q", "room-quiet"), Kiosk(tmp_path / "b", "room-busy")
    quiet.join(central)
    busy.join(central)
    journal = Journal(busy.store)
    session = new_session(journal, SimDesktop(Scene.model_validate(messages())),
                          build_planner(Settings(llm="off")))
    for _ in range(3):
        session.say("click delete conversation")
    assert busy.uplink_once().returncode == 0
    (tmp_path / "web").mkdir()
    server = _start(tmp_path / "web", "--central-db", central.db)
    try:
        with httpx.Client(follow_redirects=False) as client:
            _pair(server, client)
            assert _login(server, client).status_code == 303
            page = client.get(server.url + "/fleet")
            assert page.status_code == 200
            assert '<a href="/fleet">Fleet</a>' in page.text
            busy_row = page.text.split(">room-busy</a></td>", 1)[1].split("</tr>", 1)[0]
            assert "Needs a look" in busy_row and "3 commands refused in a row" in busy_row
            quiet_row = page.text.split(">room-quiet</a></td>", 1)[1].split("</tr>", 1)[0]
            assert "silent: never seen" in quiet_row and "<td>never</td>" in quiet_row
            assert client.post(server.url + "/fleet", data={}).status_code == 405
            one = client.get(server.url + "/fleet/room-busy")
            assert one.status_code == 200
            # Rows in the kiosk's own page's words: what was said (here kept on the kiosk) and
            # how it ended, never an event's name.
            said = re.findall(r'class="said"><a [^>]*>\u201c([^\u201d]*)\u201d',
                              html.unescape(one.text))
            assert said == ["(words kept on the kiosk)"] * 3, "words stay on the kiosk"
            assert one.text.count('class="cmd tone-refused"') == 3
            assert "(rejected)" not in one.text
            assert client.get(server.url + "/fleet/room-nobody").status_code == 404
            link = re.search(r'href="(/fleet/room-busy/turn/[0-9a-f]{8})"', one.text)
            assert link, one.text
            steps = html.unescape(client.get(server.url + link.group(1)).text)
            assert "<td>TurnStarted</td>" in steps and "<td>TurnEnded</td>" in steps
            assert "(words kept on the kiosk)" in steps and "Back to kiosk room-busy" in steps
            for missing in ("/fleet/room-busy/turn/00000000", "/fleet/room-busy/turn/%25",
                            "/fleet/room-quiet" + link.group(1)[len("/fleet/room-busy"):]):
                assert client.get(server.url + missing).status_code == 404, missing
        with httpx.Client(follow_redirects=False) as stranger:
            for path in ("/fleet", "/fleet/room-busy", link.group(1)):
                assert stranger.get(server.url + path).headers["location"] == "/login"
    finally:
        _stop(server)


def test_fleet_commands_fail_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "APPLIANCE_FLEET_FILE": str(tmp_path / "fleet.json")}
    for args, said in (
        (["central", "status", "--db", "postgresql://postgres@127.0.0.1:1/x"],
         "cannot open the central database: no PostgreSQL server answers at 127.0.0.1:1"),
        (["central", "enroll", "room 1", "--db", "postgresql://postgres@127.0.0.1:1/x",
          "--host", "127.0.0.1", "--state", str(tmp_path / "c")], "a kiosk name is letters"),
        (["central", "revoke", "room-1", "--db", str(tmp_path / "x.sqlite")],
         "the central database is a postgresql:// URL"),
        (["fleet", "join", "http://127.0.0.1:1", "a" * 20 + "." + "0" * 32], "must be https"),
        (["fleet", "join", "https://127.0.0.1:1", "not-a-token"], "not an enrollment token"),
        (["fleet", "uplink", "--store", str(tmp_path / "j.sqlite")], "has not joined"),
        (["fleet", "status", "--store", str(tmp_path / "j.sqlite")], "no uplink has run"),
        (["bench", "fleet", "--kiosks", "2"], "bench fleet needs --store postgresql://"),
    ):
        done = subprocess.run([*APPLIANCE, *args], capture_output=True, text=True, env=env,
                              check=False, timeout=60)
        assert done.returncode == 1 and said in done.stderr, (args, done.stderr)
        assert len(done.stderr.splitlines()) == 1, done.stderr
    assert not (tmp_path / "x.sqlite").exists() and not (tmp_path / "fleet.json").exists()


# -- the benchmark and the back-off ------------------------------------------------------------


def test_the_fleet_benchmark_runs_end_to_end_and_loses_nothing(pg_url: str) -> None:
    """Small, and no timing asserted: kiosk processes join, fill, catch up and take turns."""
    from appliance_lab.bench.fleet import bench_fleet

    lines: list[str] = []
    report = bench_fleet(pg_url, kiosks=3, progress=lines.append, fill_turns=5, steady_s=3.0)
    assert report["events_at_kiosks"] == report["events_at_central"] > 3 * 5 * 5
    assert report["lost"] == 0 and report["steady"]["lag_event_to_central_ms"]["n"] > 0
    assert report["postgres_bytes_per_million_events"] > 0 and report["central_rss_kb"]["peak"]
    assert lines[0] == "3 kiosks joined; each takes 5 turns offline"


def test_the_back_off_is_jittered_and_capped() -> None:
    from appliance.fleet.uplink import BACKOFF_CAP_S, backoff_s

    rng = random.Random(7)
    first = [backoff_s(1, rng) for _ in range(200)]
    late = [backoff_s(40, rng) for _ in range(200)]
    assert all(0 <= w <= 1.0 for w in first) and len(set(first)) == 200, "full jitter"
    assert all(0 <= w <= BACKOFF_CAP_S for w in late) and max(late) > BACKOFF_CAP_S / 2
