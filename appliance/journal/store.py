"""Where the journal lives: a SQLite file (the default) or a PostgreSQL URL."""

from __future__ import annotations

import errno
import hashlib
import os
import resource
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from urllib.parse import SplitResult, quote, unquote, urlsplit


class StoreError(Exception):
    """The store cannot be used; the message is one line."""


class NoJournal(StoreError):
    """A reader found no journal where it was pointed (and created none)."""


def default_store_path() -> Path:
    """$XDG_STATE_HOME/appliance/journal.sqlite (~/.local/state/appliance/journal.sqlite)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "appliance" / "journal.sqlite"


def voice_profile_path(store: str | None) -> Path:
    """Where the person's voice profile (appliance/voice/hearing/profile.py) is kept: its own
    file beside a SQLite journal, never in it; for PostgreSQL, in the default journal's folder."""
    if store and "://" not in store:
        journal = Path(store.removeprefix("file:")).resolve()
        return journal.with_name(f"{journal.stem}.voice.sqlite")
    if not store:
        journal = default_store_path()
        return journal.with_name(f"{journal.stem}.voice.sqlite")
    name = hashlib.sha256(store.encode()).hexdigest()[:24]
    return default_store_path().parent / f"voice-{name}.sqlite"


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
        raise NoJournal(f"no journal at {path}")
    if path.exists() and path.stat().st_size and not _is_sqlite(path):
        raise StoreError(f"store {path} is not a SQLite journal")
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": uri or (str(path) if create else _read_only_uri(path)),
        "SQLITE_LOCK_TIMEOUT": "10",
        "APPLICATION_RECORDER_TOPIC": "appliance.journal.chain:ChainedSQLiteRecorder",
        "MAPPER_TOPIC": MAPPER_TOPIC,
    }


def journal_identity(env: Mapping[str, str]) -> str:
    """Where the journal lives, as one string: names the device's witness of its head."""
    name = env.get("SQLITE_DBNAME")
    if name is not None:
        path = unquote(urlsplit(name).path) if name.startswith("file:") else name
        return f"sqlite:{Path(path).resolve()}"
    return (
        f"postgresql://{env['POSTGRES_HOST']}:{env['POSTGRES_PORT']}/{env['POSTGRES_DBNAME']}"
    )


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


def _split_postgres_url(url: str) -> SplitResult:
    """The URL's parts; a URL that cannot be read (postgresql://[bad) is a StoreError."""
    try:
        return urlsplit(url)
    except ValueError as e:
        raise StoreError(f"cannot read the store URL {_shown_url(url)}: {e}") from None


def _port(parts: SplitResult, url: str) -> int:
    try:
        return parts.port or 5432
    except ValueError:  # :99999, :abc
        raise StoreError(f"the store URL {_shown_url(url)} has no valid port") from None


def _shown_url(url: str) -> str:
    """The URL for an error message, without its password."""
    scheme, _, rest = url.partition("://")
    if "@" in rest:
        rest = rest[rest.rindex("@") + 1 :]
    return f"{scheme}://{rest}"


POSTGRES_FACTORY = "appliance.journal.chain:JournalPostgresFactory"
MAPPER_TOPIC = "appliance.journal.topics:JournalMapper"  # stored topics from an allowlist only


def _postgres_env(url: str) -> dict[str, str]:
    parts = _split_postgres_url(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise StoreError(f"unknown store {parts.scheme}://; use a file path or postgresql://")
    dbname = parts.path.lstrip("/")
    if not dbname:
        raise StoreError("a postgresql:// store needs a database name, e.g. .../appliance")
    return {
        "PERSISTENCE_MODULE": POSTGRES_FACTORY,
        "POSTGRES_DBNAME": dbname,
        "POSTGRES_HOST": parts.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(_port(parts, url)),
        "POSTGRES_USER": unquote(parts.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(parts.password or ""),
        "POSTGRES_CONNECT_TIMEOUT": "5",
        # One connection held per process, more only while busy: eventsourcing's default keeps
        # five open, and forty devices of a care home would then fill a server's 100 slots.
        "POSTGRES_POOL_SIZE": "1",
        "POSTGRES_MAX_OVERFLOW": "3",
        "APPLICATION_RECORDER_TOPIC": "appliance.journal.chain:ChainedPostgresRecorder",
        "MAPPER_TOPIC": MAPPER_TOPIC,
    }


# -- what went wrong, in one accurate line ----------------------------------------------------

_DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_SQLITE_FULL = 13  # SQLITE_FULL: "database or disk is full"
_SQLITE_IOERR = 10  # SQLITE_IOERR (and its extended codes): what a failed write() becomes
ROOM_NEEDED = 64 * 1024
"""Less free space than this next to a SQLite journal that failed with an I/O error: full."""


def store_failure(doing: str, error: BaseException, env: Mapping[str, str]) -> str:
    """Why opening or writing (`doing`) the store failed, as the user can act on it: a full disk
    is not "cannot open", and a missing PostgreSQL database is not a connection timeout."""
    if "SQLITE_DBNAME" in env:
        space = sqlite_space_problem(error, Path(env["SQLITE_DBNAME"]))
        if space:
            return f"cannot {doing} the journal: {space}"
    if env.get("PERSISTENCE_MODULE") == POSTGRES_FACTORY:
        reason = postgres_refusal(env)
        if reason:
            return f"cannot {doing} the journal store: {reason}"
    return f"cannot {doing} the journal store: {first_line(error)}"


def sqlite_space_problem(error: BaseException, path: Path) -> str | None:
    """"the disk ... is full" or "... file-size limit" when that is why SQLite failed, else None.

    SQLite says "database or disk is full" only when write() reports ENOSPC; a write refused
    part-way (the WAL's shared memory on a full tmpfs, a file-size limit) is "disk I/O error",
    so the space left and the limit are looked at too."""
    codes = set(_chain_codes(error))
    full = bool(codes & {"ENOSPC", "SQLITE_FULL"})
    if not full and "SQLITE_IOERR" not in codes:
        return None
    if full or _free_bytes(path.parent) < ROOM_NEEDED:
        return f"the disk holding {path} is full; free some space"
    soft, _hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft != resource.RLIM_INFINITY and _largest_file(path) + ROOM_NEEDED > soft:
        return f"the journal {path} has reached this process's file-size limit ({soft} bytes)"
    if "EFBIG" in codes:
        return f"the journal {path} is too large for its file system"
    return None


def _chain_codes(error: BaseException) -> list[str]:
    """ENOSPC, EFBIG, SQLITE_FULL, SQLITE_IOERR found anywhere in the exception's chain."""
    found: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _DISK_FULL_ERRNOS:
            found.append("ENOSPC")
        if isinstance(current, OSError) and current.errno == errno.EFBIG:
            found.append("EFBIG")
        code = getattr(current, "sqlite_errorcode", None)
        text = str(current)
        if code == _SQLITE_FULL or "database or disk is full" in text:
            found.append("SQLITE_FULL")
        if (isinstance(code, int) and code & 0xFF == _SQLITE_IOERR) or "disk I/O error" in text:
            found.append("SQLITE_IOERR")
        current = current.__cause__ or current.__context__
    return found


def _free_bytes(folder: Path) -> int:
    try:
        stat = os.statvfs(folder)
    except OSError:
        return ROOM_NEEDED  # cannot tell: do not claim the disk is full
    return stat.f_bavail * stat.f_frsize


def _largest_file(path: Path) -> int:
    """The size of the journal or its write-ahead log, whichever is larger."""
    sizes = [0]
    for suffix in ("", "-wal", "-journal"):
        with suppress(OSError):
            sizes.append(Path(f"{path}{suffix}").stat().st_size)
    return max(sizes)


def postgres_refusal(env: Mapping[str, str], timeout_s: int = 3) -> str | None:
    """What the PostgreSQL server itself says to a direct connection (no pool to hide it behind
    a timeout), in words; None when it accepts the connection."""
    import psycopg

    host, port, dbname = env["POSTGRES_HOST"], env["POSTGRES_PORT"], env["POSTGRES_DBNAME"]
    try:
        with psycopg.connect(
            host=host,
            port=int(port),
            dbname=dbname,
            user=env["POSTGRES_USER"],
            password=env["POSTGRES_PASSWORD"],
            connect_timeout=timeout_s,
        ):
            return None
    except psycopg.Error as e:
        text = first_line(e)
    if f'database "{dbname}" does not exist' in text:
        return (
            f"the PostgreSQL database {dbname!r} does not exist on {host}:{port}; "
            f"create it (createdb {dbname}) or correct the URL"
        )
    if "password authentication failed" in text or "no password supplied" in text:
        return f"PostgreSQL at {host}:{port} refused the login of {env['POSTGRES_USER']!r}"
    if "Connection refused" in text or "timeout expired" in text:
        return f"no PostgreSQL server answers at {host}:{port} ({text})"
    return text


def first_line(e: BaseException) -> str:
    """An error's first line (its type's name when it says nothing), for one-line messages."""
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
