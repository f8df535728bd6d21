"""The caregiver's settings, folded from their chained `SettingChanged` events alone.

Snapshots are not read here: they sit outside the chain, and whatever decides behaviour must
be covered by it. Settings change rarely, so reading them all is cheap (docs/journal.md).
An event that is unreadable, invalid or fails its check against the device key is damage: the
settings then fall back to the safe defaults wherever the rest would be more permissive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Mapper, StoredEvent
from pydantic import ValidationError

from appliance.journal.aggregates import SETTINGS_ID, DeviceSettings
from appliance.journal.chain import RawEvent, digest
from appliance.settings import Settings

SAFE = Settings()


@dataclass
class SettingsLog:
    settings: Settings
    aggregate: DeviceSettings
    damage: list[int] = field(default_factory=list)  # notification ids of damaged events
    # The settings a caregiver set, told apart from defaults: a default may follow the device
    # (the language model it has), a caregiver's choice is kept as made.
    chosen: frozenset[str] = frozenset()

    def notice(self) -> str:
        ids = ", ".join(f"#{n}" for n in self.damage[:3] if n)
        where = f" (event {ids})" if ids else " (they cannot be read)"
        return (
            f"The caregiver's settings in the journal are damaged{where}: "
            "using the safe settings until a caregiver sets them again."
        )

    @classmethod
    def unreadable(cls) -> SettingsLog:
        """The defaults, for a journal whose settings cannot be read at all."""
        return cls(SAFE, DeviceSettings(), damage=[0])

    @classmethod
    def fold(
        cls,
        rows: list[RawEvent],
        digests: dict[int, str],
        key: bytes | None,
        mapper: Mapper[UUID],
    ) -> SettingsLog:
        """`digests` are the chain's, checked when there is a key (a reader may have none)."""
        values: dict[str, Any] = {}
        denied: set[str] = set()
        damage: list[int] = []
        aggregate: Any = None
        for nid, oid, version, topic, state in rows:
            event: Any = None
            if key is None or digests.get(nid) == digest(key, oid, version, topic, state):
                try:
                    event = mapper.to_domain_event(
                        StoredEvent(SETTINGS_ID, version, str(topic), bytes(state))
                    )
                    aggregate = event.mutate(_before(aggregate, version))
                except Exception:
                    event = None
            if event is None:
                damage.append(nid)
                continue
            if type(event).__name__ == "SettingChanged":
                # A chained value this version refuses was allowed by an earlier one
                # (confirm_timeout_s 0): it is read as its default, not as damage.
                if _valid(event.key, event.new):
                    values[event.key] = event.new
                if event.key == "denylist_apps" and isinstance(event.new, list):
                    denied.update(str(a) for a in event.new)
        settings = Settings.from_stored(values)
        if damage:
            settings = made_safe(settings, denied)
        versions = [r[2] for r in rows if isinstance(r[2], int)]
        if aggregate is None:
            aggregate = DeviceSettings() if not versions else _before(None, 1)
        if versions and aggregate.version < max(versions):
            # Damaged events still hold their versions: the next change goes after them.
            aggregate = _before(aggregate, max(versions) + 1)
        return cls(settings, aggregate, damage, frozenset(values))


def _before(aggregate: Any, version: Any) -> Any:
    """The aggregate ready for the event at `version` even if damaged events came before it:
    they are skipped, not allowed to stop every later change from applying."""
    if not isinstance(version, int) or version == 1:
        return aggregate
    if aggregate is None:
        aggregate = DeviceSettings()
        aggregate.collect_events()  # its Created event is stored already, damaged
    aggregate._version = version - 1
    return aggregate


def _valid(key: Any, value: Any) -> bool:
    if not isinstance(key, str) or key not in Settings.model_fields:
        return False
    try:
        Settings.model_validate({key: value})
    except ValidationError:
        return False
    return True


def made_safe(settings: Settings, denied: frozenset[str] | set[str] = frozenset()) -> Settings:
    """What is left after damage, made no more permissive than the defaults: destructive
    actions off, the lower rate limit, and every application ever denied stays denied."""
    return settings.model_copy(
        update={
            "allow_destructive": False,
            "max_unconfirmed_per_minute": min(
                settings.max_unconfirmed_per_minute, SAFE.max_unconfirmed_per_minute
            ),
            "denylist_apps": tuple(sorted(set(settings.denylist_apps) | denied)),
        }
    )
