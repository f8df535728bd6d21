"""Every way of tampering with the journal that issue 42 names, tried on one scenario.

A caregiver allowed destructive actions and then revoked the permission; the person took one
more turn. The attacker, holding the journal but not the device key, wants "click delete
conversation" then "yes" to press Delete (or a forged question's "yes" to press Send). Each
attack is followed by real `appliance` processes: did `say` act, was the damage said, and does
`audit verify` name it?
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from appliance.journal.aggregates import SETTINGS_ID
from appliance.journal.chain import GENESIS, digest, link
from tests.cli_runner import Kiosk, find_element, run
from tests.integration.test_journal_integrity import Raw, appliance, checkpoint
from tests.scenes import messages

DAMAGE_WORDS = ("changed outside the appliance", "damaged", "cannot be read", "moved aside")


@dataclass(frozen=True)
class Verdict:
    acted: bool  # Delete or Send was pressed
    spoken: bool  # a notice of the damage came with the turn
    named: bool  # `audit verify` exited 1 naming damage
    verify_line: str


def _revocation(raw: Raw) -> int:
    oid = SETTINGS_ID if raw.pg else SETTINGS_ID.hex
    (nid,) = raw("SELECT max({id}) FROM {events} WHERE originator_id = ?", (oid,))[0]
    return int(nid)


def _enabling(raw: Raw) -> int:
    oid = SETTINGS_ID if raw.pg else SETTINGS_ID.hex
    rows = raw("SELECT {id} FROM {events} WHERE originator_id = ? ORDER BY 1", (oid,))
    return int(rows[-2][0])


def _state(raw: Raw, nid: int) -> bytes:
    return bytes(raw("SELECT state FROM {events} WHERE {id} = ?", (nid,))[0][0])


def payload(kiosk: Kiosk, raw: Raw) -> None:
    nid = _revocation(raw)
    raw("UPDATE {events} SET state = ? WHERE {id} = ?",
        (_state(raw, nid).replace(b'"new":false', b'"new":true'), nid))


def topic(kiosk: Kiosk, raw: Raw) -> None:
    raw("UPDATE {events} SET topic = 'this:s' WHERE {id} = ?", (_revocation(raw),))


def deleted_middle(kiosk: Kiosk, raw: Raw) -> None:
    raw("DELETE FROM {events} WHERE {id} = ?", (_revocation(raw),))


def deleted_middle_with_chain(kiosk: Kiosk, raw: Raw) -> None:
    nid = _revocation(raw)
    raw("DELETE FROM {events} WHERE {id} = ?", (nid,))
    raw("DELETE FROM {chain} WHERE notification_id = ?", (nid,))


def _last_is_revocation(kiosk: Kiosk, raw: Raw) -> int:
    """Everything after the revocation removed with its chain rows: the revocation is last."""
    nid = _revocation(raw)
    raw("DELETE FROM {events} WHERE {id} > ?", (nid,))
    raw("DELETE FROM {chain} WHERE notification_id > ?", (nid,))
    return nid


def deleted_last(kiosk: Kiosk, raw: Raw) -> None:
    raw("DELETE FROM {events} WHERE {id} = ?", (_last_is_revocation(kiosk, raw),))


def deleted_last_with_chain(kiosk: Kiosk, raw: Raw) -> None:
    nid = _last_is_revocation(kiosk, raw)
    raw("DELETE FROM {events} WHERE {id} = ?", (nid,))
    raw("DELETE FROM {chain} WHERE notification_id = ?", (nid,))


def inserted_setting(kiosk: Kiosk, raw: Raw) -> None:
    """A copy of the caregiver's "allow" appended as the settings' next version, no chain row."""
    oid = SETTINGS_ID if raw.pg else SETTINGS_ID.hex
    (version,) = raw("SELECT max(originator_version) FROM {events} WHERE originator_id = ?",
                     (oid,))[0]
    (topic_name,) = raw("SELECT topic FROM {events} WHERE {id} = ?", (_enabling(raw),))[0]
    raw("INSERT INTO {events} (originator_id, originator_version, topic, state) "
        "VALUES (?,?,?,?)", (oid, version + 1, topic_name, _state(raw, _enabling(raw))))


def inserted_question(kiosk: Kiosk, raw: Raw) -> None:
    """A real question ("type pay eve and press Send?") from a journal of the attacker's own."""
    attacker = kiosk.scene.parent / "attacker"
    attacker.mkdir()
    scene = attacker / "scene.json"
    scene.write_text(json.dumps(messages()))
    store = attacker / "journal.sqlite"
    own_key = os.environ["APPLIANCE_KEY_FILE"]
    os.environ["APPLIANCE_KEY_FILE"] = str(attacker / "key")
    try:
        assert run("settings", "set", "confirm_timeout_s", "600", "--by", "eve",
                   "--store", str(store)).code == 0
        asked = run("say", "type pay eve into message and click send", "--desktop",
                    f"sim:{scene}", "--store", str(store), "--json")
        assert asked.code == 0 and asked.json()["expects_answer"], asked.err
    finally:
        os.environ["APPLIANCE_KEY_FILE"] = own_key
    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT originator_id, originator_version, topic, state "
                            "FROM stored_events WHERE topic LIKE '%:Turn.%' ORDER BY rowid")
        forged = [tuple(r) for r in rows]
    for oid, version, topic_name, state in forged:
        raw("INSERT INTO {events} (originator_id, originator_version, topic, state) "
            "VALUES (?,?,?,?)", (UUID(oid) if raw.pg else oid, version, topic_name, state))


def swapped(kiosk: Kiosk, raw: Raw) -> None:
    """The states of "allow" and "revoke" exchanged: the newest now says allow."""
    first, last = _enabling(raw), _revocation(raw)
    allow, revoke = _state(raw, first), _state(raw, last)
    raw("UPDATE {events} SET state = ? WHERE {id} = ?", (revoke, first))
    raw("UPDATE {events} SET state = ? WHERE {id} = ?", (allow, last))


def settings_snapshot(kiosk: Kiosk, raw: Raw) -> None:
    from eventsourcing.domain import Snapshot

    from appliance.journal.application import Journal

    journal = Journal(kiosk.store, create=False)
    aggregate: Any = journal.repository.get(SETTINGS_ID)
    aggregate.values["allow_destructive"] = True
    forged = journal.mapper.to_stored_event(Snapshot.take(aggregate))
    oid = forged.originator_id if raw.pg else forged.originator_id.hex
    raw("INSERT INTO {snapshots} VALUES (?,?,?,?)",
        (oid, forged.originator_version, forged.topic, forged.state))


def recomputed_chain(kiosk: Kiosk, raw: Raw) -> None:
    """The revocation edited, then the whole chain rebuilt unkeyed (the attacker has no key)."""
    payload(kiosk, raw)
    rows = raw("SELECT {id}, originator_id, originator_version, topic, state FROM {events} "
               "ORDER BY 1")
    raw("DELETE FROM {chain}")
    raw("DELETE FROM {keys}")
    previous = GENESIS
    for nid, oid, version, topic_name, state in rows:
        d = digest(None, oid, version, topic_name, bytes(state))
        previous = link(None, previous, nid, d)
        raw("INSERT INTO {chain} VALUES (?,?,?)", (nid, d, previous))


def _file(kiosk: Kiosk) -> Path:
    gc.collect()  # Raw's connections, closed only when collected, would hold the file's lock
    path = Path(kiosk.store)
    checkpoint(path)
    return path


def byte_flips(kiosk: Kiosk, raw: Raw) -> None:
    """32 bytes flipped in the page that holds the revocation."""
    nid = _revocation(raw)
    path = _file(kiosk)
    data = bytearray(path.read_bytes())
    where = data.find(_state(raw, nid)[:40])
    assert where > 0
    for i in range(32):
        data[where + i] ^= 0xFF
    path.write_bytes(bytes(data))


def truncated(kiosk: Kiosk, raw: Raw) -> None:
    path = _file(kiosk)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def deleted_key(kiosk: Kiosk, raw: Raw) -> None:
    """The key removed, then the revocation edited: a new key is made, the old chain is foreign."""
    Path(os.environ["APPLIANCE_KEY_FILE"]).unlink()
    payload(kiosk, raw)


def old_copy(kiosk: Kiosk, raw: Raw) -> None:
    """The file rolled back to a copy taken while destructive actions were allowed."""
    path = _file(kiosk)
    path.write_bytes((path.parent / "before-revocation.sqlite").read_bytes())


ATTACKS: dict[str, Callable[[Kiosk, Raw], None]] = {
    "payload edited": payload,
    "topic edited": topic,
    "middle row deleted": deleted_middle,
    "middle row deleted with its chain row": deleted_middle_with_chain,
    "last row deleted": deleted_last,
    "last row deleted with its chain row": deleted_last_with_chain,
    "setting inserted without a chain row": inserted_setting,
    "question inserted without chain rows": inserted_question,
    "rows swapped": swapped,
    "settings snapshot inserted": settings_snapshot,
    "chain recomputed without the key": recomputed_chain,
    "32 bytes flipped in a page": byte_flips,
    "file cut to half its size": truncated,
    "device key deleted": deleted_key,
    "old copy put back": old_copy,
}
SQLITE_ONLY = {"32 bytes flipped in a page", "file cut to half its size", "old copy put back"}


def attacked(tmp: Path, store: str, attack: str) -> Verdict:
    """The scenario, the attack, then `say` twice and `audit verify`, all real processes."""
    kiosk = Kiosk(tmp, messages(), store)
    assert appliance("settings", "set", "confirm_timeout_s", "600", "--by", "carol",
                     "--store", store).returncode == 0
    for value in ("true", "false"):
        if value == "false" and "://" not in store:
            source, copy = sqlite3.connect(store), sqlite3.connect(tmp / "before-revocation.sqlite")
            source.backup(copy)
            source.close()
            copy.close()
        result = appliance("settings", "set", "allow_destructive", value, "--by", "carol",
                           "--store", store)
        assert result.returncode == 0, result.stderr
    _say(kiosk, "what is on the screen")
    ATTACKS[attack](kiosk, Raw(store))
    first = _say(kiosk, "click delete conversation")
    second = _say(kiosk, "yes")
    scene = kiosk.raw_scene()
    acted = any(find_element(scene, name).get("activations", 0) for name in
                ("Delete conversation", "Send"))
    notices = " ".join(first["notices"] + second["notices"])
    # A file damaged past serving was set aside, and a fresh journal took its place: the set
    # aside file is the one whose damage verify must name.
    path = Path(store)
    aside = sorted(path.parent.glob(path.name + ".damaged-*")) if "://" not in store else []
    verify = appliance("audit", "verify", "--store", str(aside[0]) if aside else store)
    assert "Traceback" not in verify.stderr, verify.stderr
    lines = verify.stderr.strip().splitlines()
    return Verdict(acted, any(w in notices for w in DAMAGE_WORDS), verify.returncode == 1,
                   lines[-1] if lines else verify.stdout.strip())


def _say(kiosk: Kiosk, words: str) -> dict[str, Any]:
    turn = appliance("say", words, "--desktop", f"sim:{kiosk.scene}", "--store", kiosk.store,
                     "--json")
    assert turn.returncode == 0, turn.stderr
    assert "Traceback" not in turn.stderr
    report: dict[str, Any] = json.loads(turn.stdout)
    return report
