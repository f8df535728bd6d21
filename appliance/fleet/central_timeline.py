"""One kiosk's recent events as the central copy holds them, as the audit's timeline rows, so
the caregiver page draws them with the day's own lines."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.persistence import StoredEvent

from appliance.audit.timeline import row_of
from appliance.fleet.central_store import CentralStore
from appliance.fleet.outgoing import KEPT
from appliance.journal.retention import REMOVED
from appliance.journal.store import MAPPER_TOPIC


def recent_rows(store: CentralStore, kiosk: str, limit: int = 3000,
                turn: str = "") -> list[dict[str, Any]]:
    """The newest `limit` events of the kiosk's current epoch (of one turn, by the start of its
    id), oldest first; an event the page cannot read is left out (the kiosk's check names it)."""
    if turn and not all(ch in "0123456789abcdef" for ch in turn):
        return []
    mapper = Application[UUID](env={"PERSISTENCE_MODULE": "eventsourcing.popo",
                                    "MAPPER_TOPIC": MAPPER_TOPIC}).mapper  # topics: allowlist
    rows = []
    for r in store.recent_events(kiosk, limit, turn):
        try:
            event: Any = mapper.to_domain_event(StoredEvent(
                originator_id=r["originator_id"], originator_version=r["originator_version"],
                topic=r["topic"], state=bytes(r["state"])))
        except Exception:
            continue
        row = row_of(int(r["notification_id"]), event)
        state = bytes(r["state"])
        rows.append(_kept(row) if r["redacted_digest"] and KEPT.encode() not in state else row)
    return rows


def _kept(value: Any) -> Any:
    """A row an uplink sent before its copy said KEPT itself: retention's marker there stood
    for words kept on the kiosk."""
    if value == REMOVED:
        return KEPT
    if isinstance(value, str):
        return value.replace(REMOVED, KEPT)
    if isinstance(value, dict):
        return {k: _kept(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_kept(v) for v in value]
    return value
