"""Checking a kiosk's events as the central server holds them against the kiosk's own hash
chain, with the kiosk's device key (which the central server never holds): every event is
there once, in order, and unchanged except where words were taken out before it left (each such
state matches the keyed digest the kiosk sent with it) or removed by retention on the kiosk."""

from __future__ import annotations

from uuid import UUID

from eventsourcing.application import Application

from appliance.fleet.central_store import CentralStore
from appliance.journal.chain import ChainRow, RawEvent
from appliance.journal.retention import recorded_removals
from appliance.journal.store import MAPPER_TOPIC
from appliance.journal.verification import Break, check_chain


def verify_copy(store: CentralStore, kiosk: str, epoch: str, key: bytes) -> list[Break]:
    events: list[RawEvent] = []
    chain: list[ChainRow] = []
    removed: dict[int, str] = {}
    for r in store.events(kiosk, epoch):
        nid = int(r["notification_id"])
        events.append((nid, r["originator_id"], r["originator_version"], r["topic"],
                       bytes(r["state"])))
        chain.append((nid, str(r["digest"]), str(r["link"])))
        if r["redacted_digest"]:
            removed[nid] = str(r["redacted_digest"])
    mapper = Application[UUID](env={"PERSISTENCE_MODULE": "eventsourcing.popo",
                                    "MAPPER_TOPIC": MAPPER_TOPIC}).mapper  # topics: allowlist
    allowed = {**recorded_removals(events, mapper), **removed}
    return check_chain(events, chain, store.chain_keys(kiosk, epoch), key, allowed)
