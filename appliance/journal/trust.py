"""The live path's check of the chain: only what was added since the device's witness, so every
open and every commit can afford it (`audit verify` is the whole check)."""

from __future__ import annotations

from dataclasses import dataclass

from appliance.journal.chain import (
    CHAIN_TABLE,
    GENESIS,
    ChainReads,
    ChainRow,
    Query,
    RawEvent,
)
from appliance.journal.verification import Break, check_chain
from appliance.journal.witness import Witness

EVENTS = "stored_events"  # as SQLite names it; PostgreSQL's query translates it
CUT_END = "events were removed from its end"
REWRITTEN = "differs from what this device wrote"
UNCOUNTED = ("chain rows up to event", "events up to #")
WITNESSED = (CUT_END, REWRITTEN, *UNCOUNTED)
"""Words of the breaks only the witness shows: the chain's own check cannot see them later."""


@dataclass(frozen=True)
class TrustCheck:
    """What the check found, and the position it reached (the next witness)."""

    breaks: list[Break]
    reached: Witness


def check_since(
    reads: ChainReads,
    key: bytes,
    witness: Witness | None,
    removed: dict[int, str],
    counted: bool = True,
) -> TrustCheck:
    """Every event and chain row after the witness checked; with `counted`, the rows before it
    counted too (two counts of the whole tables: at open and before each utterance, not after
    each commit). With no witness, the whole journal. `removed`: retention's recorded digests."""
    keys = reads.chain_keys()
    with reads.consistent() as query:
        breaks = _still_there(query, witness) if witness is not None else []
        start, previous = (witness.notification_id, witness.link) if witness else (0, GENESIS)
        if witness is None and keys:
            # A journal from before device keys chained its first rows unkeyed: `audit verify`
            # names them; the live path, meeting it first, trusts from the first keyed row on.
            start = keys[0][0] - 1
            previous = _link_upto(query, start)
        chain, events = _rows_after(query, start)
        found = check_chain(events, chain, keys, key, removed, previous=previous)
        if witness is None:  # a journal first met, from before device keys: trusted as it is
            found = [b for b in found if "chained without the device key" not in b.problem]
        breaks += found
        if counted or witness is None:
            chained = int(query(f"SELECT count(*) FROM {CHAIN_TABLE}")[0][0])
            stored = int(query(f"SELECT count(*) FROM {EVENTS}")[0][0])
            if witness is not None:
                breaks += _counted(witness, chained - len(chain), stored - len(events))
        else:  # what the last counted check found, and what came since
            chained = witness.chained + len(chain)
            stored = witness.chained + witness.unchained + len(events)
        last = max([start, *(r[0] for r in chain), *(e[0] for e in events)])
        link = chain[-1][2] if chain else previous
        reached = Witness(
            notification_id=last, link=link, chained=chained, unchained=stored - chained
        )
        return TrustCheck(breaks, reached)


def witness_breaks(reads: ChainReads, witness: Witness) -> list[Break]:
    """What `audit verify` adds from the device's witness: a cut or rewritten end (the whole
    check sees every other row)."""
    with reads.consistent() as query:
        return _still_there(query, witness)


def position(query: Query) -> Witness:
    """The journal's end now (events stored after the chain's head included, so that once
    reported they are not reported again), with its counts: where the next check starts."""
    head, link = _head(query)
    last_event = query(f"SELECT max(rowid) FROM {EVENTS}")[0][0]
    chained = int(query(f"SELECT count(*) FROM {CHAIN_TABLE}")[0][0])
    stored = int(query(f"SELECT count(*) FROM {EVENTS}")[0][0])
    return Witness(notification_id=max(head, int(last_event or 0)), link=link, chained=chained,
                   unchained=stored - chained)


def _rows_after(query: Query, start: int) -> tuple[list[ChainRow], list[RawEvent]]:
    chain = [
        (int(r[0]), str(r[1]), str(r[2]))
        for r in query(
            f"SELECT notification_id, digest, hash FROM {CHAIN_TABLE} "
            "WHERE notification_id>? ORDER BY notification_id",
            (start,),
        )
    ]
    events: list[RawEvent] = [
        (r[0], r[1], r[2], r[3], r[4])
        for r in query(
            "SELECT rowid, originator_id, originator_version, topic, state "
            f"FROM {EVENTS} WHERE rowid>? ORDER BY rowid",
            (start,),
        )
    ]
    return chain, events


def _still_there(query: Query, witness: Witness) -> list[Break]:
    """The witness's position must still end the same chain."""
    nid = witness.notification_id
    if _link_upto(query, nid) == witness.link:
        return []
    last = _head(query)[0]
    if last < nid:
        return [Break(0, f"event #{nid}, the last one this device checked, is no longer in the "
                         f"journal (it ends at #{last}): {CUT_END}")]
    return [Break(0, f"the chain at event #{nid} {REWRITTEN}: "
                     "the journal was rewritten or replaced")]


def _counted(witness: Witness, chained: int, stored: int) -> list[Break]:
    """The rows up to the witness's position, counted now against what it recorded."""
    nid = witness.notification_id
    if chained != witness.chained:
        return [Break(0, f"{abs(witness.chained - chained)} {UNCOUNTED[0]} #{nid} were "
                         f"{'removed' if chained < witness.chained else 'added'}")]
    if stored - chained != witness.unchained:
        change = stored - chained - witness.unchained
        return [Break(0, f"{abs(change)} {UNCOUNTED[1]}{nid} were "
                         f"{'added outside the journal' if change > 0 else 'removed'}")]
    return []


def _head(query: Query) -> tuple[int, str]:
    last = query(
        f"SELECT notification_id, hash FROM {CHAIN_TABLE} ORDER BY notification_id DESC LIMIT 1"
    )
    return (int(last[0][0]), str(last[0][1])) if last else (0, GENESIS)


def _link_upto(query: Query, nid: int) -> str:
    """The link of the last chain row at or before `nid`."""
    rows = query(
        f"SELECT hash FROM {CHAIN_TABLE} WHERE notification_id<=? "
        "ORDER BY notification_id DESC LIMIT 1",
        (nid,),
    )
    return str(rows[0][0]) if rows else GENESIS
