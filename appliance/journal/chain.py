"""A hash chain over the stored events, written in the same transaction as the events.

Each stored event gets a row in `event_chain`: its notification id, a digest of its content and
a link hash = sha256(previous link + notification id + digest). Editing, deleting or reordering
stored events afterwards breaks the chain at that event, which `verify()` names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Notification, StoredEvent
from eventsourcing.postgres import PostgresAggregateRecorder, PostgresApplicationRecorder
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor
from psycopg.sql import SQL, Identifier

GENESIS = "0" * 64
CHAIN_TABLE = "event_chain"
CREATE_LOCK = int.from_bytes(hashlib.sha256(b"appliance journal tables").digest()[:8], signed=True)
"""The PostgreSQL advisory lock key held while the journal's tables are created."""


def digest(originator_id: UUID | str, version: int, topic: str, state: bytes) -> str:
    oid = originator_id.hex if isinstance(originator_id, UUID) else str(originator_id)
    h = hashlib.sha256()
    for part in (oid.encode(), str(version).encode(), topic.encode(), state):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


def link(previous: str, notification_id: int, content_digest: str) -> str:
    return hashlib.sha256(f"{previous}:{notification_id}:{content_digest}".encode()).hexdigest()


def _rows(
    previous: str, ids: Sequence[int], events: Sequence[StoredEvent]
) -> list[tuple[int, str, str]]:
    rows = []
    for nid, e in zip(ids, events, strict=True):
        d = digest(e.originator_id, e.originator_version, e.topic, e.state)
        previous = link(previous, nid, d)
        rows.append((nid, d, previous))
    return rows


class ChainedSQLiteRecorder(SQLiteApplicationRecorder):
    def construct_create_table_statements(self) -> list[str]:
        return [
            *super().construct_create_table_statements(),
            f"CREATE TABLE IF NOT EXISTS {CHAIN_TABLE} (notification_id INTEGER PRIMARY KEY, "
            "digest TEXT NOT NULL, hash TEXT NOT NULL)",
        ]

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        with self.datastore.get_connection(commit=True) as conn:
            # WAL + synchronous=NORMAL: a commit survives a killed process (the crash this
            # journal must survive) without an fsync per turn, which an SD card can't afford.
            # Only a power cut can lose the last commits; it never corrupts the file.
            conn.cursor().execute("PRAGMA synchronous=NORMAL")
            with conn.transaction(commit=True) as c:
                return self._insert_events(c, stored_events, **kwargs)

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        ids = super()._insert_events(c, stored_events, **kwargs)
        assert ids is not None
        c.execute(f"SELECT hash FROM {CHAIN_TABLE} ORDER BY notification_id DESC LIMIT 1")
        head = c.fetchone()
        rows = _rows(head[0] if head else GENESIS, ids, stored_events)
        c.executemany(f"INSERT INTO {CHAIN_TABLE} VALUES (?,?,?)", rows)
        return ids

    def chain(self) -> list[tuple[int, str, str]]:
        with self.datastore.transaction(commit=False) as c:
            c.execute(f"SELECT notification_id, digest, hash FROM {CHAIN_TABLE} ORDER BY 1")
            return [(r[0], r[1], r[2]) for r in c.fetchall()]


class ChainedPostgresRecorder(PostgresApplicationRecorder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.chain_table = f"{self.events_table_name}_chain"
        self.table = Identifier(self.datastore.schema, self.chain_table)
        self.sql_create_statements.append(
            SQL(
                "CREATE TABLE IF NOT EXISTS {} (notification_id bigint PRIMARY KEY, "
                "digest text NOT NULL, hash text NOT NULL)"
            ).format(self.table)
        )

    def create_table(self) -> None:
        """Create the tables, types and functions one process at a time: run at once, their
        CREATE ... IF NOT EXISTS and CREATE OR REPLACE race in the catalogue ("tuple
        concurrently updated", duplicate keys in pg_type) and some of the openers fail."""
        with self.datastore.get_connection() as conn:  # autocommit: a session-level lock
            conn.execute("SELECT pg_advisory_lock(%s)", (CREATE_LOCK,))
            try:
                super().create_table()
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (CREATE_LOCK,))

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """Events and their chain rows in one transaction, in two round trips (a pipeline).

        The table lock (taken first, as eventsourcing does) keeps the chain's order equal to
        the commit order; the chain head is read under that lock.
        """
        if not stored_events:
            return []
        head_sql = SQL("SELECT hash FROM {} ORDER BY notification_id DESC LIMIT 1")
        with (
            self.datastore.get_connection() as conn,
            conn.pipeline() as pipeline,
            conn.transaction(),
            conn.cursor() as lock,
            conn.cursor() as head,
            conn.cursor() as insert,
        ):
            self._lock_table(lock)
            self._notify_channel(lock)
            head.execute(head_sql.format(self.table))
            PostgresAggregateRecorder._insert_stored_events(self, insert, stored_events)
            pipeline.sync()
            ids = [row["notification_id"] for row in insert.fetchall()]
            last = head.fetchone()
            rows = _rows(last["hash"] if last else GENESIS, ids, stored_events)
            insert.executemany(SQL("INSERT INTO {} VALUES (%s,%s,%s)").format(self.table), rows)
        return ids

    def chain(self) -> list[tuple[int, str, str]]:
        query = SQL("SELECT notification_id, digest, hash FROM {} ORDER BY 1").format(self.table)
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(query)
            return [(r["notification_id"], r["digest"], r["hash"]) for r in curs.fetchall()]


@dataclass(frozen=True)
class Break:
    """Where the chain is broken, in words a caregiver can act on."""

    notification_id: int
    problem: str  # "modified", "deleted", "reordered", "unchained"
    event: str  # e.g. "Turn.Planned v3 of 1a2b3c4d"

    def __str__(self) -> str:
        return f"event #{self.notification_id} ({self.event}) was {self.problem}"


def describe(n: Notification) -> str:
    name = n.topic.rsplit(":", 1)[-1]
    oid = n.originator_id.hex if isinstance(n.originator_id, UUID) else str(n.originator_id)
    return f"{name} v{n.originator_version} of {oid[:8]}"


def verify(
    notifications: Sequence[Notification], chain: Sequence[tuple[int, str, str]]
) -> list[Break]:
    """Check every stored event against its chain row; each break is reported once."""
    by_id = {n.id: n for n in notifications}
    chained = {nid for nid, _d, _h in chain}
    digests = {
        n.id: digest(n.originator_id, n.originator_version, n.topic, n.state) for n in notifications
    }
    where_stored = {d: nid for nid, d, _h in chain}
    breaks: list[Break] = []
    previous = GENESIS
    for nid, expected_digest, expected_hash in chain:
        n = by_id.get(nid)
        if n is None:
            breaks.append(Break(nid, "deleted", "no longer stored"))
        elif link(previous, nid, digests[nid]) != expected_hash:
            moved_from = where_stored.get(digests[nid])
            if moved_from is not None and moved_from != nid:
                breaks.append(
                    Break(nid, f"reordered (it was stored as #{moved_from})", describe(n))
                )
            elif digests[nid] != expected_digest:
                breaks.append(Break(nid, "modified", describe(n)))
            else:
                breaks.append(Break(nid, "modified (its chain link was rewritten)", describe(n)))
        previous = expected_hash
    for n in notifications:
        if n.id not in chained:
            breaks.append(Break(n.id, "added outside the journal", describe(n)))
    return sorted(breaks, key=lambda b: b.notification_id)
