"""The journal: readable, its chain verified (what `appliance audit verify` does), the faults it
recorded for a device, and the disk it lives on."""

from __future__ import annotations

import shutil
from pathlib import Path

from appliance.health.check import Check, State, first_line
from appliance.journal.application import Journal
from appliance.journal.serving import open_reader, replaced
from appliance.journal.store import NoJournal, StoreError, default_store_path

LOW_DISK_BYTES = 1 << 30


def opened(store: str | None) -> Journal | Check:
    """The journal at `store` for reading (nothing is created; a damaged file is read around its
    damage), or the check that says why not."""
    try:
        return open_reader(store)
    except NoJournal as e:
        return Check("Journal", "unknown",
                     f"{e} yet: the appliance makes it on its first command (appliance run)")
    except StoreError as e:
        return Check("Journal", "problem", f"{e}: check --store, or the file's owner and mode")


def head(journal: Journal) -> Check:
    """Cheap: the chain's head can be read."""
    try:
        found = journal.head()
    except Exception as e:  # a damaged journal: said, not raised
        return Check("Journal", "problem", first_line(e))
    return Check("Journal", "ok", f"{found.count} events, head {found}")


def verified(journal: Journal, what: str = "Journal check") -> Check:
    """The hash chain and snapshots, checked now (what `appliance audit verify` does)."""
    breaks = journal.verify(None)
    if breaks:
        first = str(breaks[0])
        more = f" (and {len(breaks) - 1} more)" if len(breaks) > 1 else ""
        if first.startswith("cannot verify") and "device key" in first:
            return Check(what, "problem", (
                f"{first}{more}: run as the user whose key wrote it, or restore the device key "
                "(APPLIANCE_KEY_FILE) from its backup"))
        return Check(what, "problem", (
            f"damaged: {first}{more}: keep the device as it is and run "
            "`appliance audit verify` for every break; compare the head with one recorded earlier"))
    found = journal.head()
    return Check(what, "ok", f"intact: {found.count} events, hash chain verified; head {found}")


def stored(store: str | None) -> Check:
    """`verified` for the journal at `store`, or why it cannot be opened."""
    journal = opened(store)
    return journal if isinstance(journal, Check) else verified(journal, "Journal")


def set_aside(folder: Path, journal: Journal | None = None) -> Check:
    """Journal files found damaged and set aside in `folder` (appliance/journal/serving.py),
    and how a caregiver reads what is left of them; `journal` names the damage it replaced."""
    found = sorted(
        p for p in folder.glob("*.damaged-*") if not p.name.endswith(("-wal", "-shm"))
    )
    if not found:
        return Check("Damaged journals", "ok", "none set aside")
    newest = found[-1]
    gone = replaced(journal) if journal is not None else None
    why = ""
    if gone is not None and Path(gone.file).name == newest.name:
        why = f" ({gone.damage}; its last head {gone.head or 'could not be read'})"
    others = f", and {len(found) - 1} older: {', '.join(p.name for p in found[:-1])}" if (
        len(found) > 1) else ""
    return Check("Damaged journals", "problem", (
        f"{newest.name} was found damaged{why} and set aside read-only in {folder}; the "
        f"appliance goes on in a new journal{others}. Read what is left with "
        f"`appliance audit --store {newest}` and `appliance audit verify --store {newest}`; "
        "keep the file until it is read or copied, then delete it"))


def recorded_faults(journal: Journal, name: str, what: str) -> Check:
    """What the journal recorded of a device: its faults (and a switch's presses)."""
    device = journal.device(name)
    if device.faults:
        return Check(what, "problem", f"{device.faults} fault(s) recorded; see Today")
    counted = f", {device.presses} presses" if name == "switch" else ""
    return Check(what, "ok", f"no faults recorded{counted}")


def journal_folder(store: str | None) -> Path:
    """Where a SQLite journal lives; for PostgreSQL, the state folder a default journal uses."""
    if store and "://" not in store:
        return Path(store.removeprefix("file:").split("?")[0]).resolve().parent
    return default_store_path().parent


def journal_disk(store: str | None) -> Check:
    """`disk` where the journal lives; for PostgreSQL, where this device keeps its own files."""
    found = disk(journal_folder(store))
    if store and "://" in store:
        return Check(found.what, found.state, found.detail + (
            "; the journal itself is on PostgreSQL: check the server's disk there"))
    return found


def disk(folder: Path, low_bytes: int = LOW_DISK_BYTES) -> Check:
    """Free space on the disk holding `folder` (or its nearest existing parent); below
    `low_bytes` is a problem."""
    where = folder
    while not where.exists() and where != where.parent:
        where = where.parent
    usage = shutil.disk_usage(where)
    free_gb, total_gb = usage.free / (1 << 30), usage.total / (1 << 30)
    state: State = "problem" if usage.free < low_bytes else "ok"
    detail = f"{free_gb:.1f} GB free of {total_gb:.1f} GB at {folder}"
    if state == "problem":
        detail += (f": below {low_bytes / (1 << 30):.1f} GB; a full disk stops the journal "
                   "and every command with it: free space (sudo apt clean; "
                   "journalctl --vacuum-size=50M)")
    return Check("Disk", state, detail)
