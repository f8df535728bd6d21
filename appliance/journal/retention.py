"""Transcripts kept only as long as a caregiver chose: what was said, typed and answered is
rewritten to a marker in events older than the period, and a `TranscriptsRemoved` event records
which events were rewritten and the keyed digest of each new content. The hash chain still
links the original digests; `audit verify` accepts a rewritten event only if its new content
matches a digest such a (chained, keyed) event recorded."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Mapper, StoredEvent

from appliance.desktop.model import REDACTED
from appliance.desktop.roles import READABLE_TEXT_ROLES
from appliance.journal.chain import RawEvent, digest

REMOVED = "[removed after the retention period]"
_FIELDS = {
    "Heard": ("transcript",),
    "Answered": ("transcript", "intent"),
    "Planned": ("intent",),
    "Clarified": ("intent",),
    "Spoke": ("text",),
    "Prompted": ("context",),
    "ConfirmationAsked": ("prompt",),
    "ActionStarted": ("action", "before"),
    "ActionSucceeded": ("before", "after"),
}
"""Where a person's words can be, by event: said, typed (an intent's text, an action's text),
answered, quoted back."""
REMOVAL_TOPIC = "Retention.TranscriptsRemoved"


_STATES = ("before", "after")


def scrubbed_states(states: dict[str, Any]) -> dict[str, Any]:
    """Element states with what was typed into text fields hidden, the way a secret field's
    value is (replay and undo already know to leave such a value alone)."""
    return {
        key: ({**s, "value": REDACTED}
              if isinstance(s, dict) and s.get("role") in READABLE_TEXT_ROLES
              and isinstance(s.get("value"), str) and s.get("value") not in ("", REDACTED)
              else s)
        for key, s in states.items()
    }


def scrubbed(value: Any) -> Any:
    """A field with every word of the person's replaced: text, and in intents and actions the
    `words` and `text` at any depth."""
    if isinstance(value, str):
        return REMOVED if value else value
    if isinstance(value, dict):
        return {k: (REMOVED if k in ("words", "text") and isinstance(v, str) and v
                    else scrubbed(v) if k == "steps" else v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [scrubbed(v) for v in value]
    return value


def rewritten(event: Any) -> Any | None:
    """The event with its words removed, or None when there is nothing left to remove."""
    fields = _FIELDS.get(type(event).__name__)
    if not fields:
        return None
    changed = copy.copy(event)
    for name in fields:
        old = getattr(event, name, None)
        new = scrubbed_states(old) if name in _STATES and isinstance(old, dict) else scrubbed(old)
        if new != old:
            object.__setattr__(changed, name, new)
    return changed if any(getattr(changed, n, None) != getattr(event, n, None)
                          for n in fields) else None


def plan_removal(
    raw: Iterable[RawEvent], mapper: Mapper[UUID], key: bytes, before: datetime,
) -> list[tuple[int, bytes, str]]:
    """(notification id, new state, its keyed digest) for every event before `before` that
    still holds words."""
    out = []
    for nid, oid, version, topic, state in raw:
        stored = StoredEvent(originator_id=UUID(str(oid)), originator_version=int(version),
                             topic=str(topic), state=bytes(state))
        event: Any = mapper.to_domain_event(stored)
        if event.timestamp >= before:
            break  # stored in time order: the rest is newer
        changed = rewritten(event)
        if changed is None:
            continue
        new_state = mapper.to_stored_event(changed).state
        out.append((nid, new_state, digest(key, oid, version, topic, new_state)))
    return out


def recorded_removals(raw: Iterable[RawEvent], mapper: Mapper[UUID]) -> dict[int, str]:
    """Notification id -> the digest its rewritten content must have, from every
    `TranscriptsRemoved` event in the journal (whose own rows the chain checks)."""
    allowed: dict[int, str] = {}
    for _nid, oid, version, topic, state in raw:
        if not str(topic).endswith(REMOVAL_TOPIC):
            continue
        try:
            event: Any = mapper.to_domain_event(StoredEvent(
                originator_id=UUID(str(oid)), originator_version=int(version),
                topic=str(topic), state=bytes(state)))
        except Exception:  # a damaged removal record allows nothing; its row is reported
            continue
        allowed.update({int(k): str(v) for k, v in dict(event.digests).items()})
    return allowed
