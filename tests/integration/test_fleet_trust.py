"""The central server trusts nothing it cannot check (issue 47): on a real loopback PostgreSQL,
with `appliance central serve` and `appliance fleet uplink` as real processes. Batches sent with
a kiosk's own bearer credential but not its signature, or not continuing the chain held, or sent
again, are refused and alerted; malformed values are 422; every refusal is one log line; a
running uplink follows a re-join and notices the server's return without waiting out its
back-off."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from appliance.fleet.central_app import MAX_BODY
from appliance.fleet.outgoing import KEPT, _kept
from appliance.fleet.refusals import REQUESTS_REFUSED_ALERT, UNKNOWN_SENDERS
from appliance.fleet.signing import events_digest, new_private_key, sign, signed_text
from appliance.fleet.uplink import Uplink
from appliance.fleet.verify_copy import verify_copy
from appliance.fleet.wire import BIGINT, INTEGER, Batch
from appliance.journal.application import Journal
from appliance.journal.chain import GENESIS
from appliance.journal.key import load_key
from appliance.journal.retention import REMOVED
from tests.integration.test_fleet import APPLIANCE, Central, Kiosk, _client, _wait
from tests.integration.test_fleet import central as central_fixture

central = central_fixture  # the fixture, by the name the tests ask for

pytestmark = pytest.mark.postgres


def _joined(central: Central, tmp_path: Path, turns: int = 1) -> Kiosk:
    """Kiosk room-1, joined, with `turns` sim turns not yet sent."""
    kiosk = Kiosk(tmp_path / "k1", "room-1")
    kiosk.join(central)
    if turns:
        kiosk.turns(turns)
    return kiosk


def _signed(kiosk: Kiosk, after: int, count: int = 5) -> dict[str, Any]:
    """The events after `after`, as the kiosk's uplink would sign and send them."""
    uplink = Uplink(Journal(kiosk.store), kiosk.link())
    try:
        notes = uplink.log.select(after, count, inclusive_of_start=False)
        return json.loads(uplink._batch(after, notes).model_dump_json())  # type: ignore[no-any-return]
    finally:
        uplink.close()


def _resigned(batch: dict[str, Any], kiosk: str, private: str) -> dict[str, Any]:
    """`batch` signed again with `private`, as someone holding that key would."""
    parsed = Batch.model_validate({**batch, "signature": "A" * 86 + "=="})
    head = parsed.events[-1]
    text = signed_text(kiosk, parsed.epoch, parsed.after, parsed.previous, (head.id, head.link),
                       events_digest(parsed.events, parsed.keys))
    return {**batch, "signature": sign(private, text)}


def _refusals(central: Central) -> list[dict[str, Any]]:
    """The central's refusal lines, parsed (each must be one JSON object)."""
    text = (central.folder.parent / "central.err").read_text()
    return [json.loads(line) for line in text.splitlines() if line.startswith('{"time"')]


def _alerts(central: Central, kiosk: str) -> list[str]:
    return next(r for r in central.store.overview() if r["kiosk"] == kiosk)["alerts"]


def _held(central: Central, kiosk: Kiosk) -> None:
    """What is left goes, by an uplink as the kiosk runs it; the central holds every event, and
    the kiosk's chain verifies from its copy."""
    done = kiosk.uplink_once()
    assert done.returncode == 0, done.stderr
    key = load_key(create=False)
    assert key is not None
    assert central.ids(kiosk.name, kiosk.epoch) == kiosk.ids()
    assert verify_copy(central.store, kiosk.name, kiosk.epoch, key) == []


# -- forged, replayed, broken batches ----------------------------------------------------------


def test_batches_sent_with_the_kiosks_own_credential_but_not_its_signature_are_refused(
    central: Central, tmp_path: Path
) -> None:
    kiosk = _joined(central, tmp_path, turns=2)
    first = _signed(kiosk, 0)
    with _client(kiosk) as client:
        assert client.post("/v1/batches", json=first).status_code == 200
    kiosk.push_turns(1)
    held = kiosk.ids()[-1]
    kiosk.turns(1)
    genuine = _signed(kiosk, held)
    made_up = {**genuine, "events": [{**e, "digest": "ab" * 32} for e in genuine["events"]]}
    mallory = new_private_key()
    stolen_epoch = uuid4().hex
    new_epoch = _resigned({**made_up, "epoch": stolen_epoch, "after": 0, "previous": GENESIS},
                          kiosk.name, mallory)
    with _client(kiosk) as client:
        forged = client.post("/v1/batches", json=made_up)
        assert forged.status_code == 403, forged.text
        assert "is not signed with kiosk room-1's key" in forged.json()["detail"]
        other_key = client.post("/v1/batches", json=_resigned(made_up, kiosk.name, mallory))
        assert other_key.status_code == 403
        epoch = client.post("/v1/batches", json=new_epoch)
        assert epoch.status_code == 403, "a new epoch needs the enrolled key's signature"
        replayed = client.post("/v1/batches", json=first)
        assert replayed.status_code == 409 and replayed.json()["position"] == held
        # The kiosk's own key, but a history other than the one held: refused too.
        private = kiosk.link().signing_key
        assert private is not None
        forked = _resigned({**genuine, "previous": "cd" * 32}, kiosk.name, private)
        broke = client.post("/v1/batches", json=forked)
        assert broke.status_code == 409 and "position" not in broke.json()
        assert "does not continue the chain held" in broke.json()["detail"]
    assert central.ids(kiosk.name, stolen_epoch) == []
    (row,) = central.store.overview()
    assert (row["epoch"], row["epochs"], row["state"]) == (kiosk.epoch, 1, "alert")
    alerts = " | ".join(row["alerts"])
    assert alerts.count("batch refused: a batch for epoch") == 3, alerts  # made up, epoch, fork
    assert f"epoch {stolen_epoch[:8]}" in alerts and "an old batch was sent again" in alerts
    assert "does not continue the chain held" in alerts
    statuses = [(r["refused"], r["kiosk"]) for r in _refusals(central)]
    assert statuses == [(403, "room-1")] * 3 + [(409, "room-1")] * 2
    _held(central, kiosk)


def test_a_new_epoch_is_news_of_its_own_on_the_fleet_overview(
    central: Central, tmp_path: Path
) -> None:
    kiosk = _joined(central, tmp_path, turns=0)
    kiosk.push_turns(1)
    old = kiosk.epoch
    assert not _alerts(central, "room-1"), "a kiosk's first epoch is no news"
    for path in kiosk.folder.iterdir():  # re-flashed: a new journal, a new link and key
        path.unlink()
    kiosk.join(central)
    kiosk.push_turns(1)
    (alert,) = [a for a in _alerts(central, "room-1") if a.startswith("new epoch")]
    assert alert.startswith(f"new epoch: the journal began again as epoch {kiosk.epoch[:8]}")
    assert f"epoch {old[:8]} ends at #{central.ids('room-1', old)[-1]}" in alert


def test_a_kiosk_enrolled_before_batches_were_signed_must_join_again(
    central: Central, tmp_path: Path
) -> None:
    kiosk = _joined(central, tmp_path)
    with central.store.datastore.transaction(commit=True) as c:  # as the old schema left it
        c.execute("UPDATE fleet_kiosks SET public_key=NULL")
    refused = kiosk.uplink_once()
    assert refused.returncode == 1 and "joined before batches were signed" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    old_link = kiosk.link().model_dump()
    del old_link["signing_key"]  # a link file written before there were signing keys
    (kiosk.folder / "fleet.json").write_text(json.dumps(old_link))
    unsigned = kiosk.uplink_once()
    assert unsigned.returncode == 1 and "join it again" in unsigned.stderr, unsigned.stderr
    kiosk.join(central)
    _held(central, kiosk)


# -- malformed values ----------------------------------------------------------------------------


def test_malformed_values_are_refused_as_such_never_a_server_error(
    central: Central, tmp_path: Path
) -> None:
    kiosk = _joined(central, tmp_path)
    batch = _signed(kiosk, 0)
    event = batch["events"][0]
    bad = {
        "state not base64": {**event, "state": "not base64!"},
        "an id of 2^63": {**event, "id": BIGINT + 1},
        "an originator_version of 2^31": {**event, "originator_version": INTEGER + 1},
        "a topic with a NUL": {**event, "topic": event["topic"] + "\x00"},
        "a topic with a lone surrogate": {**event, "topic": event["topic"] + "\ud800"},
    }
    with _client(kiosk) as client:
        for what, wrong in bad.items():
            reply = client.post("/v1/batches", content=json.dumps({**batch, "events": [wrong]}),
                                headers={"Content-Type": "application/json"})
            assert reply.status_code == 422, (what, reply.text)
            assert reply.json()["detail"].startswith("body.events.0."), reply.text
        for what, wrong_batch in {
            "after of 2^63": {**batch, "after": BIGINT + 1},
            "a key id with a NUL": {**batch, "keys": [[1, "\x00" * 16]]},
            "a signature not base64": {**batch, "signature": "!" * 88},
        }.items():
            reply = client.post("/v1/batches", json=wrong_batch)
            assert reply.status_code == 422, (what, reply.text)
        assert client.get("/v1/position", params={"epoch": "\x00"}).status_code == 422
        joined = client.post("/v1/join", json={"token": "a" * 20, "public_key": "x"})
        assert joined.status_code == 422
    assert central.ids(kiosk.name, kiosk.epoch) == []
    told = (central.folder.parent / "central.err").read_text()
    assert "Traceback" not in told and " 500" not in told
    lines = _refusals(central)
    assert [r["refused"] for r in lines] == [422] * 10
    assert "state: Value error, is not base64" in lines[0]["reason"]
    assert all(r["kiosk"] == "room-1" for r in lines[:9]) and lines[9]["kiosk"] is None
    _held(central, kiosk)


# -- every refusal logged, counted and alerted -------------------------------------------------


def test_every_refusal_is_one_log_line_counted_and_alerted_past_a_threshold(
    central: Central, tmp_path: Path
) -> None:
    kiosk = _joined(central, tmp_path)
    stranger_credential = "not-a-credential-anyone-holds-" + "s3cr3t" * 4
    used_token = central.enroll("room-2")
    assert kiosk.appliance("fleet", "join", central.url, used_token).returncode == 0
    kiosk.join(central)  # room-1 again: the link file is room-1's
    credential = kiosk.link().credential
    batch = _signed(kiosk, 0)
    with _client(kiosk) as client, _client(kiosk, stranger_credential) as stranger:
        assert client.post("/v1/batches", content=b" " * (MAX_BODY + 1)).status_code == 413
        assert client.post("/v1/batches", content=iter([b"{}"])).status_code == 411
        assert client.post("/v1/batches", json={**batch, "after": 3,
                                                 "events": batch["events"][3:]}).status_code == 409
        assert client.post("/v1/batches", json={**batch, "kiosk": "x"}).status_code == 422
        assert client.get("/v1/nothing-here").status_code == 404
        assert stranger.get("/v1/position", params={"epoch": kiosk.epoch}).status_code == 401
        again = client.post("/v1/join", json={"token": used_token.rpartition(".")[0],
                                              "public_key": base64.b64encode(b"k" * 32).decode()})
        assert again.status_code == 401
    revoked = subprocess.run([*APPLIANCE, "central", "revoke", "room-1", "--db", central.db],
                             capture_output=True, text=True, check=False)
    assert revoked.returncode == 0, revoked.stderr
    with _client(kiosk) as client:
        assert client.post("/v1/batches", json=batch).status_code == 403
    lines = _refusals(central)
    assert [r["refused"] for r in lines] == [413, 411, 409, 422, 404, 401, 401, 403]
    assert [r["kiosk"] for r in lines] == [None, None, "room-1", "room-1", None, None, None,
                                           "room-1"]
    assert all(r["address"] == "127.0.0.1" and r["time"] and r["reason"] for r in lines)
    assert lines[-1]["reason"] == "kiosk room-1 was revoked"
    told = (central.folder.parent / "central.err").read_text()
    private = kiosk.link().signing_key
    assert private is not None and private not in repr(kiosk.link())
    for secret in (credential, stranger_credential, used_token.rpartition(".")[0], private):
        assert secret not in told, "a credential, token or key never reaches the log"

    # Past the threshold, from an address that names no kiosk: an alert of its own row.
    assert not any(r["kiosk"] == UNKNOWN_SENDERS for r in central.store.overview())
    with _client(kiosk, stranger_credential) as stranger:
        for _ in range(REQUESTS_REFUSED_ALERT):
            assert stranger.get("/v1/position", params={"epoch": kiosk.epoch}).status_code == 401
    strangers = next(r for r in central.store.overview() if r["kiosk"] == UNKNOWN_SENDERS)
    assert strangers["state"] == "alert"
    (alert,) = strangers["alerts"]
    assert alert.startswith(f"refused requests: {REQUESTS_REFUSED_ALERT} requests from 127.0.0.1")
    # ... and from a known kiosk: its own alert, and its count.
    with _client(kiosk) as client:
        for _ in range(REQUESTS_REFUSED_ALERT):
            assert client.get("/v1/position", params={"epoch": kiosk.epoch}).status_code == 403
    row = next(r for r in central.store.overview() if r["kiosk"] == "room-1")
    assert row["requests_refused"] == 3 + REQUESTS_REFUSED_ALERT
    due = f"refused requests: {REQUESTS_REFUSED_ALERT} requests refused within an hour"
    assert due in " ".join(row["alerts"])
    shown = subprocess.run([*APPLIANCE, "central", "status", "--db", central.db],
                           capture_output=True, text=True, check=False)
    assert shown.returncode == 0 and f"{UNKNOWN_SENDERS}: alert" in shown.stdout, shown.stderr


# -- the uplink: a re-join, the server's return ------------------------------------------------


def _status(kiosk: Kiosk) -> dict[str, Any]:
    path = kiosk.folder / "fleet-uplink.json"
    try:
        return json.loads(path.read_text())  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return {}


def test_a_running_uplink_follows_the_kiosk_joining_again(
    central: Central, tmp_path: Path
) -> None:
    kiosk = _joined(central, tmp_path)
    uplink = kiosk.start_uplink()
    try:
        _wait(lambda: central.ids(kiosk.name, kiosk.epoch) == kiosk.ids())
        revoked = subprocess.run([*APPLIANCE, "central", "revoke", "room-1", "--db", central.db],
                                 capture_output=True, text=True, check=False)
        assert revoked.returncode == 0, revoked.stderr
        kiosk.turns(1)
        _wait(lambda: _status(kiosk).get("state") == "refused")
        assert "revoked" in _status(kiosk)["detail"]
        kiosk.join(central)  # a new credential and key, while the uplink runs
        kiosk.turns(1)
        _wait(lambda: central.ids(kiosk.name, kiosk.epoch) == kiosk.ids(), timeout_s=30)
        assert uplink.poll() is None, "the same uplink, never restarted"
        shown = (kiosk.folder / "fleet-uplink.json").read_text()
        link = kiosk.link()
        assert link.credential not in shown and str(link.signing_key) not in shown
    finally:
        uplink.kill()
        uplink.wait()
    _held(central, kiosk)


def test_a_waiting_uplink_catches_up_soon_after_the_central_returns(
    central: Central, tmp_path: Path
) -> None:
    """The uplink backs off up to a minute while the server is away; a health probe during the
    wait finds it back well before the wait would have ended."""
    kiosk = _joined(central, tmp_path, turns=0)
    central.kill()
    kiosk.turns(2)
    uplink = kiosk.start_uplink()
    try:
        # Until the uplink is in a long wait (its back-off grows with every failure).
        _wait(lambda: _status(kiosk).get("retry_at", 0) > time.time() + 15, timeout_s=300)
        retry_at = _status(kiosk)["retry_at"]
        central.start()
        _wait(lambda: central.ids(kiosk.name, kiosk.epoch) == kiosk.ids(), timeout_s=5)
        assert time.time() < retry_at, "noticed before the back-off would have ended"
        assert uplink.poll() is None
    finally:
        uplink.kill()
        uplink.wait()
    _held(central, kiosk)


# -- what the copy says of the words -------------------------------------------------------------


def test_the_copy_says_the_words_are_kept_on_the_kiosk_and_retentions_marker_where_it_removed(
) -> None:
    old = {"words": "hello grandma", "steps": [{"text": REMOVED}, {"text": "hi"}]}
    new = {"words": REMOVED, "steps": [{"text": REMOVED}, {"text": REMOVED}]}
    assert _kept(old, new) == {"words": KEPT, "steps": [{"text": REMOVED}, {"text": KEPT}]}
    assert _kept("said this", REMOVED) == KEPT and _kept(REMOVED, REMOVED) == REMOVED
