"""Checking the stored events against the HMAC chain, and the head a caregiver can record."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from appliance.journal.chain import GENESIS, ChainRow, KeyRow, RawEvent, digest, link, oid_text
from appliance.journal.key import key_id


@dataclass(frozen=True)
class Break:
    """Where the journal is damaged, in words a caregiver can act on."""

    notification_id: int  # 0: the journal as a whole (a key, a snapshot, the file, the head)
    problem: str  # "modified", "deleted", "reordered", "unchained", or a whole sentence
    event: str = ""  # e.g. "Turn.Planned v3 of 1a2b3c4d"

    def __str__(self) -> str:
        if not self.notification_id:
            return self.problem
        return f"event #{self.notification_id} ({self.event}) was {self.problem}"


@dataclass(frozen=True)
class Head:
    """The chain's last link: recorded outside the journal, it later shows a truncation."""

    count: int
    notification_id: int
    hash: str

    def __str__(self) -> str:
        return f"{self.notification_id}:{self.hash[:16]}"


class HeadError(ValueError):
    """A recorded head that is not of the form NUMBER:HEX."""


def parse_head(text: str) -> tuple[int, str]:
    """'1234:1a2b3c4d5e6f7a8b' -> (1234, '1a2b3c4d5e6f7a8b'); at least 8 hex digits."""
    m = re.fullmatch(r"\s*#?(\d+):([0-9a-fA-F]{8,64})\s*", text)
    if not m:
        raise HeadError(f"cannot read the head {text.strip()!r}; expected e.g. 42:1a2b3c4d5e6f7a8b")
    return int(m.group(1)), m.group(2).lower()


def describe(row: RawEvent) -> str:
    name = str(row[3]).rsplit(":", 1)[-1]
    return f"{name} v{row[2]} of {oid_text(row[1])[:8]}"


def check_chain(
    events: Sequence[RawEvent],
    chain: Sequence[ChainRow],
    keys: Sequence[KeyRow],
    key: bytes,
    removed: dict[int, str] | None = None,
    previous: str = GENESIS,
) -> list[Break]:
    """Every stored event against its chain row; each break is reported once. `removed`: the
    digests retention recorded for the events whose words it rewrote; `previous`: the link
    before the first chain row given (a check that starts part-way)."""
    ours = key_id(key)
    by_id = {e[0]: e for e in events}
    chained = {nid for nid, _d, _h in chain}
    where_stored = {d: nid for nid, d, _h in chain}
    breaks: list[Break] = []
    unkeyed: list[int] = []
    foreign: list[int] = []
    for nid, stored_digest, stored_hash in chain:
        recorded = next((k for since, k in reversed(keys) if since <= nid), None)
        e = by_id.get(nid)
        if e is None:
            breaks.append(Break(nid, "deleted", "no longer stored"))
        elif recorded is None:
            unkeyed.append(nid)
        elif recorded != ours:
            foreign.append(nid)
        else:
            breaks.extend(_check_row(key, previous, (nid, stored_digest, stored_hash), e,
                                     where_stored, (removed or {}).get(nid)))
        previous = stored_hash
    if foreign:
        breaks.insert(
            0,
            Break(
                0,
                (
                    "cannot verify"
                    if len(foreign) == len(chain)
                    else f"cannot verify {_span(foreign)}"
                )
                + ": the device key does not match this journal",
            ),
        )
    if unkeyed:
        breaks.append(Break(0, f"{_span(unkeyed)} are chained without the device key"))
    for e in events:
        if e[0] not in chained:
            breaks.append(Break(e[0], "added outside the journal", describe(e)))
    return breaks


def _check_row(
    key: bytes, previous: str, row: ChainRow, e: RawEvent, where_stored: dict[str, int],
    removal: str | None = None,
) -> list[Break]:
    nid, stored_digest, stored_hash = row
    d = digest(key, e[1], e[2], e[3], e[4])
    if removal is not None and d == removal and link(key, previous, nid, stored_digest) == (
        stored_hash
    ):
        return []  # its words were removed as a chained retention event recorded
    linked = link(key, previous, nid, d) == stored_hash
    if linked and d == stored_digest:
        return []
    if linked:
        return [Break(nid, "left as written, but its digest in the chain was altered", describe(e))]
    if d == stored_digest:
        return [
            Break(nid, "cut off from the event before it (the chain was rewritten)", describe(e))
        ]
    moved_from = where_stored.get(d)
    if moved_from is not None and moved_from != nid:
        return [Break(nid, f"reordered (it was stored as #{moved_from})", describe(e))]
    if not isinstance(e[4], bytes | memoryview):
        return [Break(nid, "modified (its state is stored as text)", describe(e))]
    return [Break(nid, "modified", describe(e))]


def check_expected_head(chain: Sequence[ChainRow], expected: tuple[int, str]) -> Break | None:
    """The head recorded earlier must still be in the chain, with the same link."""
    nid, prefix = expected
    found = next((h for n, _d, h in chain if n == nid), None)
    if found is None:
        last = chain[-1][0] if chain else 0
        return Break(
            0,
            f"the recorded head #{nid} is no longer in the journal (it ends at #{last}): "
            "events were removed from its end",
        )
    if not found.startswith(prefix):
        return Break(0, f"the chain at the recorded head #{nid} differs: the journal was rewritten")
    return None


def _span(ids: Sequence[int]) -> str:
    return f"event #{ids[0]}" if len(ids) == 1 else f"events #{ids[0]}-#{ids[-1]}"
