"""Stored topics resolve only to the project's own event classes, never by importing a module.

eventsourcing turns a stored topic (and a created event's `originator_topic`, a snapshot's
`topic`) into a class by importing it: a topic edited to `this:s` would run that module. Here a
stored topic is looked up in the allowlist first, and anything else is damage.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, CanMutateAggregate, Snapshot
from eventsourcing.persistence import Mapper, StoredEvent
from eventsourcing.utils import get_topic

from appliance.journal.aggregates import (
    Aliases,
    Device,
    DeviceSettings,
    JournalEpoch,
    Retention,
    TaughtTargets,
)
from appliance.turn import Turn

AGGREGATES: tuple[type[Aggregate], ...] = (
    Turn, DeviceSettings, Device, Retention, JournalEpoch, TaughtTargets, Aliases,
)


class ForeignTopic(ValueError):
    """A stored topic that names no event class of the journal."""


def _event_classes(aggregate: type[Aggregate]) -> list[type]:
    return [
        value
        for value in vars(aggregate).values()
        if isinstance(value, type) and issubclass(value, CanMutateAggregate)
    ]


AGGREGATE_TOPICS = frozenset(get_topic(a) for a in AGGREGATES)
EVENT_TOPICS = frozenset(
    {get_topic(e) for a in AGGREGATES for e in _event_classes(a)} | {get_topic(Snapshot)}
)


class JournalMapper(Mapper[UUID]):
    """eventsourcing's mapper, refusing every topic outside the allowlist before resolving it."""

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        if stored_event.topic not in EVENT_TOPICS:
            raise ForeignTopic(f"unknown topic {stored_event.topic[:80]!r}")
        event = super().to_domain_event(stored_event)
        named = vars(event).get("originator_topic", vars(event).get("topic"))
        if named is not None and named not in AGGREGATE_TOPICS:
            raise ForeignTopic(f"unknown aggregate topic {str(named)[:80]!r}")
        return event

