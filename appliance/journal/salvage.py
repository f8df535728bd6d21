"""A SQLite journal file damaged past serving: telling it, setting it aside, reading what is left.

SQLite says a damaged page is SQLITE_CORRUPT ("database disk image is malformed") or
SQLITE_NOTADB ("file is not a database"); every read that crosses the page then fails, and so
would every turn. The file is then set aside read-only beside where it was, under a new name, and
a fresh journal takes its place (`appliance/journal/serving.py`); what can still be read of the
old one is copied, page by page around the damage, for the caregiver's `audit` and `verify`.
A PostgreSQL store is never set aside: the server checks its own pages.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from appliance.journal.aggregates import EPOCH_ID, SETTINGS_ID
from appliance.journal.key import load_key
from appliance.journal.store import (
    StoreError,
    default_store_path,
    first_line,
    journal_identity,
    store_env,
)
from appliance.journal.witness import ForeignWitness, forget_witness, read_witness

SQLITE_CORRUPT = 11
SQLITE_NOTADB = 26
DAMAGE_WORDS = ("database disk image is malformed", "file is not a database")
TAIL = 240  # as many events as a turn reads back (application.RECENT_EVENTS)
EVENTS, CHAIN, KEYS, SNAPSHOTS = "stored_events", "event_chain", "event_chain_keys", (
    "stored_snapshots"
)
# The tables as eventsourcing 9.5 and chain.py make them, for a copy whose original schema
# cannot be read.
SCHEMA = (
    f"CREATE TABLE {EVENTS} (originator_id TEXT, originator_version INTEGER, topic TEXT, "
    "state BLOB, PRIMARY KEY (originator_id, originator_version))",
    f"CREATE TABLE {CHAIN} (notification_id INTEGER PRIMARY KEY, digest TEXT NOT NULL, "
    "hash TEXT NOT NULL)",
    f"CREATE TABLE {KEYS} (since INTEGER PRIMARY KEY, key_id TEXT NOT NULL)",
    f"CREATE TABLE {SNAPSHOTS} (originator_id TEXT, originator_version INTEGER, topic TEXT, "
    "state BLOB, PRIMARY KEY (originator_id, originator_version)) WITHOUT ROWID",
)
EXACT_LOOKUPS = 200_000  # ids looked up one by one across one damaged stretch, at most
BEYOND_END = 4096  # ids in a row with no event, looked up one by one: past the end

FileId = tuple[int, int]
"""(device, inode) of a journal file: which file a long-running process has open."""


# -- telling damage ------------------------------------------------------------------------


def is_damage(error: BaseException) -> bool:
    """SQLite found the file damaged (SQLITE_CORRUPT, SQLITE_NOTADB), anywhere in the error's
    chain or in its words (a StoreError keeps only SQLite's first line)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = getattr(current, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in (SQLITE_CORRUPT, SQLITE_NOTADB):
            return True
        if mentions_damage(str(current)):
            return True
        current = current.__cause__ or current.__context__
    return False


def mentions_damage(text: str) -> bool:
    """Words of SQLite's that say a page is damaged (in an error or a notice)."""
    return any(word in text for word in DAMAGE_WORDS)


def damage_words(error: BaseException) -> str:
    """SQLite's words for the damage, without what the error says around them."""
    text = first_line(error)
    return next((word for word in DAMAGE_WORDS if word in text), text)


def sqlite_file(store: str | None) -> Path | None:
    """The SQLite file a store names (None: the default one), or None for PostgreSQL and for
    a `file:` URI (read-only media and the like: never set aside)."""
    if store is not None and (store.startswith("file:") or "://" in store):
        return None
    return Path(store) if store is not None else default_store_path()


def file_id(path: Path) -> FileId | None:
    """Which file is at `path` now; None when there is none."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


# -- the cheap check at open ---------------------------------------------------------------


def probe(path: Path) -> str | None:
    """SQLite's words for the damage that would stop a turn, or None when the pages a turn
    reads can be read (or the file is no journal: opening it says so).

    Cheap, unlike `PRAGMA quick_check`: each table's and the events index's pages counted
    (what the live trust check walks), the last events and chain rows whole, and the
    settings' and epoch's events (what every turn reads)."""
    try:
        uri = store_env(str(path), create=False)["SQLITE_DBNAME"]
    except StoreError:
        return None
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=10)
    except sqlite3.Error as e:
        return first_line(e) if is_damage(e) else None
    conn.text_factory = bytes  # a flipped byte in a text is the chain's to name, not the file's
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for sql, params in _probes(tables):
            conn.execute(sql, params).fetchall()
    except sqlite3.Error as e:
        return first_line(e) if is_damage(e) else None
    finally:
        conn.close()
    return None


def _probes(tables: set[bytes]) -> Iterator[tuple[str, Sequence[Any]]]:
    if EVENTS.encode() in tables:
        yield f"SELECT count(*) FROM {EVENTS} NOT INDEXED", ()
        yield f"SELECT count(*) FROM {EVENTS}", ()  # SQLite counts on the smaller index
        yield (
            "SELECT rowid, originator_id, originator_version, topic, state "
            f"FROM {EVENTS} ORDER BY rowid DESC LIMIT {TAIL}",
            (),
        )
        yield (
            f"SELECT topic, state FROM {EVENTS} WHERE originator_id IN (?, ?)",
            (SETTINGS_ID.hex, EPOCH_ID.hex),
        )
    if CHAIN.encode() in tables:
        yield f"SELECT count(*) FROM {CHAIN}", ()
        yield f"SELECT * FROM {CHAIN} ORDER BY 1 DESC LIMIT {TAIL}", ()
    for table in (KEYS, SNAPSHOTS):
        if table.encode() in tables:
            yield f"SELECT count(*) FROM {table}", ()


# -- setting it aside ----------------------------------------------------------------------


def old_head(path: Path) -> str:
    """The damaged file's head (NID:HASH16) read from it if it can be, else from the device's
    witness of it (where this device last checked it), else ""."""
    try:
        with _damaged_reader(_uri(path)) as conn:
            last = conn.execute(
                f"SELECT notification_id, hash FROM {CHAIN} ORDER BY 1 DESC LIMIT 1"
            ).fetchall()
        if last:
            return f"{int(last[0][0])}:{str(last[0][1])[:16]}"
    except (sqlite3.Error, ValueError, TypeError):
        pass
    key = load_key(create=False)
    if key is None:
        return ""
    try:
        witness = read_witness(_identity(path), key)
    except ForeignWitness:
        return ""
    return f"{witness.notification_id}:{witness.link[:16]}" if witness else ""


def aside_name(path: Path, at: datetime | None = None) -> Path:
    """`journal.sqlite.damaged-20261201T171500` beside it (local time), never an existing name."""
    stamp = f"{(at or datetime.now()).astimezone():%Y%m%dT%H%M%S}"
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    return target


def moved_aside(path: Path, to: Path | None = None, replacement: Path | None = None) -> Path:
    """Set the damaged journal at `path` (with its -wal and -shm) aside as `to`, read-only, and
    forget the device's witness of `path`; with `replacement`, that file takes its place in the
    same step, so no other process finds no journal there. Returns where the old one now is.
    Raises OSError."""
    to = to or aside_name(path)
    _checkpoint(path)
    for suffix in ("-wal", "-shm"):  # before the file: the fresh one must not take them over
        side = Path(f"{path}{suffix}")
        if side.exists():
            side.rename(f"{to}{suffix}")
    if replacement is None:
        path.rename(to)
    else:
        try:
            os.link(path, to)  # the old file under its new name first...
        except OSError:  # a file system without hard links: a moment with no journal there
            path.rename(to)
        replacement.replace(path)  # ...then the fresh one over the old name, in one step
    for moved in (to, Path(f"{to}-wal"), Path(f"{to}-shm")):
        with suppress(OSError):
            moved.chmod(0o444)
    forget_witness(_identity(path))
    return to


def _checkpoint(path: Path) -> None:
    """What the write-ahead log holds, into the file, so a read-only reader of the set-aside
    file sees it too (a reader opens it immutable, without the log); best effort."""
    with suppress(sqlite3.Error), _closing(sqlite3.connect(path, timeout=2)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@contextmanager
def _closing(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    try:
        yield conn
    finally:
        conn.close()


@contextmanager
def exclusive(folder: Path) -> Iterator[None]:
    """One process at a time sets a journal of `folder` aside (the folder itself is locked,
    so no lock file is left beside the journal)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _identity(path: Path) -> str:
    return journal_identity({"SQLITE_DBNAME": str(path)})


def _uri(path: Path) -> str:
    """Read-only; immutable when the file cannot be written (a set-aside file is read-only)."""
    writable = os.access(path.parent, os.W_OK) and os.access(path, os.W_OK)
    return f"file:{quote(str(path.resolve()))}?{'mode=ro' if writable else 'immutable=1'}"


@contextmanager
def _damaged_reader(uri: str) -> Iterator[sqlite3.Connection]:
    """A read-only connection that reads on past a file cut short (SQLite otherwise refuses a
    file smaller than its header says, before reading any table)."""
    conn = sqlite3.connect(uri, uri=True, timeout=10)
    try:
        conn.text_factory = _text
        conn.execute("PRAGMA writable_schema=ON")  # only this check is relaxed; nothing is written
        conn.execute("PRAGMA cell_size_check=ON")  # a damaged cell is an error, not a wrong row
        yield conn
    finally:
        conn.close()


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


# -- reading what is left ------------------------------------------------------------------


@dataclass
class Lost:
    """What could not be read of one table: ids known lost, and from where on nothing could."""

    ids: list[int] = field(default_factory=list)
    after: int | None = None  # nothing after this id could be read (None: read to its end)


@dataclass
class Salvage:
    """What was copied out of a damaged journal file, and what could not be."""

    damage: str
    events: int = 0
    lost: Lost = field(default_factory=Lost)
    chain_lost: Lost = field(default_factory=Lost)
    unreadable: bool = False  # not even the list of tables could be read

    def summary(self) -> str:
        """One line: how many events could not be read, and which."""
        if self.unreadable:
            return f"the journal file is damaged ({self.damage}): none of it can be read"
        parts = []
        if self.lost.ids:
            ids = self.lost.ids
            parts.append(f"{_events(len(ids))} could not be read ({_spans(ids)})")
        if self.lost.after is not None:
            parts.append(
                "no event could be read" if not self.lost.after and not self.events
                else f"no event after #{self.lost.after} could be read"
            )
        chain = self.chain_lost
        if chain.ids:
            parts.append(f"the chain's links of {_spans(chain.ids)} could not be read")
        if chain.after is not None:
            parts.append(f"no link of the chain after #{chain.after} could be read, so the "
                         "events after it cannot be checked")
        read = f"{_events(self.events)} read"
        lost = "; ".join(parts) if parts else "every event could still be read"
        return f"the journal file is damaged ({self.damage}): {read}; {lost}"


def _events(n: int) -> str:
    return "1 event" if n == 1 else f"{n} events"


def _spans(ids: list[int]) -> str:
    spans: list[str] = []
    start = prev = ids[0]
    for nid in [*ids[1:], None]:
        if nid is not None and nid == prev + 1:
            prev = nid
            continue
        spans.append(f"#{start}" if start == prev else f"#{start}-#{prev}")
        if nid is not None:
            start = prev = nid
    more = f" and {len(spans) - 5} more stretches" if len(spans) > 5 else ""
    return ", ".join(spans[:5]) + more


def read_what_is_left(path: Path, into: Path, damage: str) -> Salvage:
    """Copy every event and chain row of the damaged journal at `path` that can still be read
    into a new SQLite file `into` (same tables and ids; snapshots left out, being only
    shortcuts), reading around the damaged pages."""
    salvage = Salvage(damage)
    scratch = into.parent
    source = _readable_source(path, scratch)
    with _closing(sqlite3.connect(into)) as out:
        try:
            with _damaged_reader(source) as conn:
                statements, present = _schema(conn)
                for sql in statements:
                    out.execute(sql)
                salvage.unreadable = not present
                if EVENTS in present:
                    salvage.events, salvage.lost = _copy(
                        conn, out, EVENTS, "rowid",
                        ("originator_id", "originator_version", "topic", "state"))
                if CHAIN in present:
                    _, salvage.chain_lost = _copy(
                        conn, out, CHAIN, "notification_id", ("digest", "hash"))
                if KEYS in present:
                    _copy(conn, out, KEYS, "since", ("key_id",))
        except sqlite3.Error:  # not even opened: the copy is left with no tables
            salvage.unreadable = True
        finally:
            out.commit()
        if salvage.unreadable:  # a journal with no events, to be opened like any other
            for sql in SCHEMA:
                out.execute(sql.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
            out.commit()
    return salvage


def _readable_source(path: Path, scratch: Path) -> str:
    """A URI to read `path` by; with a write-ahead log beside it that still holds pages, a copy
    of both (an immutable read would leave the log out, and a read-only file cannot replay it)."""
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size:
        copy = scratch / "source.sqlite"
        shutil.copyfile(path, copy)
        shutil.copyfile(wal, f"{copy}-wal")
        return f"file:{quote(str(copy))}"
    return _uri(path)


def _schema(conn: sqlite3.Connection) -> tuple[list[str], set[str]]:
    """The journal's own CREATE TABLE statements (SCHEMA's for those it lacks), and the names
    of its tables; no names when its schema cannot be read."""
    try:
        rows = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='table' AND sql IS NOT NULL"
        ).fetchall()
    except sqlite3.Error:
        return [], set()
    found = {str(name): str(sql) for name, sql in rows}
    tables = (EVENTS, CHAIN, KEYS, SNAPSHOTS)
    return [found.get(t, SCHEMA[i]) for i, t in enumerate(tables)], set(found) & set(tables)


def _copy(
    conn: sqlite3.Connection, out: sqlite3.Connection, table: str, key: str,
    columns: tuple[str, ...],
) -> tuple[int, Lost]:
    """Rows of `table` in `key` order into `out`, around what cannot be read."""
    names = ", ".join((key, *columns))
    marks = ", ".join("?" * (1 + len(columns)))
    insert = f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})"
    lost = Lost()
    copied = highest = after = 0

    def keep(rows: list[tuple[Any, ...]]) -> None:
        nonlocal copied, highest
        out.executemany(insert, rows)
        copied += len(rows)
        highest = max([highest, *(int(r[0]) for r in rows)])

    while True:
        rows, whole = _rows_until_damage(
            conn, f"SELECT {names} FROM {table} WHERE {key}>? ORDER BY {key}", (after,))
        keep(rows)
        after = int(rows[-1][0]) if rows else after
        if whole:
            break
        following = _ids_after(conn, table, key, after)
        if following:  # its id reads, its content does not (a damaged cell or overflow page)
            if following[0] > after + 1:  # a damaged cell's id can be garbage: look behind it
                found, _missing = _one_by_one(conn, names, table, key, after, following[0] - 1)
                keep(found)
            lost.ids.append(following[0])
            after = following[0]
            continue
        resume = None if following is not None else _resume(conn, table, key, after)
        if resume is None:
            lost.after = None if following is not None else after
            break
        found, missing = _one_by_one(conn, names, table, key, after, resume)
        keep(found)
        lost.ids.extend(missing)
        after = resume
    # A damaged cell's garbage id, far past every event read, is no event that was lost.
    lost.ids = sorted({nid for nid in lost.ids if nid <= highest + BEYOND_END})
    if lost.after is not None and lost.ids and lost.ids[-1] == lost.after:
        lost.ids.pop()  # the first it could not read: "none after" the one before says it
        lost.after = highest
    return copied, lost


def _rows_until_damage(
    conn: sqlite3.Connection, sql: str, params: Sequence[Any]
) -> tuple[list[tuple[Any, ...]], bool]:
    """The rows read before the first that cannot be, and whether all were read."""
    rows: list[tuple[Any, ...]] = []
    try:
        for row in conn.execute(sql, params):
            rows.append(tuple(row))
    except sqlite3.Error:
        return rows, False
    return rows, True


def _ids_after(conn: sqlite3.Connection, table: str, key: str, after: int) -> list[int] | None:
    """The next id after `after` ([] at the end), or None when even that cannot be read."""
    return _try(conn, f"SELECT {key} FROM {table} WHERE {key}>? ORDER BY {key} LIMIT 1", (after,))


def _try(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[int] | None:
    try:
        return [int(r[0]) for r in conn.execute(sql, params).fetchall()]
    except sqlite3.Error:
        return None


def _resume(conn: sqlite3.Connection, table: str, key: str, after: int) -> int | None:
    """The lowest id past `after` from which a seek reads again, found by galloping and
    bisecting (a damaged interior page hides a whole stretch of ids); None when none does
    (the file is cut short, or its last pages are damaged)."""

    def readable(at: int) -> bool:
        return _ids_after(conn, table, key, at) is not None

    step, bad = 1, after
    while not readable(after + step):
        bad = after + step
        step *= 2
        if after + step >= 1 << 62:
            return None
    good = after + step
    while good - bad > 1:
        middle = (good + bad) // 2
        if readable(middle):
            good = middle
        else:
            bad = middle
    return good


def _one_by_one(
    conn: sqlite3.Connection, names: str, table: str, key: str, after: int, upto: int
) -> tuple[list[tuple[Any, ...]], list[int]]:
    """Each id in (after, upto] looked up alone: the rows that read, and the ids that do not."""
    found: list[tuple[Any, ...]] = []
    missing: list[int] = []
    empty = 0
    sql = f"SELECT {names} FROM {table} WHERE {key}=?"
    for nid in range(after + 1, min(upto, after + EXACT_LOOKUPS) + 1):
        try:
            rows = conn.execute(sql, (nid,)).fetchall()
        except sqlite3.Error:
            missing.append(nid)
            empty = 0
            continue
        found.extend(tuple(r) for r in rows)
        empty = 0 if rows else empty + 1
        if empty >= BEYOND_END:
            break
    return found, missing
