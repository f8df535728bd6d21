"""The central server's PostgreSQL: enrolled kiosks, every kiosk's events per epoch, and the
fleet projections, each batch written with its tracking position in one transaction.

The position is eventsourcing's own tracking record (`PostgresTrackingRecorder`, one row per
kiosk and epoch); a batch at or behind it changes nothing, one that starts past it is refused,
so a batch retried after a lost reply, a killed uplink or a killed server lands exactly once.

Nothing is taken on the credential's word alone: each batch carries the kiosk's signature over
its chain head (appliance/fleet/signing.py), checked against the key the kiosk joined with, and
must continue the chain held, in the transaction that writes it."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from eventsourcing.persistence import Tracking
from eventsourcing.postgres import PostgresFactory, PostgresTrackingRecorder
from eventsourcing.utils import Environment
from psycopg import Cursor
from psycopg.rows import DictRow

from appliance.fleet.alerts import raise_alert
from appliance.fleet.batch_checks import (
    OutOfOrder,
    Replayed,
    check_continues,
    check_signature,
)
from appliance.fleet.link import FleetError, token_digest
from appliance.fleet.refusals import UNKNOWN_SENDERS, Refusal, record
from appliance.fleet.signing import events_digest, signed_text
from appliance.fleet.wire import Batch, WireEvent
from appliance.journal.chain import GENESIS
from appliance.journal.store import postgres_refusal, store_env

ENROLL_VALID = timedelta(days=1)
REFUSALS_ALERT = 3
"""Commands refused in a row on one kiosk before the care team is alerted."""
SILENT_ALERT = timedelta(minutes=30)
"""Six missed heartbeats (an idle uplink asks for its position every 5 minutes)."""
SCHEMA_LOCK = int.from_bytes(hashlib.sha256(b"appliance fleet tables").digest()[:8], signed=True)

SCHEMA = """
CREATE TABLE IF NOT EXISTS fleet_kiosks (
    name text PRIMARY KEY, credential_hash text UNIQUE,
    enrolled_at timestamptz NOT NULL DEFAULT now(), revoked_at timestamptz);
ALTER TABLE fleet_kiosks ADD COLUMN IF NOT EXISTS public_key bytea;
CREATE TABLE IF NOT EXISTS fleet_enrollments (
    token_hash text PRIMARY KEY, kiosk text NOT NULL, expires_at timestamptz NOT NULL,
    used_at timestamptz);
CREATE TABLE IF NOT EXISTS fleet_events (
    kiosk text NOT NULL, epoch uuid NOT NULL, notification_id bigint NOT NULL,
    originator_id uuid NOT NULL, originator_version integer NOT NULL, topic text NOT NULL,
    state bytea NOT NULL, digest text NOT NULL, link text NOT NULL, redacted_digest text,
    occurred_at timestamptz, received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (kiosk, epoch, notification_id));
CREATE TABLE IF NOT EXISTS fleet_chain_keys (
    kiosk text NOT NULL, epoch uuid NOT NULL, since bigint NOT NULL, key_id text NOT NULL,
    PRIMARY KEY (kiosk, epoch, since));
CREATE TABLE IF NOT EXISTS fleet_status (
    kiosk text PRIMARY KEY, epoch uuid, epochs integer NOT NULL DEFAULT 0,
    last_seen timestamptz, last_event_at timestamptz, events bigint NOT NULL DEFAULT 0,
    turns bigint NOT NULL DEFAULT 0, refused bigint NOT NULL DEFAULT 0,
    failed bigint NOT NULL DEFAULT 0, refused_in_a_row integer NOT NULL DEFAULT 0,
    device_faults bigint NOT NULL DEFAULT 0, last_fault text NOT NULL DEFAULT '',
    ingest_refusals bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS fleet_alerts (
    id bigserial PRIMARY KEY, kiosk text NOT NULL, kind text NOT NULL,
    raised_at timestamptz NOT NULL DEFAULT now(), detail text NOT NULL);
CREATE INDEX IF NOT EXISTS fleet_alerts_raised ON fleet_alerts (raised_at);
CREATE TABLE IF NOT EXISTS fleet_refusals (
    source text PRIMARY KEY, total bigint NOT NULL DEFAULT 1,
    window_start timestamptz NOT NULL DEFAULT now(), in_window integer NOT NULL DEFAULT 1,
    alerted boolean NOT NULL DEFAULT false, last_at timestamptz NOT NULL DEFAULT now());
"""
EVENT_COLUMNS = (
    "kiosk, epoch, notification_id, originator_id, originator_version, topic, state, digest, "
    "link, redacted_digest, occurred_at"
)


class Unauthorized(FleetError):
    """No kiosk holds that credential."""


class Revoked(FleetError):
    """The kiosk was revoked."""

    def __init__(self, kiosk: str) -> None:
        super().__init__(f"kiosk {kiosk} was revoked")
        self.kiosk = kiosk


@dataclass(frozen=True)
class Counts:
    """What one batch adds to its kiosk's projection."""

    turns: int = 0
    refused: int = 0
    failed: int = 0
    faults: int = 0
    last_fault: str = ""
    refused_in_a_row: int = 0
    last_event_at: datetime | None = None
    journal_problem: str = ""


class CentralStore:
    """One per central process: a small pool of connections (close it)."""

    def __init__(self, url: str, pool_size: int = 4) -> None:
        if not url.startswith("postgres"):
            raise FleetError("the central database is a postgresql:// URL")
        env = store_env(url)
        refused = postgres_refusal(env)  # said plainly, before a pool would only time out
        if refused:
            raise FleetError(f"cannot open the central database: {refused}")
        env.pop("APPLICATION_RECORDER_TOPIC", None)
        env.update(POSTGRES_POOL_SIZE=str(pool_size), POSTGRES_MAX_OVERFLOW="0")
        self.factory = PostgresFactory(Environment("FleetCentral", env))
        self.datastore = self.factory.datastore
        with self.datastore.get_connection() as conn:  # autocommit: a session-level lock
            conn.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
            try:
                conn.execute(SCHEMA)
                self.tracking: PostgresTrackingRecorder = self.factory.tracking_recorder()
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))

    def close(self) -> None:
        self.datastore.close()

    # -- enrollment ----------------------------------------------------------------------

    def enroll(self, kiosk: str) -> str:
        """A one-time token for `kiosk`, valid a day; only its digest is kept. Hex: a token
        that began with "-" would be read as an option on the kiosk's command line."""
        secret = secrets.token_hex(24)
        with self.datastore.transaction(commit=True) as c:
            c.execute(
                "INSERT INTO fleet_enrollments VALUES (%s, %s, %s, NULL)",
                (token_digest(secret), kiosk, datetime.now(UTC) + ENROLL_VALID),
            )
        return secret

    def join(self, secret: str, public_key: bytes) -> tuple[str, str]:
        """Exchange a one-time token and the kiosk's batch signing key (its public half) for
        the kiosk's credential: (kiosk, credential). Joining again (a re-flashed kiosk) replaces
        the credential and the key, and lifts a revocation."""
        credential = secrets.token_urlsafe(32)
        with self.datastore.transaction(commit=True) as c:
            c.execute(
                "UPDATE fleet_enrollments SET used_at=now() WHERE token_hash=%s "
                "AND used_at IS NULL AND expires_at>now() RETURNING kiosk",
                (token_digest(secret),),
            )
            row = c.fetchone()
            if row is None:
                raise Unauthorized("that enrollment token is unknown, used or expired")
            kiosk = str(row["kiosk"])
            c.execute(
                "INSERT INTO fleet_kiosks (name, credential_hash, public_key) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO UPDATE SET credential_hash=EXCLUDED.credential_hash, "
                "public_key=EXCLUDED.public_key, enrolled_at=now(), revoked_at=NULL",
                (kiosk, token_digest(credential), public_key),
            )
            c.execute("INSERT INTO fleet_status (kiosk) VALUES (%s) ON CONFLICT DO NOTHING",
                      (kiosk,))
        return kiosk, credential

    def revoke(self, kiosk: str) -> bool:
        with self.datastore.transaction(commit=True) as c:
            c.execute("UPDATE fleet_kiosks SET revoked_at=now() WHERE name=%s "
                      "AND revoked_at IS NULL RETURNING name", (kiosk,))
            return c.fetchone() is not None

    def kiosk_for(self, credential: str, seen: bool = True) -> str:
        """The kiosk holding `credential`; a revoked one is refused, and counted. `seen`: mark
        it seen now (a batch does that in its own transaction instead, saving a commit)."""
        with self.datastore.transaction(commit=True) as c:
            c.execute("SELECT name, revoked_at FROM fleet_kiosks WHERE credential_hash=%s",
                      (token_digest(credential),))
            row = c.fetchone()
            if row is None:
                raise Unauthorized("this kiosk is not enrolled")
            name, revoked = str(row["name"]), row["revoked_at"] is not None
            if revoked:  # counted, and committed: the refusal itself is raised below
                c.execute("UPDATE fleet_status SET ingest_refusals=ingest_refusals+1 "
                          "WHERE kiosk=%s", (name,))
            elif seen:  # any request is a sign of life, an idle kiosk's heartbeat too
                c.execute("UPDATE fleet_status SET last_seen=now() WHERE kiosk=%s", (name,))
        if revoked:
            raise Revoked(name)
        return name

    # -- ingest --------------------------------------------------------------------------

    def position(self, kiosk: str, epoch: str) -> int:
        return self.tracking.max_tracking_id(_stream(kiosk, epoch)) or 0

    def held(self, kiosk: str, epoch: str) -> tuple[int, str | None]:
        """The position and the chain link of the event there: a kiosk whose own link there
        differs (or which has no event there) was restored from a backup."""
        position = self.position(kiosk, epoch)
        if not position:
            return 0, None
        with self.datastore.get_connection() as conn, conn.cursor() as c:
            c.execute("SELECT link FROM fleet_events WHERE kiosk=%s AND epoch=%s "
                      "AND notification_id=%s", (kiosk, epoch, position))
            row = c.fetchone()
        return position, str(row["link"]) if row else None

    def ingest(self, kiosk: str, batch: Batch) -> int:
        """Check the batch and write its new events, the kiosk's projection and the tracking
        position in one transaction; returns the position now held. Raises OutOfOrder (it
        starts past the position), Unverified (not the kiosk's signature, or not continuing
        the chain held) or Replayed (nothing in it is new)."""
        stream = _stream(kiosk, batch.epoch)
        head = batch.events[-1]
        signed = signed_text(kiosk, batch.epoch, batch.after, batch.previous,
                             (head.id, head.link), events_digest(batch.events, batch.keys))
        with self.datastore.transaction(commit=True) as c:
            # One writer per kiosk epoch at a time: a retry racing a request the server is
            # still finishing for a killed uplink waits here, then finds it done.
            c.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (stream,))
            held = self.tracking._max_tracking_id(stream, c) or 0
            if batch.after > held:
                raise OutOfOrder(held, batch.after)
            # The kiosk's key and the link held, in one round trip: a batch is a few events.
            c.execute("SELECT public_key, (SELECT link FROM fleet_events WHERE kiosk=%s "
                      "AND epoch=%s AND notification_id=%s) AS held_link "
                      "FROM fleet_kiosks WHERE name=%s", (kiosk, batch.epoch, held, kiosk))
            found = c.fetchone()
            check_signature(kiosk, batch, signed, found["public_key"] if found else None)
            new = [e for e in batch.events if e.id > held]
            if not new:
                raise Replayed(held, batch)
            ours = str(found["held_link"] or "") if held and found else GENESIS
            check_continues(batch, held, ours)
            rows = [_row(kiosk, batch.epoch, e) for e in new]
            with c.copy(f"COPY fleet_events ({EVENT_COLUMNS}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            c.executemany(
                "INSERT INTO fleet_chain_keys VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [(kiosk, batch.epoch, since, key) for since, key in batch.keys],
            )
            self._project(c, kiosk, batch.epoch, new, [r[-1] for r in rows], first=not held)
            self.tracking._insert_tracking(c, Tracking(stream, new[-1].id))
            return new[-1].id

    def _project(self, c: Cursor[DictRow], kiosk: str, epoch: str, events: list[WireEvent],
                 times: list[datetime | None], first: bool) -> None:
        """`first`: the epoch's first events (the kiosk's epochs are counted once each)."""
        c.execute("INSERT INTO fleet_status (kiosk) VALUES (%s) ON CONFLICT DO NOTHING", (kiosk,))
        c.execute("SELECT refused_in_a_row, epoch FROM fleet_status WHERE kiosk=%s FOR UPDATE",
                  (kiosk,))
        current = c.fetchone()
        assert current is not None
        if first and current["epoch"] is not None and current["epoch"].hex != epoch:
            self._new_epoch(c, kiosk, epoch, current["epoch"].hex)
        counts = _counts(events, times, int(current["refused_in_a_row"]))
        c.execute(
            "UPDATE fleet_status SET last_seen=now(), "
            "last_event_at=coalesce(%s, last_event_at), events=events+%s, turns=turns+%s, "
            "refused=refused+%s, failed=failed+%s, refused_in_a_row=%s, "
            "device_faults=device_faults+%s, "
            "last_fault=CASE WHEN %s<>'' THEN %s ELSE last_fault END, "
            "epoch=%s, epochs=epochs+%s WHERE kiosk=%s",
            (counts.last_event_at, len(events), counts.turns, counts.refused, counts.failed,
             counts.refused_in_a_row, counts.faults, counts.last_fault, counts.last_fault,
             epoch, int(first), kiosk),
        )
        if counts.faults:
            raise_alert(c, kiosk, "device fault", counts.last_fault)
        if counts.journal_problem:
            raise_alert(c, kiosk, "journal check failed", counts.journal_problem)
        before = int(current["refused_in_a_row"])
        if before < REFUSALS_ALERT <= counts.refused_in_a_row:
            raise_alert(c, kiosk, "repeated refusals",
                        f"{counts.refused_in_a_row} commands refused in a row")

    def _new_epoch(self, c: Cursor[DictRow], kiosk: str, epoch: str, previous: str) -> None:
        """A kiosk whose journal begins again (re-flashed, restored from a backup, a damaged
        file set aside) is news of its own: what came before stays under the old epoch."""
        ended = self.tracking._max_tracking_id(_stream(kiosk, previous), c) or 0
        raise_alert(c, kiosk, "new epoch",
                    f"the journal began again as epoch {epoch[:8]}, signed by the kiosk's key "
                    f"(re-flashed, restored from a backup or a damaged file set aside); epoch "
                    f"{previous[:8]} ends at #{ended}")

    # -- refusals ------------------------------------------------------------------------

    def refused(self, refusal: Refusal) -> None:
        """Count a refused request and raise the alerts it calls for, in its own transaction
        (the refused batch's own was rolled back)."""
        with self.datastore.transaction(commit=True) as c:
            record(c, refusal)

    def alive(self) -> bool:
        """PostgreSQL answers: what an uplink's health probe asks."""
        try:
            with self.datastore.get_connection() as conn:
                conn.execute("SELECT 1")
        except Exception:  # down, or the pool timed out: "not yet", the probe asks again
            return False
        return True

    # -- reading -------------------------------------------------------------------------

    def events(self, kiosk: str, epoch: str) -> Iterator[dict[str, Any]]:
        """A kiosk epoch's events as held, oldest first."""
        with self.datastore.get_connection() as conn, conn.cursor() as c:
            c.execute("SELECT * FROM fleet_events WHERE kiosk=%s AND epoch=%s "
                      "ORDER BY notification_id", (kiosk, epoch))
            yield from c

    def recent_events(self, kiosk: str, limit: int, turn: str = "") -> list[dict[str, Any]]:
        """The newest `limit` events of the kiosk's current epoch, oldest first; with `turn`
        (the start of a turn's id, hex), only that turn's among them. Read backwards along the
        primary key: as cheap with a million events held as with a thousand."""
        with self.datastore.get_connection() as conn, conn.cursor() as c:
            c.execute("SELECT * FROM (SELECT e.* FROM fleet_events e JOIN fleet_status s "
                      "ON s.kiosk=e.kiosk AND s.epoch=e.epoch WHERE e.kiosk=%s "
                      "ORDER BY e.notification_id DESC LIMIT %s) newest "
                      "WHERE replace(originator_id::text, '-', '') LIKE %s "
                      "ORDER BY notification_id", (kiosk, limit, f"{turn}%"))
            return list(c.fetchall())

    def chain_keys(self, kiosk: str, epoch: str) -> list[tuple[int, str]]:
        with self.datastore.get_connection() as conn, conn.cursor() as c:
            c.execute("SELECT since, key_id FROM fleet_chain_keys WHERE kiosk=%s AND epoch=%s "
                      "ORDER BY since", (kiosk, epoch))
            return [(int(r["since"]), str(r["key_id"])) for r in c]

    def overview(self, silent_after: timedelta = SILENT_ALERT) -> list[dict[str, Any]]:
        """Every enrolled kiosk with its projection and what needs the care team's eye."""
        with self.datastore.get_connection() as conn, conn.cursor() as c:
            c.execute(
                "SELECT k.name, k.revoked_at, s.*, r.total AS requests_refused, now() AS now "
                "FROM fleet_kiosks k LEFT JOIN fleet_status s ON s.kiosk=k.name "
                "LEFT JOIN fleet_refusals r ON r.source='kiosk ' || k.name ORDER BY k.name"
            )
            rows = c.fetchall()
            c.execute("SELECT kiosk, kind, raised_at, detail FROM fleet_alerts "
                      "WHERE raised_at > now() - interval '1 day' ORDER BY id")
            alerts = c.fetchall()
        out = []
        for r in rows:
            mine = [f"{a['kind']}: {a['detail']}" for a in alerts if a["kiosk"] == r["name"]]
            last = r["last_seen"]
            if r["revoked_at"] is None and (last is None or r["now"] - last > silent_after):
                mine.insert(0, "silent: " + (f"last seen {last.isoformat(timespec='seconds')}"
                                             if last else "never seen"))
            out.append({
                "kiosk": r["name"],
                "state": "revoked" if r["revoked_at"] else ("alert" if mine else "ok"),
                "epoch": r["epoch"].hex if r["epoch"] else None,
                "epochs": r["epochs"] or 0,
                "last_seen": last.isoformat(timespec="seconds") if last else None,
                "events": r["events"] or 0, "turns": r["turns"] or 0,
                "refused": r["refused"] or 0, "failed": r["failed"] or 0,
                "device_faults": r["device_faults"] or 0,
                "ingest_refusals": r["ingest_refusals"] or 0,
                "requests_refused": r["requests_refused"] or 0,
                "alerts": mine,
            })
        strangers = [f"{a['kind']}: {a['detail']}" for a in alerts if a["kiosk"] == ""]
        if strangers:  # addresses that named no kiosk: a row of their own, after the kiosks
            out.append({"kiosk": UNKNOWN_SENDERS, "state": "alert", "epoch": None, "epochs": 0,
                        "last_seen": None, "events": 0, "turns": 0, "refused": 0, "failed": 0,
                        "device_faults": 0, "ingest_refusals": 0,
                        "requests_refused": None,  # counted per address: the alerts say
                        "alerts": strangers})
        return out


def _stream(kiosk: str, epoch: str) -> str:
    return f"{kiosk}/{epoch}"


def _text(value: Any, limit: int) -> str:
    """Text from an event's state as PostgreSQL text holds it (no NUL, no lone surrogate)."""
    text = str(value).replace("\x00", "")[:limit]
    return text.encode("utf-8", "replace").decode()


def _state(e: WireEvent) -> dict[str, Any]:
    try:
        data = json.loads(base64.b64decode(e.state))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _occurred(state: dict[str, Any]) -> datetime | None:
    stamp = state.get("timestamp")
    text = stamp.get("_data_") if isinstance(stamp, dict) else stamp
    try:
        return datetime.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


def _row(kiosk: str, epoch: str, e: WireEvent) -> tuple[Any, ...]:
    return (kiosk, epoch, e.id, e.originator_id, e.originator_version, e.topic,
            base64.b64decode(e.state), e.digest, e.link, e.redacted_digest, _occurred(_state(e)))


def _counts(events: list[WireEvent], times: list[datetime | None], in_a_row: int) -> Counts:
    turns = refused = failed = faults = 0
    last_fault = journal_problem = ""
    for e in events:
        name = e.topic.rsplit(".", 1)[-1]
        if name == "TurnEnded":
            outcome = str(_state(e).get("outcome", ""))
            turns += 1
            if outcome == "rejected":
                refused += 1
                in_a_row += 1
            elif outcome == "failed":
                failed += 1
            elif outcome in ("executed", "answered", "undone"):
                in_a_row = 0
        elif name == "DeviceFault":
            faults += 1
            last_fault = _text(_state(e).get("message", ""), 200)
        elif name == "JournalChecked" and _state(e).get("intact") is False:
            journal_problem = _text(_state(e).get("problem", ""), 300) or "damaged"
    stamped = [t for t in times if t is not None]
    return Counts(turns, refused, failed, faults, last_fault, in_a_row,
                  max(stamped) if stamped else None, journal_problem)
