"""Which process performs an action, and whether that process can still be performing it.

An `ActionStarted` names its owner: host, boot, PID namespace, PID and the process's start time.
A turn found acting may only be marked Interrupted when its owner is gone; a live owner's turn
is left alone, because that process will record the real outcome. Within this process, a turn
is acting only while a session has it registered (`performing`): one whose session failed
half-way is as abandoned as a dead process's.
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from uuid import UUID

PROC = Path("/proc")

LEASE = timedelta(minutes=10)
"""How long an action owned where we cannot look (another host, another PID namespace, or a
journal written before owners were recorded) counts as still running. An action is one desktop
call bounded by its own timeouts (seconds), so a turn still acting this long after its
`ActionStarted` has lost its process; ten minutes also leaves room for clocks that disagree
between hosts by a few minutes, since the start time is the owner's clock and `now` is ours."""


@dataclass(frozen=True)
class Owner:
    host: str
    boot: str  # /proc/sys/kernel/random/boot_id: changes at every boot
    pidns: str  # the PID namespace: a PID means the same process only within one
    pid: int
    started: str  # clock ticks from boot to the process's start: tells a reused PID apart

    def __str__(self) -> str:
        return f"{self.host}/{self.boot}/{self.pidns}/{self.pid}/{self.started}"

    @classmethod
    def parse(cls, text: str) -> Owner | None:
        parts = text.rsplit("/", 4)
        if len(parts) != 5 or not parts[3].isdigit():
            return None
        host, boot, pidns, pid, started = parts
        return cls(host, boot, pidns, int(pid), started)

    def sees(self, other: Owner) -> bool:
        """Whether `other`'s PID can be looked up from here (same machine, boot and namespace)."""
        return (self.host, self.boot, self.pidns) == (other.host, other.boot, other.pidns)


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _pidns(pid: int) -> str:
    try:
        link = os.readlink(PROC / str(pid) / "ns" / "pid")  # "pid:[4026531836]"
    except OSError:
        return ""
    return link.removeprefix("pid:[").removesuffix("]")


def _stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of a process from /proc/PID/stat, or None when there is none."""
    text = _read(PROC / str(pid) / "stat")
    if not text:
        return None
    # The command name (field 2) may hold spaces and parentheses; the rest follows the last ")".
    fields = text.rsplit(")", 1)[-1].split()
    if len(fields) < 20:
        return None
    return fields[0], fields[19]  # field 3 (state) and field 22 (starttime)


def this_process() -> Owner:
    pid = os.getpid()  # asked each time: a forked child is a process of its own
    return _owner(pid)


@cache
def _owner(pid: int) -> Owner:
    stat = _stat(pid)
    return Owner(
        host=socket.gethostname(),
        boot=_read(PROC / "sys" / "kernel" / "random" / "boot_id"),
        pidns=_pidns(pid),
        pid=pid,
        started=stat[1] if stat else "",
    )


def owner_alive(owner: str, started_on: datetime, now: datetime | None = None) -> bool:
    """Whether the process named by `owner` may still be performing an action it began at
    `started_on`. Only when this is False may another process mark the action Interrupted."""
    now = now or datetime.now(UTC)  # the event's clock, not a session's (maybe virtual) one
    theirs = Owner.parse(owner)
    here = this_process()
    if theirs is None or not here.boot or not theirs.boot:
        return now - started_on < LEASE
    if theirs.host == here.host and theirs.boot != here.boot:
        return False  # this machine has restarted since: every process of that boot is gone
    if not here.sees(theirs):
        return now - started_on < LEASE
    stat = _stat(theirs.pid)
    if stat is None or stat[0] in ("Z", "X"):  # gone, or dead and not yet reaped
        return False
    return stat[1] == theirs.started  # else the PID was reused by a newer process


_performing: set[UUID] = set()
_performing_lock = threading.Lock()  # sessions of the voice and switch threads share it


def performing(turn_id: UUID, busy: bool) -> None:
    """Register (or, with `busy` False, release) a turn whose action this process carries out,
    from before its `ActionStarted` is written until its outcome is."""
    with _performing_lock:
        if busy:
            _performing.add(turn_id)
        else:
            _performing.discard(turn_id)


def still_acting(owner: str, turn_id: UUID, started_on: datetime) -> bool:
    """Whether the action of a turn found in flight may still be under way."""
    if owner == str(this_process()):
        with _performing_lock:
            return turn_id in _performing
    return owner_alive(owner, started_on)
