"""What of an event leaves the kiosk. Secrets never reach the journal in the first place; the
person's words (what was said, typed, answered and said back) leave only when the caregiver
turned `fleet_transcripts` on, and are otherwise taken out with retention's own rewrite, the
one vocabulary for "the words of an event", each marked as kept on the kiosk."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.persistence import Mapper, Notification

from appliance.journal.chain import digest, oid_text
from appliance.journal.retention import REMOVED, rewritten

KEPT = "(words kept on the kiosk)"
"""What stands for words that did not leave: retention's marker would say they were removed."""


def outgoing_state(
    n: Notification, mapper: Mapper[UUID], key: bytes, transcripts: bool
) -> tuple[bytes, str | None]:
    """(the state to send, its keyed digest when it differs from the stored one). The digest
    lets whoever holds the device key verify the central copy as retention's removals are."""
    if transcripts:
        return n.state, None
    try:
        event: Any = mapper.to_domain_event(n)
    except Exception:  # damaged past reading: its words cannot be told apart, none leave
        return b"{}", None  # the central copy then shows it modified, as the kiosk's check does
    changed = rewritten(event)
    if changed is None:
        return n.state, None
    before = vars(event)
    for name, value in list(vars(changed).items()):
        if value != before.get(name):
            object.__setattr__(changed, name, _kept(before.get(name), value))
    state = mapper.to_stored_event(changed).state
    return state, digest(key, oid_text(n.originator_id), n.originator_version, n.topic, state)


def _kept(old: Any, new: Any) -> Any:
    """Retention's rewrite `new` of `old`, its markers saying the words are kept on the kiosk;
    a marker already in `old` stays (retention did remove those words, on the kiosk too)."""
    if new == REMOVED and old != REMOVED:
        return KEPT
    if isinstance(new, dict) and isinstance(old, dict):
        return {k: _kept(old.get(k), v) for k, v in new.items()}
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [_kept(o, v) for o, v in zip(old, new, strict=True)]
    return new
