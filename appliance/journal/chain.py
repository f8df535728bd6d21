"""An HMAC chain over the stored events, written in the same transaction as the events.

Each stored event gets a row in `event_chain`: its notification id, a keyed digest of its
content and a link = HMAC(key, previous link + notification id + digest). The key is the device
key (`key.py`), kept outside the journal, so whoever edits the journal cannot recompute the chain.
`event_chain_keys` records from which event on which key (by its public id) chained the events:
a journal taken over by another key is a recorded, reported break, not a silent one. Rows from
before the first key record were chained unkeyed (sha256), as journals were before device keys.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import (
    PostgresAggregateRecorder,
    PostgresApplicationRecorder,
    PostgresFactory,
)
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor
from psycopg.sql import SQL, Identifier

from appliance.journal.key import key_id

GENESIS = "0" * 64
CHAIN_TABLE = "event_chain"
KEYS_TABLE = "event_chain_keys"

RawEvent = tuple[int, Any, Any, Any, Any]
"""(notification id, originator id, version, topic, state) exactly as stored, unconverted."""
ChainRow = tuple[int, str, str]
"""(notification id, digest, link)"""
Query = Callable[..., list[tuple[Any, ...]]]
"""query(sql, params=()) -> rows, as `ChainReads.query` takes them."""
KeyRow = tuple[int, str]
"""(first notification id chained with this key, key id)"""
CREATE_LOCK = int.from_bytes(hashlib.sha256(b"appliance journal tables").digest()[:8], signed=True)
"""The PostgreSQL advisory lock key held while the journal's tables are created."""


def _mac(key: bytes | None) -> Any:
    return hmac.new(key, digestmod=hashlib.sha256) if key is not None else hashlib.sha256()


def _readable(data: bytes) -> str:
    """SQLite text as stored: bytes that are not UTF-8 (a flipped byte) kept as surrogates, so a
    damaged row is read, checked and named rather than failing the whole query."""
    return data.decode("utf-8", "surrogateescape")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def oid_text(originator_id: Any) -> str:
    """The originator id as the digest covers it: SQLite's stored text as is (a flipped byte
    stays flipped), PostgreSQL's uuid in its hex form."""
    return originator_id.hex if isinstance(originator_id, UUID) else str(originator_id)


def digest(key: bytes | None, originator_id: Any, version: Any, topic: Any, state: Any) -> str:
    """Keyed digest of one stored event; state that is not bytes is hashed as text, tagged, so
    it never equals the bytes it was written as."""
    mac = _mac(key)
    if isinstance(state, memoryview):
        state = bytes(state)
    tagged = state if isinstance(state, bytes) else b"\x00text:" + _utf8(str(state))
    for part in (_utf8(oid_text(originator_id)), str(version).encode(), _utf8(str(topic))):
        mac.update(len(part).to_bytes(8, "big"))
        mac.update(part)
    mac.update(len(tagged).to_bytes(8, "big"))
    mac.update(tagged)
    return str(mac.hexdigest())


def link(key: bytes | None, previous: str, notification_id: int, content_digest: str) -> str:
    mac = _mac(key)
    mac.update(f"{previous}:{notification_id}:{content_digest}".encode())
    return str(mac.hexdigest())


def _rows(
    key: bytes, previous: str, ids: Sequence[int], events: Sequence[StoredEvent]
) -> list[ChainRow]:
    rows = []
    for nid, e in zip(ids, events, strict=True):
        d = digest(key, e.originator_id, e.originator_version, e.topic, e.state)
        previous = link(key, previous, nid, d)
        rows.append((nid, d, previous))
    return rows


class ChainReads:
    """What verification and the settings read, as stored (no conversion that could fail)."""

    events_table_name: str
    keys_table: str

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def has_table(self, name: str) -> bool:
        raise NotImplementedError

    def consistent(self) -> Any:
        """A context giving a `Query` whose reads all see one moment of the store, whatever
        other processes commit meanwhile."""
        raise NotImplementedError

    def raw_events(self, originator_id: UUID | None = None) -> list[RawEvent]:
        sql = (
            "SELECT rowid, originator_id, originator_version, topic, state "
            f"FROM {self.events_table_name}"
        )
        if originator_id is None:
            rows = self.query(sql + " ORDER BY rowid")
        else:
            rows = self.query(
                sql + " WHERE originator_id=? ORDER BY originator_version",
                (oid_text(originator_id),),
            )
        return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def raw_events_after(self, nid: int) -> list[RawEvent]:
        rows = self.query(
            "SELECT rowid, originator_id, originator_version, topic, state "
            f"FROM {self.events_table_name} WHERE rowid>? ORDER BY rowid",
            (nid,),
        )
        return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def chain(self) -> list[ChainRow]:
        rows = self.query(f"SELECT notification_id, digest, hash FROM {CHAIN_TABLE} ORDER BY 1")
        return [(r[0], r[1], r[2]) for r in rows]

    def chain_digests(self, ids: Sequence[int]) -> dict[int, str]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.query(
            f"SELECT notification_id, digest FROM {CHAIN_TABLE} WHERE notification_id IN ({marks})",
            list(ids),
        )
        return {r[0]: r[1] for r in rows}

    def chain_keys(self) -> list[KeyRow]:
        if not self.has_table(self.keys_table):
            return []
        rows = self.query(f"SELECT since, key_id FROM {KEYS_TABLE} ORDER BY 1")
        return [(r[0], r[1]) for r in rows]

    def head(self) -> tuple[int, int, str]:
        """(count, last notification id, last link) of the chain."""
        count = self.query(f"SELECT count(*) FROM {CHAIN_TABLE}")[0][0]
        last = self.query(
            f"SELECT notification_id, hash FROM {CHAIN_TABLE} ORDER BY 1 DESC LIMIT 1"
        )
        return (int(count), last[0][0], last[0][1]) if last else (0, 0, GENESIS)

    def raw_snapshots(self, table: str) -> list[tuple[Any, ...]]:
        if not self.has_table(table):
            return []
        return self.query(f"SELECT originator_id, originator_version, topic, state FROM {table}")

    def file_problems(self) -> list[str]:
        """Damage the database itself reports (SQLite); PostgreSQL checks its own pages."""
        return []


class ChainedSQLiteRecorder(ChainReads, SQLiteApplicationRecorder):
    key: bytes | None = None  # set by the Journal before anything is written

    def construct_create_table_statements(self) -> list[str]:
        return [
            *super().construct_create_table_statements(),
            f"CREATE TABLE IF NOT EXISTS {CHAIN_TABLE} (notification_id INTEGER PRIMARY KEY, "
            "digest TEXT NOT NULL, hash TEXT NOT NULL)",
            f"CREATE TABLE IF NOT EXISTS {KEYS_TABLE} (since INTEGER PRIMARY KEY, "
            "key_id TEXT NOT NULL)",
        ]

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        with self.datastore.get_connection(commit=True) as conn:
            # WAL + synchronous=FULL: a commit is on the disk before it is acknowledged, so a
            # power cut keeps every turn another process has seen committed (NORMAL lost the
            # last one in the booted-VM test, tests/vm/test_device_vm.py). Turns come at a
            # person's pace, so an fsync per commit costs the SD card little.
            conn.cursor().execute("PRAGMA synchronous=FULL")
            with conn.transaction(commit=True) as c:
                return self._insert_events(c, stored_events, **kwargs)

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        if not stored_events:
            return []
        if self.key is None:
            raise RuntimeError("the journal was opened for reading only")
        # The insert comes first, as in eventsourcing: it takes the write lock, so the chain
        # head read next is the one this transaction extends, whatever other writers do.
        ids = list(super()._insert_events(c, stored_events, **kwargs) or [])
        c.execute(f"SELECT notification_id, hash FROM {CHAIN_TABLE} ORDER BY 1 DESC LIMIT 1")
        head = c.fetchone()
        if head and ids[0] <= head[0]:
            # SQLite reused the ids of deleted last events, which the chain still holds:
            # move the new events after them, so the chain goes on past the (reported) gap.
            shift = head[0] + 1 - ids[0]
            for nid in reversed(ids):
                c.execute(
                    f"UPDATE {self.events_table_name} SET rowid=? WHERE rowid=?", (nid + shift, nid)
                )
            ids = [nid + shift for nid in ids]
        first = ids[0]
        c.execute(f"SELECT key_id FROM {KEYS_TABLE} ORDER BY since DESC LIMIT 1")
        recorded = c.fetchone()
        if recorded is None or recorded[0] != key_id(self.key):
            c.execute(f"INSERT INTO {KEYS_TABLE} VALUES (?,?)", (first, key_id(self.key)))
        rows = _rows(self.key, head[1] if head else GENESIS, ids, stored_events)
        c.executemany(f"INSERT INTO {CHAIN_TABLE} VALUES (?,?,?)", rows)
        return ids

    keys_table = KEYS_TABLE

    def rewrite_states(self, rows: Sequence[tuple[bytes, int]]) -> None:
        """(new state, notification id): retention's redactions, in one transaction."""
        with self.datastore.transaction(commit=True) as c:
            c.executemany(f"UPDATE {self.events_table_name} SET state=? WHERE rowid=?", rows)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows as stored; names in `sql` are SQLite's (`stored_events`, `rowid`)."""
        with self.datastore.transaction(commit=False) as c:
            c.sqlite_cursor.connection.text_factory = _readable
            c.execute(sql, params)
            return [tuple(r) for r in c.fetchall()]

    def has_table(self, name: str) -> bool:
        found = self.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,))
        return bool(found)

    @contextmanager
    def consistent(self) -> Iterator[Query]:
        # eventsourcing's transaction starts with BEGIN: in WAL mode every read after the first
        # sees the same snapshot.
        with self.datastore.transaction(commit=False) as c:
            c.sqlite_cursor.connection.text_factory = _readable

            def query(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
                c.execute(sql, params)
                return [tuple(r) for r in c.fetchall()]

            yield query

    def file_problems(self) -> list[str]:
        """SQLite's own check of every page and index (an index can break while the rows
        read fine, and then fail a later write)."""
        rows = self.query("PRAGMA quick_check(5)")
        lines = [line for r in rows for line in str(r[0]).splitlines()]
        return [line for line in lines if line != "ok" and not line.startswith("***")]


def created_alone(recorder: PostgresAggregateRecorder, create: Any) -> None:
    """Create a recorder's tables, types and functions one process at a time: run at once,
    CREATE ... IF NOT EXISTS and CREATE OR REPLACE race in the catalogue ("tuple concurrently
    updated", duplicate keys in pg_type) and some of the openers fail."""
    with recorder.datastore.get_connection() as conn:  # autocommit: a session-level lock
        conn.execute("SELECT pg_advisory_lock(%s)", (CREATE_LOCK,))
        try:
            create()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (CREATE_LOCK,))


class SnapshotsPostgresRecorder(PostgresAggregateRecorder):
    """The snapshots table, created under the same lock as the events and their chain."""

    def create_table(self) -> None:
        created_alone(self, super().create_table)


class JournalPostgresFactory(PostgresFactory):
    """eventsourcing's PostgreSQL factory with the snapshots recorder above (the events recorder
    comes from APPLICATION_RECORDER_TOPIC)."""

    aggregate_recorder_class = SnapshotsPostgresRecorder


class ChainedPostgresRecorder(ChainReads, PostgresApplicationRecorder):
    key: bytes | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.chain_table = f"{self.events_table_name}_chain"
        self.keys_table = f"{self.events_table_name}_chain_keys"
        self.table = Identifier(self.datastore.schema, self.chain_table)
        self.keys = Identifier(self.datastore.schema, self.keys_table)
        self.sql_create_statements.append(
            SQL(
                "CREATE TABLE IF NOT EXISTS {} (notification_id bigint PRIMARY KEY, "
                "digest text NOT NULL, hash text NOT NULL)"
            ).format(self.table)
        )
        self.sql_create_statements.append(
            SQL(
                "CREATE TABLE IF NOT EXISTS {} (since bigint PRIMARY KEY, key_id text NOT NULL)"
            ).format(self.keys)
        )

    def create_table(self) -> None:
        created_alone(self, super().create_table)

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """Events and their chain rows in one transaction, in two round trips (a pipeline).

        The table lock (taken first, as eventsourcing does) keeps the chain's order equal to
        the commit order; the chain head is read under that lock.
        """
        if not stored_events:
            return []
        if self.key is None:
            raise RuntimeError("the journal was opened for reading only")
        head_sql = SQL("SELECT hash FROM {} ORDER BY notification_id DESC LIMIT 1")
        key_sql = SQL("SELECT key_id FROM {} ORDER BY since DESC LIMIT 1")
        with (
            self.datastore.get_connection() as conn,
            conn.pipeline() as pipeline,
            conn.transaction(),
            conn.cursor() as lock,
            conn.cursor() as head,
            conn.cursor() as recorded_key,
            conn.cursor() as insert,
        ):
            self._lock_table(lock)
            self._notify_channel(lock)
            head.execute(head_sql.format(self.table))
            recorded_key.execute(key_sql.format(self.keys))
            PostgresAggregateRecorder._insert_stored_events(self, insert, stored_events)
            pipeline.sync()
            ids = [row["notification_id"] for row in insert.fetchall()]
            last = head.fetchone()
            recorded = recorded_key.fetchone()
            if recorded is None or recorded["key_id"] != key_id(self.key):
                insert.execute(
                    SQL("INSERT INTO {} VALUES (%s,%s)").format(self.keys),
                    (ids[0], key_id(self.key)),
                )
            rows = _rows(self.key, last["hash"] if last else GENESIS, ids, stored_events)
            insert.executemany(SQL("INSERT INTO {} VALUES (%s,%s,%s)").format(self.table), rows)
        return ids

    def rewrite_states(self, rows: Sequence[tuple[bytes, int]]) -> None:
        """(new state, notification id): retention's redactions, in one transaction."""
        with self.datastore.transaction(commit=True) as curs:
            curs.executemany(
                SQL("UPDATE {} SET state=%s WHERE notification_id=%s").format(
                    Identifier(self.datastore.schema, self.events_table_name)), rows)

    def _translated(self, sql: str) -> str:
        return (
            sql.replace("?", "%s")
            .replace("rowid", "notification_id")
            .replace(KEYS_TABLE, f'"{self.datastore.schema}"."{self.keys_table}"')
            .replace(CHAIN_TABLE, f'"{self.datastore.schema}"."{self.chain_table}"')
            .replace("stored_events", self.events_table_name)
        )

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows as stored; `sql` is written for SQLite and translated (tables, rowid, ?)."""
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(self._translated(sql), params)
            return [tuple(r.values()) for r in curs.fetchall()] if curs.description else []

    @contextmanager
    def consistent(self) -> Iterator[Query]:
        with self.datastore.get_connection() as conn, conn.transaction(), conn.cursor() as curs:
            curs.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")

            def query(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
                curs.execute(self._translated(sql), params)
                return [tuple(r.values()) for r in curs.fetchall()] if curs.description else []

            yield query

    def has_table(self, name: str) -> bool:
        table = name.split(".")[-1]
        found = self.query(
            "SELECT 1 FROM information_schema.tables WHERE table_schema=? AND table_name=?",
            (self.datastore.schema, table),
        )
        return bool(found)
