"""The journal: an eventsourcing Application holding every turn and the caregiver's settings."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError, Notification

from appliance.journal.aggregates import SETTINGS_ID, Device, DeviceSettings
from appliance.journal.chain import Break, ChainedPostgresRecorder, ChainedSQLiteRecorder, verify
from appliance.journal.store import StoreError, store_env
from appliance.settings import Settings
from appliance.turn import Turn

A = TypeVar("A", Device, Turn)
PAGE = 2000
RECENT_EVENTS = 240
"""How far back the projections of `say` look: enough for the pending question, the last
minute's actions and the undo stack of a normal session, and cheap to read on every turn."""
CONFLICT_ATTEMPTS = 5
"""How often a change to an aggregate that other processes also write (an open question, an
action whose process died, a device's counters) is tried afresh after losing a race. Each loss
means another process moved it on; the bound only guards against a livelock."""
AMEND_ATTEMPTS = 20  # events that always still apply: retried longer, with back-off


class JournalConflict(StoreError):
    """Another process stored events for the same aggregate first (a version conflict):
    read the aggregate again and decide afresh whether the change still applies."""

    def __init__(self, message: str, aggregate_ids: list[UUID]) -> None:
        super().__init__(message)
        self.aggregate_ids = aggregate_ids


class Journal(Application[UUID]):
    name = "appliance"
    snapshotting_intervals = {DeviceSettings: 20, Device: 50}  # noqa: RUF012 (eventsourcing API)

    def __init__(self, store: str | None = None) -> None:
        env = store_env(store)
        self._tail: dict[UUID, Turn] = {}
        self._tail_upto = 0
        try:
            super().__init__(env=env)
        except Exception as e:  # the store itself is unreachable or unusable
            raise StoreError(f"cannot open the journal store: {_first_line(e)}") from None

    # -- writing -----------------------------------------------------------------------

    def record(self, *aggregates: Any) -> None:
        """Store the aggregates' new events in one transaction.

        Raises `JournalConflict` when another process stored events for one of them first;
        the others keep their events, to be recorded again. Any other failure is a StoreError.
        """
        pending = [(a, list(a.pending_events)) for a in aggregates]
        try:
            self.save(*aggregates)
        except Exception as e:
            for a, _events in pending:
                self._tail.pop(a.id, None)  # its folded state may hold the unsaved events
            moved = self._moved_on(pending) if isinstance(e, IntegrityError) else []
            if not moved:
                raise StoreError(f"cannot write to the journal: {_first_line(e)}") from None
            for a, events in pending:
                if a.id not in moved:
                    a.pending_events[:] = events
            names = ", ".join(
                f"{type(a).__name__} {a.id.hex[:8]}" for a, _ in pending if a.id in moved
            )
            raise JournalConflict(
                f"cannot write to the journal: another process changed {names} first", moved
            ) from None

    def _moved_on(self, pending: list[tuple[Any, list[Any]]]) -> list[UUID]:
        """The aggregates whose next version another process has stored (a version conflict).

        Asked of the store rather than read from the error: a UNIQUE error from the chain
        table is damage to report, not a race to retry.
        """
        moved = []
        for a, events in pending:
            try:
                newer = events and self.recorder.select_events(
                    a.id, gt=events[0].originator_version - 1, limit=1
                )
            except Exception:  # the store cannot even be read: not a race
                return []
            if newer:
                moved.append(a.id)
        return moved

    # -- settings ----------------------------------------------------------------------

    def _settings_aggregate(self) -> DeviceSettings:
        try:
            return cast(DeviceSettings, self.repository.get(SETTINGS_ID))
        except AggregateNotFoundError:
            return DeviceSettings()

    def settings(self) -> Settings:
        return Settings.model_validate(self._settings_aggregate().values)

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

    def _amend(self, load: Callable[[], A], change: Callable[[A], None]) -> None:
        """Record one event that always still applies (a device's counter, what was said) on
        an aggregate other processes write too: after a version conflict it is read again and
        the event recorded afresh, with a random few milliseconds' back-off, since writers
        that keep colliding (a switch pressed from two processes) would collide again."""
        for attempt in range(AMEND_ATTEMPTS):
            aggregate = load()
            change(aggregate)
            try:
                self.record(aggregate)
            except JournalConflict:
                if attempt == AMEND_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
                continue
            return

    def device_fault(self, name: str, message: str) -> None:
        self._amend(lambda: self.device(name), lambda device: device.fault(message=message))

    def count_ignored_speech(self, name: str, count: int) -> None:
        if count:
            self._amend(lambda: self.device(name), lambda d: d.speech_ignored(count=count))

    def switch_pressed(self, name: str, switch: int, gesture: str, meaning: str) -> None:
        """Every switch press is journaled, with what it was taken to mean at that moment."""
        self._amend(
            lambda: self.device(name),
            lambda device: device.switch_pressed(switch=switch, gesture=gesture, meaning=meaning),
        )

    def spoke(self, turn_id: UUID, text: str, timings: dict[str, float]) -> None:
        """What was said for a turn, once the audio is out (the turn may have moved on since)."""
        self._amend(lambda: self.turn(turn_id), lambda t: t.spoke(text=text, timings=timings))

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

    def _view(self, recent: list[Turn] | None) -> list[Turn]:
        """The tail an utterance read (even when empty), else the tail as it is now."""
        return self.recent_turns() if recent is None else recent

    def pending_turn(self, recent: list[Turn] | None = None) -> Turn | None:
        return next((t for t in self._view(recent) if t.pending), None)

    def open_questions(self, recent: list[Turn] | None = None) -> list[Turn]:
        """Turns waiting for an answer, newest first: more than one only when processes asked
        at the same moment."""
        return [t for t in self._view(recent) if t.pending]

    def undo_stack(self, recent: list[Turn] | None = None) -> list[Turn]:
        return [t for t in self._view(recent) if t.undoable]

    def in_flight_turns(self, recent: list[Turn] | None = None) -> list[Turn]:
        return [t for t in self._view(recent) if t.in_flight]

    def verify(self) -> list[Break]:
        recorder = self.recorder
        assert isinstance(recorder, ChainedSQLiteRecorder | ChainedPostgresRecorder)
        return verify(list(self.notifications()), recorder.chain())


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
