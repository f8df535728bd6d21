"""The journal: an eventsourcing Application holding every turn and the caregiver's settings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import Notification

from appliance.journal.aggregates import SETTINGS_ID, Device, DeviceSettings
from appliance.journal.chain import Break, ChainedPostgresRecorder, ChainedSQLiteRecorder, verify
from appliance.journal.store import StoreError, store_env, store_failure
from appliance.settings import Settings
from appliance.turn import Turn

PAGE = 2000
RECENT_EVENTS = 240
"""How far back the projections of `say` look: enough for the pending question, the last
minute's actions and the undo stack of a normal session, and cheap to read on every turn."""


class Journal(Application[UUID]):
    name = "appliance"
    snapshotting_intervals = {DeviceSettings: 20, Device: 50}  # noqa: RUF012 (eventsourcing API)

    def __init__(self, store: str | None = None) -> None:
        env = store_env(store)
        self._env = env
        self._tail: dict[UUID, Turn] = {}
        self._tail_upto = 0
        try:
            super().__init__(env=env)
        except Exception as e:  # the store itself is unreachable or unusable
            raise StoreError(store_failure("open", e, env)) from None

    # -- writing -----------------------------------------------------------------------

    def record(self, *aggregates: Any) -> None:
        try:
            self.save(*aggregates)
        except Exception as e:
            raise StoreError(store_failure("write to", e, self._env)) from None

    # -- settings ----------------------------------------------------------------------

    def _settings_aggregate(self) -> DeviceSettings:
        try:
            return cast(DeviceSettings, self.repository.get(SETTINGS_ID))
        except AggregateNotFoundError:
            return DeviceSettings()

    def settings(self) -> Settings:
        return Settings.from_stored(self._settings_aggregate().values)

    def change_setting(self, key: str, value: Any, by: str) -> tuple[Any, Any]:
        """Record a change; returns (old, new). The value must already be validated."""
        aggregate = self._settings_aggregate()
        old = getattr(self.settings(), key)
        new = list(value) if isinstance(value, tuple) else value
        old = list(old) if isinstance(old, tuple) else old
        aggregate.change(key=key, old=old, new=new, by=by)
        self.record(aggregate)
        return old, new

    # -- devices -----------------------------------------------------------------------

    def device(self, name: str) -> Device:
        try:
            return cast(Device, self.repository.get(Device.create_id(name)))
        except AggregateNotFoundError:
            return Device(name)

    def device_fault(self, name: str, message: str) -> None:
        device = self.device(name)
        device.fault(message=message)
        self.record(device)

    def count_ignored_speech(self, name: str, count: int) -> None:
        if count:
            device = self.device(name)
            device.speech_ignored(count=count)
            self.record(device)

    def switch_pressed(self, name: str, switch: int, gesture: str, meaning: str) -> None:
        """Every switch press is journaled, with what it was taken to mean at that moment."""
        device = self.device(name)
        device.switch_pressed(switch=switch, gesture=gesture, meaning=meaning)
        self.record(device)

    # -- reading -----------------------------------------------------------------------

    def turn(self, turn_id: UUID) -> Turn:
        return cast(Turn, self.repository.get(turn_id))

    def find_turn(self, prefix: str) -> Turn | None:
        """A turn by its full id or the 8-character short id shown in the audit."""
        for n in self.notifications():
            oid = UUID(str(n.originator_id))
            if n.topic.endswith("Turn.TurnStarted") and oid.hex.startswith(prefix):
                return self.turn(oid)
        return None

    def notifications(self, start: int = 1) -> Iterator[Notification]:
        while True:
            page = self.recorder.select_notifications(start=start, limit=PAGE)
            yield from page
            if len(page) < PAGE:
                return
            start = page[-1].id + 1

    def domain_events(self, start: int = 1) -> Iterator[tuple[int, Any]]:
        """(notification id, event) oldest first; events are the aggregates' own dataclasses."""
        for n in self.notifications(start):
            yield n.id, self.mapper.to_domain_event(n)

    def recent_turns(self, window: int = RECENT_EVENTS) -> list[Turn]:
        """Turns with events among the last `window` stored events, newest first.

        The tail is kept between calls and only new notifications are read and folded, so a
        long-running appliance pays per new event, not per turn. Events already applied (our
        own saves, made on these same objects) are skipped by version.
        """
        last = self.recorder.max_notification_id() or 0
        if not self._tail_upto or last - self._tail_upto > window:
            self._tail.clear()
            start = max(1, last - window + 1)
        else:
            start = self._tail_upto + 1
        if last >= start:
            for n in self.recorder.select_notifications(start=start, limit=last - start + 1):
                if ":Turn." in n.topic:
                    self._fold(n)
        self._tail_upto = last
        while len(self._tail) > window // 4:  # turns are about 8 events each
            self._tail.pop(next(iter(self._tail)))
        return list(reversed(self._tail.values()))

    def _fold(self, n: Notification) -> None:
        oid = UUID(str(n.originator_id))
        turn = self._tail.pop(oid, None)  # re-inserted last: the dict is oldest-first
        if turn is None and n.originator_version != 1:
            turn = self.turn(oid)  # began before the tail; load it whole
        elif turn is None or n.originator_version > turn.version:
            turn = self.mapper.to_domain_event(n).mutate(turn)  # type: ignore[attr-defined]
        self._tail[oid] = cast(Turn, turn)

    def pending_turn(self, recent: list[Turn] | None = None) -> Turn | None:
        return next((t for t in recent or self.recent_turns() if t.pending), None)

    def undo_stack(self, recent: list[Turn] | None = None) -> list[Turn]:
        return [t for t in recent or self.recent_turns() if t.undoable]

    def in_flight_turns(self, recent: list[Turn] | None = None) -> list[Turn]:
        return [t for t in recent or self.recent_turns() if t.in_flight]

    def verify(self) -> list[Break]:
        recorder = self.recorder
        assert isinstance(recorder, ChainedSQLiteRecorder | ChainedPostgresRecorder)
        return verify(list(self.notifications()), recorder.chain())


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
