"""Serving on through a damaged journal file (docs/journal.md, "A damaged journal file").

Writers (`say`, the kiosk, the web, the fleet uplink) open the journal here: a SQLite file
damaged past serving is set aside read-only and a fresh journal takes its place; its first event
names the old file, the old head and the damage, and it records the damage (device "journal",
`JournalChecked`), which the care home's server turns into an alert. Readers (`audit`, `verify`,
`settings show`, `replay`) of a damaged file read a copy of what can still be read of it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import weakref
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, cast

from eventsourcing.application import AggregateNotFoundError

from appliance.journal.aggregates import EPOCH_ID, JournalEpoch, Replaced
from appliance.journal.application import Journal
from appliance.journal.salvage import (
    FileId,
    Salvage,
    aside_name,
    damage_words,
    exclusive,
    file_id,
    is_damage,
    mentions_damage,
    moved_aside,
    old_head,
    probe,
    read_what_is_left,
    sqlite_file,
)
from appliance.journal.store import StoreError, journal_identity
from appliance.journal.verification import Break
from appliance.journal.witness import forget_witness

NOTICE = (
    "My journal file was damaged ({damage}), so I set it aside as {name} and started a new "
    "one, with the default settings; a caregiver can still read the old one."
)
"""Said once, by the process that set the file aside."""
FOUND_NOTICE = (
    "My journal file was found damaged ({damage}) and set aside as {name}; I go on in a new "
    "one, with the default settings."
)
"""Said once by a long-running process when another one set its journal file aside."""

# Which file each writer opened here, by path and (device, inode): a long-running process sees
# when another one has set that file aside, and where to open the journal afresh.
_opened: weakref.WeakKeyDictionary[Journal, tuple[Path, FileId | None]] = (
    weakref.WeakKeyDictionary()
)


def open_writer(store: str | None) -> Journal:
    """The journal at `store` to serve from; a SQLite file damaged past serving is set aside
    and a fresh journal started in its place (said once by `notice`)."""
    path = sqlite_file(store)
    if path is None:
        return Journal(store)  # PostgreSQL checks its own pages; a file: URI is left as it is
    seen = file_id(path)
    damage = probe(path) if seen is not None else None
    if damage is None:
        try:
            journal = Journal(store)
        except StoreError as e:
            if seen is None or not is_damage(e):
                raise
            damage = damage_words(e)
        else:
            _opened[journal] = (path, file_id(path))
            return journal
    return _replace(path, damage, seen)


def renewed(
    journal: Journal, error: BaseException | None = None, notices: Sequence[str] = ()
) -> Journal | None:
    """For a long-running writer: the journal to go on with when the file it has open was set
    aside by another process, or is damaged past serving (`error` from a read or a write, or
    `notices` naming SQLite's damage, confirmed by a look at the file): set aside now. None:
    go on with `journal`."""
    known = _opened.get(journal)
    if known is None:
        return None  # not a SQLite file opened here: PostgreSQL, a reader, a test's own
    path, opened = known
    if file_id(path) != opened:
        return _reopened(path)
    damage = None
    if error is not None and is_damage(error):
        damage = damage_words(error)
    elif any(mentions_damage(n) for n in notices):
        damage = probe(path)
    return None if damage is None else _replace(path, damage, opened)


def replaced(journal: Journal) -> Replaced | None:
    """The damaged file this journal was started in place of, as its first event names it."""
    try:
        epoch = cast(JournalEpoch, journal.repository.get(EPOCH_ID))
    except AggregateNotFoundError:
        return None
    except Exception:  # damage of its own: the journal's checks name it
        return None
    file = getattr(epoch, "replaces", "")  # an epoch stored before these fields has none
    if not file:
        return None
    return Replaced(file, getattr(epoch, "replaced_head", ""), getattr(epoch, "damage", ""))


def _replace(path: Path, damage: str, seen: FileId | None) -> Journal:
    try:
        with exclusive(path.parent):
            if file_id(path) == seen:  # else another process set it aside meanwhile
                target = aside_name(path)
                gone = Replaced(str(target.resolve()), old_head(path), damage)
                _set_aside(path, target, gone)
                journal = Journal(str(path))
                journal.notice(NOTICE.format(damage=damage, name=target.name))
                _opened[journal] = (path, file_id(path))
                return journal
    except (OSError, sqlite3.Error) as e:
        why = e.strerror if isinstance(e, OSError) else str(e)
        raise StoreError(
            f"the journal {path} is damaged ({damage}) and cannot be set aside: {why}"
        ) from None
    return _reopened(path)  # outside the lock: the new file is looked at as any other


def _set_aside(path: Path, target: Path, gone: Replaced) -> None:
    """The new journal made whole under a temporary name, then put in the damaged one's place
    as the damaged one is set aside as `target`. Raises OSError or sqlite3.Error."""
    fresh = path.with_name(f".{path.name}.new-{os.getpid()}")
    _remove(fresh)  # what a crash here left
    try:
        _start(fresh, gone)
        moved_aside(path, target, replacement=fresh)
    finally:
        _remove(fresh)  # gone once it took the journal's name


def _start(fresh: Path, gone: Replaced) -> None:
    """The new journal, made whole under another name: its epoch naming the old file, then the
    damage recorded for the care home's server (`JournalChecked`, as a failed check is)."""
    journal = Journal(str(fresh), replaces=gone)
    problem = (
        f"the journal file was damaged ({gone.damage}); it was set aside as "
        f"{Path(gone.file).name} (its last head {gone.head or 'could not be read'}) and a new "
        "journal started in its place"
    )
    # `_amend`, as `check_and_record` records a check: the journal has no public call for a
    # verdict reached without running its own verify.
    journal._amend(
        lambda: journal.device("journal"),
        lambda d: d.journal_checked(intact=False, problem=problem, head=""),
    )
    journal.close()
    forget_witness(journal_identity({"SQLITE_DBNAME": str(fresh)}))
    # Nothing has it open now: its write-ahead log can be folded in, so that no log is left
    # under the temporary name when the file takes the journal's.
    conn = sqlite3.connect(fresh)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("PRAGMA journal_mode=WAL")
    finally:
        conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{fresh}{suffix}").unlink(missing_ok=True)


def _reopened(path: Path) -> Journal:
    """The journal another process started in place of the damaged one this one had open."""
    journal = open_writer(str(path))
    gone = replaced(journal)
    if gone is not None:
        journal.notice(FOUND_NOTICE.format(damage=gone.damage, name=Path(gone.file).name))
    return journal


def _remove(fresh: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with suppress(FileNotFoundError):
            Path(f"{fresh}{suffix}").unlink()


# -- readers -------------------------------------------------------------------------------


def open_reader(store: str | None) -> Journal:
    """The journal at `store` for reading (nothing is created); a damaged SQLite file is read
    around its damage, from a copy of what can still be read."""
    path = sqlite_file(store)
    if path is not None and path.is_file() and path.stat().st_size:
        damage = probe(path)
        if damage is not None:
            return SalvagedJournal(path, damage)
    try:
        return Journal(store, create=False)
    except StoreError as e:
        if path is None or not is_damage(e):
            raise
        return SalvagedJournal(path, damage_words(e))


class SalvagedJournal(Journal):
    """What can still be read of a damaged journal file, copied into a private temporary file:
    shown as any journal is, verified with the damage named first, and never acted on."""

    def __init__(self, path: Path, damage: str) -> None:
        scratch = Path(tempfile.mkdtemp(prefix="appliance-salvage-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, scratch, True)
        copy = scratch / "journal.sqlite"
        self.salvage: Salvage = read_what_is_left(path, copy, damage)
        super().__init__(str(copy), create=False)
        summary = self.salvage.summary()
        self.notice(f"{summary[0].upper()}{summary[1:]}; what could be read is shown.")

    def check_trust(self, *args: Any, **kwargs: Any) -> list[Break]:
        # A copy of a damaged file decides nothing; `verify` is its whole check. (Any
        # arguments: the live check's own may change; none matter here.)
        return []

    def verify(self, expect: tuple[int, str] | None = None) -> list[Break]:
        """The damage first, then breaks among the events that could be read; the events and
        chain rows that could not be read are counted in the first line, not listed again."""
        lost = set(self.salvage.lost.ids) | set(self.salvage.chain_lost.ids)
        for nid in self.salvage.chain_lost.ids:  # the row after a lost link cannot link to it
            after = self.chained.query(
                "SELECT min(notification_id) FROM event_chain WHERE notification_id>?", (nid,)
            )
            if after and after[0][0] is not None:
                lost.add(int(after[0][0]))
        ends = [a for a in (self.salvage.lost.after, self.salvage.chain_lost.after) if a]
        if ends:  # past the end of what could be read of either table: lost, not tampered
            lost.update(self._ids_after(min(ends)))
        found = [b for b in super().verify(expect) if b.notification_id not in lost]
        return [Break(0, self.salvage.summary()), *found]

    def _ids_after(self, nid: int) -> set[int]:
        rows = self.chained.query(
            "SELECT rowid FROM stored_events WHERE rowid>? UNION "
            "SELECT notification_id FROM event_chain WHERE notification_id>?", (nid, nid)
        )
        return {int(r[0]) for r in rows}
