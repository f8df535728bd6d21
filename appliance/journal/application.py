"""The journal: an eventsourcing Application holding every turn and the caregiver's settings."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar, cast
from uuid import UUID, uuid4

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Snapshot
from eventsourcing.persistence import IntegrityError, Notification, StoredEvent

from appliance.journal.aggregates import (
    EPOCH_ID,
    RETENTION_ID,
    SETTINGS_ID,
    Device,
    DeviceSettings,
    JournalEpoch,
    Retention,
)
from appliance.journal.chain import ChainedPostgresRecorder, ChainedSQLiteRecorder, RawEvent
from appliance.journal.key import key_path, load_key
from appliance.journal.retention import plan_removal, recorded_removals
from appliance.journal.settings_log import SettingsLog
from appliance.journal.store import NoJournal, StoreError, store_env, store_failure
from appliance.journal.verification import (
    Break,
    Head,
    check_chain,
    check_expected_head,
    describe,
)
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

    def __init__(self, store: str | None = None, create: bool = True) -> None:
        """`create` False for readers (audit, verify, settings show, replay): a missing journal
        is an error, nothing is created or written, and read-only media can be read."""
        env = store_env(store, create)
        self._env = env
        self._tail: dict[UUID, Turn] = {}
        self._tail_upto = 0
        self._notices: list[str] = []
        self._settings_cache: tuple[tuple[Any, ...], SettingsLog] | None = None
        self._told: set[str] = set()
        self._epoch: str | None = None
        self.key = load_key(create)
        try:
            super().__init__(env=env)
            self.chained.key = self.key
            if not create and not self.chained.has_table(self.chained.events_table_name):
                where = env.get("POSTGRES_DBNAME") or env.get("SQLITE_DBNAME")
                raise NoJournal(f"no journal in {where} (nothing was created)")
        except StoreError:
            raise
        except Exception as e:  # the store itself is unreachable or unusable
            raise StoreError(store_failure("open", e, env)) from None
        if create:
            self._ensure_epoch()

    def epoch(self) -> str | None:
        """The journal's epoch (32 hex digits); None until a writer has opened it."""
        if self._epoch is None:
            try:
                self._epoch = cast(JournalEpoch, self.repository.get(EPOCH_ID)).epoch
            except AggregateNotFoundError:
                return None
            except Exception as e:  # a damaged epoch event: verify names it; keep serving
                self.notice(f"The journal's epoch cannot be read ({_first_line(e)}).")
                return None
        return self._epoch

    def _ensure_epoch(self) -> None:
        """A new journal, or one from before epochs, gets its epoch on the first writer's open;
        two openers racing agree on whichever stored it first."""
        if self.epoch() is not None:
            return
        try:
            self.record(JournalEpoch(epoch=uuid4().hex))
        except JournalConflict:
            pass  # another process made it a moment ago: read theirs below
        except StoreError:
            return  # cannot write now (read-only media, a full disk): the next writer will
        self.epoch()

    def new_epoch(self, reason: str) -> str:
        """Start a new epoch (see `JournalEpoch.restart`); returns it."""
        aggregate = cast(JournalEpoch, self.repository.get(EPOCH_ID))
        aggregate.restart(epoch=uuid4().hex, reason=reason)
        self.record(aggregate)
        self._epoch = aggregate.epoch
        return aggregate.epoch

    @property
    def chained(self) -> ChainedSQLiteRecorder | ChainedPostgresRecorder:
        recorder = self.recorder
        assert isinstance(recorder, ChainedSQLiteRecorder | ChainedPostgresRecorder)
        return recorder

    def notice(self, text: str) -> None:
        """Damage found while serving: said once per process, never raised."""
        if text not in self._told:
            self._told.add(text)
            self._notices.append(text)

    def take_notices(self) -> list[str]:
        """What the person should hear about the journal's state since the last call."""
        taken, self._notices = self._notices, []
        return taken

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
                raise StoreError(store_failure("write to", e, self._env)) from None
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

    def take_snapshot(self, *args: Any, **kwargs: Any) -> None:
        """A snapshot is only a shortcut: failing to take one must not fail the save, whose
        events are already stored (a damaged older snapshot would otherwise brick writes)."""
        try:
            super().take_snapshot(*args, **kwargs)
        except Exception as e:
            self.notice(f"A journal snapshot could not be taken ({_first_line(e)}).")

    # -- settings ----------------------------------------------------------------------

    def _settings_log(self) -> SettingsLog:
        """The settings folded from their chained events only, never from a snapshot."""
        # A long-running appliance folds again only when a settings event came or went.
        try:
            marker = self.chained.query(
                f"SELECT count(*), max(rowid) FROM {self.chained.events_table_name} "
                "WHERE originator_id=?",
                (SETTINGS_ID.hex,),
            )[0]
            if self._settings_cache is not None and self._settings_cache[0] == marker:
                log = self._settings_cache[1]
            else:
                rows = self.chained.raw_events(SETTINGS_ID)
                digests = self.chained.chain_digests([r[0] for r in rows]) if self.key else {}
                log = SettingsLog.fold(rows, digests, self.key, self.mapper)
                self._settings_cache = (marker, log)
        except Exception:  # the file is damaged where the settings are: the safe defaults
            log = SettingsLog.unreadable()
        if log.damage:
            self.notice(log.notice())
        return log

    def settings(self) -> Settings:
        return self._settings_log().settings

    def chosen_settings(self) -> frozenset[str]:
        """The names of the settings a caregiver set; the others hold their defaults."""
        return self._settings_log().chosen

    def change_setting(self, key: str, value: Any, by: str) -> tuple[Any, Any]:
        """Record a change; returns (old, new). The value must already be validated."""
        log = self._settings_log()
        aggregate = log.aggregate
        self._settings_cache = None  # the aggregate changes below; fold afresh next time
        old = getattr(log.settings, key)
        new = list(value) if isinstance(value, tuple) else value
        old = list(old) if isinstance(old, tuple) else old
        aggregate.change(key=key, old=old, new=new, by=by)
        self.record(aggregate)
        return old, new

    # -- devices -----------------------------------------------------------------------

    def device(self, name: str) -> Device:
        device_id = Device.create_id(name)
        try:
            return cast(Device, self.repository.get(device_id))
        except AggregateNotFoundError:
            return Device(name)
        except Exception as e:  # a damaged snapshot or event: fold what can be read
            self.notice(f"The journal's record of the {name} is damaged ({_first_line(e)}).")
            folded: Any = None
            for _nid, event in self._decoded(self.chained.raw_events(device_id)):
                folded = event.mutate(folded)
            return cast(Device, folded) if folded is not None else Device(name)

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

    def remove_transcripts(self, before: datetime, by: str) -> int:
        """Words said, typed and answered in events before `before` rewritten to a marker;
        the removal is journaled first, with each rewritten event's new digest. Returns how
        many events were rewritten."""
        if self.key is None:
            raise StoreError(f"cannot remove transcripts: there is no device key at {key_path()}")
        planned = plan_removal(self.chained.raw_events(), self.mapper, self.key, before)
        if not planned:
            return 0
        try:
            retention = cast(Retention, self.repository.get(RETENTION_ID))
        except AggregateNotFoundError:
            retention = Retention()
        retention.removed(before=before.isoformat(), by=by,
                          digests={str(nid): d for nid, _state, d in planned})
        self.record(retention)  # written before the rewrite: a crash between leaves both true
        self.chained.rewrite_states([(state, nid) for nid, state, _d in planned])
        self._tail.clear()
        self._tail_upto = 0
        return len(planned)

    def apply_retention(self, by: str, now: datetime | None = None) -> int:
        """Remove the words older than the caregiver's `transcript_days` (0: keep them)."""
        days = self.settings().transcript_days
        if not days:
            return 0
        return self.remove_transcripts((now or datetime.now(UTC)) - timedelta(days=days), by)

    def web_access(self, what: str, caregiver: str, address: str) -> None:
        """A caregiver's pairing, login, failed login or logout on the web page."""
        self._amend(
            lambda: self.device("web"),
            lambda d: d.web_access(what=what, caregiver=caregiver, address=address),
        )

    def check_and_record(self) -> list[Break]:
        """Verify the journal and record the verdict (device "journal"): the first damage in
        words, or intact, with the head checked."""
        breaks = self.verify(None)
        head = str(self.head()) if not breaks else ""
        problem = str(breaks[0]) if breaks else ""
        self._amend(lambda: self.device("journal"),
                    lambda d: d.journal_checked(intact=not breaks, problem=problem, head=head))
        return breaks

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
        """Stored events oldest first; a row that cannot be read is skipped with a notice."""
        while True:
            try:
                page = self.chained.query(
                    "SELECT rowid, originator_id, originator_version, topic, state "
                    f"FROM {self.chained.events_table_name} WHERE rowid>=? ORDER BY rowid LIMIT ?",
                    (start, PAGE),
                )
            except Exception as e:  # the file is damaged past reading (a malformed page)
                raise StoreError(f"the journal cannot be read: {_first_line(e)}") from None
            for row in page:
                n = self._notification(cast(RawEvent, row))
                if n is not None:
                    yield n
            if len(page) < PAGE:
                return
            start = page[-1][0] + 1

    def _notification(self, row: RawEvent) -> Notification | None:
        nid, oid, version, topic, state = row
        try:
            if not isinstance(state, bytes | memoryview) or not isinstance(version, int):
                raise ValueError("a field has the wrong type")
            return Notification(
                id=nid,
                originator_id=oid if isinstance(oid, UUID) else UUID(hex=str(oid)),
                originator_version=version,
                topic=str(topic),
                state=bytes(state),
            )
        except ValueError:
            self._damaged(nid, describe(row))
            return None

    def _damaged(self, nid: int, what: str) -> None:
        self.notice(
            f"Event #{nid} of the journal ({what}) is damaged and was left out; "
            "a caregiver should run appliance audit verify."
        )

    def _decoded(self, rows: list[RawEvent]) -> Iterator[tuple[int, Any]]:
        for row in rows:
            n = self._notification(row)
            if n is None:
                continue
            try:
                yield n.id, self.mapper.to_domain_event(n)
            except Exception:  # a forged or damaged state: never stop the appliance
                self._damaged(n.id, describe(row))

    def domain_events(self, start: int = 1) -> Iterator[tuple[int, Any]]:
        """(notification id, event) oldest first; events are the aggregates' own dataclasses."""
        for n in self.notifications(start):
            try:
                event = self.mapper.to_domain_event(n)
            except Exception:
                self._damaged(n.id, f"{n.topic.rsplit(':', 1)[-1]} v{n.originator_version}")
                continue
            yield n.id, event

    def recent_turns(self, window: int = RECENT_EVENTS) -> list[Turn]:
        """Turns with events among the last `window` stored events, newest first.

        The tail is kept between calls and only new notifications are read and folded, so a
        long-running appliance pays per new event, not per turn. Events already applied (our
        own saves, made on these same objects) are skipped by version. A turn that cannot be
        read is left out with a notice: the appliance keeps serving.
        """
        last = self.recorder.max_notification_id() or 0
        if not self._tail_upto or last - self._tail_upto > window or last < self._tail_upto:
            self._tail.clear()
            start = max(1, last - window + 1)
        else:
            start = self._tail_upto + 1
        if last >= start:
            for n in self.notifications(start):
                if n.id > last:  # written since `last` was read: folded next time
                    break
                if ":Turn." in n.topic:
                    self._fold(n)
        self._tail_upto = last
        while len(self._tail) > window // 4:  # turns are about 8 events each
            self._tail.pop(next(iter(self._tail)))
        return list(reversed(self._tail.values()))

    def _fold(self, n: Notification) -> None:
        oid = UUID(str(n.originator_id))
        turn = self._tail.pop(oid, None)  # re-inserted last: the dict is oldest-first
        try:
            if turn is None and n.originator_version != 1:
                turn = self.turn(oid)  # began before the tail; load it whole
            elif turn is None or n.originator_version > turn.version:
                turn = self.mapper.to_domain_event(n).mutate(turn)  # type: ignore[attr-defined]
        except Exception:
            self._damaged(n.id, f"{n.topic.rsplit(':', 1)[-1]} v{n.originator_version}")
            return
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

    # -- integrity ---------------------------------------------------------------------

    def head(self) -> Head:
        """The chain's head (count, last event, last link): cheap, for the panel and the web."""
        try:
            count, nid, link = self.chained.head()
        except Exception as e:  # a damaged file: say so in one line, as everywhere
            raise StoreError(f"the journal cannot be read: {_first_line(e)}") from None
        return Head(count, nid, link)

    def verify(self, expect: tuple[int, str] | None = None) -> list[Break]:
        """Every event, chain row and snapshot checked; damage is named, never raised."""
        try:
            return self._verify(expect)
        except Exception as e:  # the file itself is damaged past reading
            return [Break(0, f"the journal cannot be read: {_first_line(e)}")]

    def _verify(self, expect: tuple[int, str] | None) -> list[Break]:
        recorder = self.chained
        damaged = recorder.file_problems()
        if damaged:
            return [Break(0, f"the journal file is damaged: {damaged[0]}")] + [
                Break(0, f"the journal file is damaged: {p}") for p in damaged[1:]
            ]
        chain = recorder.chain()
        keys = recorder.chain_keys()
        if self.key is None:
            if not chain:
                return []
            return [Break(0, f"cannot verify: there is no device key at {key_path()}")]
        events = recorder.raw_events()
        breaks = check_chain(events, chain, keys, self.key, recorded_removals(events, self.mapper))
        if expect is not None:
            missing = check_expected_head(chain, expect)
            if missing is not None:
                breaks.insert(0, missing)
        breaks.extend(self._check_snapshots(events))
        return breaks

    def _check_snapshots(self, events: list[RawEvent]) -> list[Break]:
        """Each snapshot must equal the fold of the events it claims to summarise."""
        if self.snapshots is None:
            return []
        table = getattr(self.snapshots.recorder, "events_table_name", "stored_snapshots")
        by_aggregate: dict[str, list[RawEvent]] = {}
        for e in events:
            by_aggregate.setdefault(str(e[1]).replace("-", ""), []).append(e)
        breaks = []
        for oid, version, topic, state in self.chained.raw_snapshots(table):
            what = f"the snapshot of {str(oid).replace('-', '')[:8]} at v{version}"
            try:
                expected = self._snapshot_from_events(
                    by_aggregate.get(str(oid).replace("-", ""), []), version
                )
                stored = (
                    self.mapper.to_domain_event(
                        StoredEvent(UUID(str(oid)), version, str(topic), bytes(state))
                    )
                    if str(topic) == _SNAPSHOT_TOPIC
                    else None
                )
            except Exception as e:
                breaks.append(Break(0, f"{what} cannot be read ({_first_line(e)})"))
                continue
            if expected is None:
                breaks.append(Break(0, f"{what} summarises events that are not in the journal"))
            elif stored is None or not _same_snapshot(stored, expected):
                breaks.append(Break(0, f"{what} does not match its events (forged or edited)"))
        return breaks

    def _snapshot_from_events(self, rows: list[RawEvent], version: int) -> Snapshot | None:
        aggregate: Any = None
        for _nid, event in self._decoded(
            [r for r in rows if isinstance(r[2], int) and r[2] <= version]
        ):
            aggregate = event.mutate(aggregate)
        if aggregate is None or aggregate.version != version:
            return None
        return Snapshot.take(aggregate)


_SNAPSHOT_TOPIC = "eventsourcing.domain:Snapshot"


def _same_snapshot(stored: Any, expected: Snapshot) -> bool:
    return bool(
        stored.originator_version == expected.originator_version
        and stored.topic == expected.topic
        and stored.state == expected.state
    )


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
