"""Aggregates other than the turn: the caregiver's settings."""

from __future__ import annotations

from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event

SETTINGS_ID = uuid5(NAMESPACE_URL, "appliance:settings")


class DeviceSettings(Aggregate):
    """Every change names who changed what from what to what."""

    @staticmethod
    def create_id() -> UUID:
        return SETTINGS_ID

    @event("Created")
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    @event("SettingChanged")
    def change(self, key: str, old: Any, new: Any, by: str) -> None:
        self.values[key] = new
