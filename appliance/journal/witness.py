"""The device's own witness of the journal's head, kept beside the device key, outside the journal.

Rewritten after each commit. At the next open, a head that is gone or differs shows that events
were cut from the journal's end or the journal was rewritten, with no caregiver-recorded head
needed (docs/journal.md says what it does and does not prove).
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from appliance.journal.key import key_path

KNOWN_KEPT = 256  # damaged events remembered as reported; older ones have left the tail long ago


class Witness(BaseModel):
    """How far the journal was verified: its chain there, and how many rows it then held."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    notification_id: int = Field(ge=0)
    link: str = Field(pattern=r"^[0-9a-f]{64}$")
    chained: int = Field(ge=0)  # chain rows up to and including notification_id
    unchained: int  # events minus chain rows up to notification_id, as last accepted
    known: tuple[int, ...] = ()  # events found damaged and already reported: not told again

    def knowing(self, ids: set[int] | frozenset[int]) -> Witness:
        """This position, also remembering `ids` as reported (the newest KNOWN_KEPT of them)."""
        known = tuple(sorted(set(self.known) | ids)[-KNOWN_KEPT:])
        return self.model_copy(update={"known": known})


class ForeignWitness(Exception):
    """The witness was written with another device key: the key changed since the last check."""


def witness_file(identity: str) -> Path:
    """One file per journal, named by a hash of where the journal lives."""
    name = hashlib.sha256(identity.encode()).hexdigest()[:24]
    return key_path().parent / "witness" / f"{name}.json"


def _mac(key: bytes, identity: str, body: str) -> str:
    return hmac.new(key, f"{identity}\n{body}".encode(), hashlib.sha256).hexdigest()


def read_witness(identity: str, key: bytes) -> Witness | None:
    """The witness, or None when there is none or it cannot be read (it is then rebuilt).

    Raises ForeignWitness when it is whole but was written with another key."""
    try:
        stored = json.loads(witness_file(identity).read_text(encoding="utf-8"))
        body, mac = stored["witness"], stored["mac"]
        witness = Witness.model_validate_json(body)
    except (OSError, ValueError, KeyError, TypeError, ValidationError):
        return None
    if not hmac.compare_digest(str(mac), _mac(key, identity, str(body))):
        raise ForeignWitness
    return witness


def write_witness(identity: str, key: bytes, witness: Witness, forward_only: bool = True) -> None:
    """Replace the witness whole; with `forward_only`, never with an earlier position (another
    process may have verified further meanwhile). Raises OSError."""
    path = witness_file(identity)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with _locked(path):
        if forward_only:
            try:
                current = read_witness(identity, key)
            except ForeignWitness:
                current = None
            if current is not None and current.notification_id > witness.notification_id:
                return
        body = witness.model_dump_json()
        text = json.dumps({"witness": body, "mac": _mac(key, identity, body)})
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        # No fsync: a witness lost to a power cut is an older one (still true, only less far)
        # or an unreadable one, which is rebuilt by a whole check; neither is damage.
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        temporary.replace(path)


def forget_witness(identity: str) -> None:
    """For a journal replaced on purpose (a damaged file moved aside): checked anew next time."""
    path = witness_file(identity)
    with suppress(FileNotFoundError), _locked(path):
        path.unlink()  # the lock file stays: removing it would race with a writer holding it


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.with_name(path.name + ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
