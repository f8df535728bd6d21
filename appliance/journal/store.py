"""Where the journal lives: a SQLite file (the default) or a PostgreSQL URL."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit


class StoreError(Exception):
    """The store cannot be used; the message is one line."""


def default_store_path() -> Path:
    """$XDG_STATE_HOME/appliance/journal.sqlite (~/.local/state/appliance/journal.sqlite)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "appliance" / "journal.sqlite"


def store_env(store: str | None, create: bool = True) -> dict[str, str]:
    """eventsourcing environment for a store given as a path, a file: URI, a postgresql:// URL,
    or None. `create` False (readers): a missing journal is an error and nothing is written."""
    env = _postgres_env(store) if store and "://" in store else _sqlite_env(store, create)
    if not create:
        env["CREATE_TABLE"] = "n"
    return env


def _sqlite_env(store: str | None, create: bool) -> dict[str, str]:
    uri = store if store and store.startswith("file:") else None
    path = (
        Path(unquote(urlsplit(uri).path)) if uri else Path(store) if store else default_store_path()
    )
    if path.is_dir():
        raise StoreError(f"store {path} is a directory, not a journal file")
    if create and not uri:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(
                f"cannot create the journal folder {path.parent}: {e.strerror}"
            ) from None
    elif not path.exists() or not path.stat().st_size:
        raise StoreError(f"no journal at {path}")
    if path.exists() and path.stat().st_size and not _is_sqlite(path):
        raise StoreError(f"store {path} is not a SQLite journal")
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": uri or (str(path) if create else _read_only_uri(path)),
        "SQLITE_LOCK_TIMEOUT": "10",
        "APPLICATION_RECORDER_TOPIC": "appliance.journal.chain:ChainedSQLiteRecorder",
    }


def _read_only_uri(path: Path) -> str:
    """Readers open the file read-only; on read-only media (no -wal/-shm can be made beside
    it) as immutable, which is safe there because nothing can write to it either."""
    quoted = quote(str(path.resolve()))
    writable = os.access(path.parent, os.W_OK) and os.access(path, os.W_OK)
    # A file not in WAL mode (copied, or vacuumed by hand) would be switched to it on open,
    # a write; no appliance writes such a file, so reading it as immutable is safe.
    return f"file:{quoted}?mode=ro" if writable and _is_wal(path) else f"file:{quoted}?immutable=1"


def _is_wal(path: Path) -> bool:
    with path.open("rb") as f:
        header = f.read(20)
    return header[18:20] == b"\x02\x02"


def _is_sqlite(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(16) == b"SQLite format 3\x00"


def _postgres_env(url: str) -> dict[str, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise StoreError(f"unknown store {parts.scheme}://; use a file path or postgresql://")
    dbname = parts.path.lstrip("/")
    if not dbname:
        raise StoreError("a postgresql:// store needs a database name, e.g. .../appliance")
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": dbname,
        "POSTGRES_HOST": parts.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(parts.port or 5432),
        "POSTGRES_USER": unquote(parts.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(parts.password or ""),
        "POSTGRES_CONNECT_TIMEOUT": "5",
        "APPLICATION_RECORDER_TOPIC": "appliance.journal.chain:ChainedPostgresRecorder",
    }
