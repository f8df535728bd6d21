"""The journal: an eventsourcing Application holding every turn and the caregiver's settings."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TypeVar, cast
from uuid import UUID, uuid4

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Snapshot
from eventsourcing.persistence import IntegrityError, Notification, StoredEvent

from appliance.desktop.seeing.taught import TaughtTarget
from appliance.journal.aggregates import (
    ALIASES_ID,
    EPOCH_ID,
    RETENTION_ID,
    SETTINGS_ID,
    TAUGHT_ID,
    Aliases,
    Device,
    DeviceSettings,
    JournalEpoch,
    Replaced,
    Retention,
    TaughtTargets,
)
from appliance.journal.alias_log import Alias, fold_aliases
from appliance.journal.chain import (
    ChainedPostgresRecorder,
    ChainedSQLiteRecorder,
    RawEvent,
    digest,
)
from appliance.journal.key import key_path, load_key
from appliance.journal.retention import plan_removal, recorded_removals
from appliance.journal.settings_log import SettingsLog, made_safe
from appliance.journal.store import (
    NoJournal,
    StoreError,
    first_line,
    journal_identity,
    store_env,
    store_failure,
)
from appliance.journal.taught_log import fold_taught
from appliance.journal.trust import WITNESSED, check_since, position, witness_breaks
from appliance.journal.verification import (
    Break,
    Head,
    check_chain,
    check_expected_head,
    describe,
)
from appliance.journal.witness import ForeignWitness, Witness, read_witness, write_witness
from appliance.limits import escape_controls
from appliance.settings import Settings
from appliance.turn import Outcome, Turn

A = TypeVar("A", Device, Turn, TaughtTargets, Aliases)
One = TypeVar("One", TaughtTargets, Aliases, Retention)
PAGE = 2000
RECENT_EVENTS = 240
"""How far back the projections of `say` look: enough for the pending question, the last
minute's actions and the undo stack of a normal session, and cheap to read on every turn."""
CONFLICT_ATTEMPTS = 5
"""How often a change to an aggregate that other processes also write (an open question, an
action whose process died, a device's counters) is tried afresh after losing a race. Each loss
means another process moved it on; the bound only guards against a livelock."""
AMEND_ATTEMPTS = 20  # events that always still apply: retried longer, with back-off
AMEND_BACKOFF_S = 0.005  # the first back-off's bound; it doubles with each loss
AMEND_BACKOFF_CAP_S = 0.5  # the longest a writer waits between two tries
CHECKER = "the appliance (journal check)"  # who a change made on finding a break is recorded by
BREAK_NOTICE = (
    "The journal was changed outside the appliance ({}). I am using the safe settings and "
    "forgetting any question I asked; a caregiver should run appliance audit verify."
)


class JournalConflict(StoreError):
    """Another process stored events for the same aggregate first (a version conflict):
    read the aggregate again and decide afresh whether the change still applies."""

    def __init__(self, message: str, aggregate_ids: list[UUID]) -> None:
        super().__init__(message)
        self.aggregate_ids = aggregate_ids


class Journal(Application[UUID]):
    name = "appliance"
    snapshotting_intervals = {DeviceSettings: 20, Device: 50}  # noqa: RUF012 (eventsourcing API)

    def __init__(
        self, store: str | None = None, create: bool = True, replaces: Replaced | None = None
    ) -> None:
        """`create` False for readers (audit, verify, settings show, replay): a missing journal
        is an error, nothing is created or written, and read-only media can be read. `replaces`:
        the damaged file a new journal starts in place of, named by its first event."""
        env = store_env(store, create)
        self._replaces = replaces
        self._env = env
        self._tail: dict[UUID, Turn] = {}
        self._tail_upto = 0
        self._notices: list[str] = []
        self._settings_cache: tuple[tuple[Any, ...], SettingsLog] | None = None
        self._told: set[str] = set()
        self._epoch: str | None = None
        self._writes = create
        self._identity = journal_identity(env)
        # A break found and not yet recorded: safe settings and no earlier turn trusted, in this
        # process, until it is (on read-only media, never).
        self._distrusted = False
        self._checking = False
        self._counted_at_open = False  # the first utterance need not count the rows again
        self._untrusted_turns: set[UUID] = set()
        self._known: set[int] = set()  # damaged events already reported (the witness's list)
        self._found: list[Break] = []  # damaged events found while reading, to report
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
        self.check_trust()
        self._counted_at_open = True
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
                self.notice(f"The journal's epoch cannot be read ({first_line(e)}).")
                return None
        return self._epoch

    def _ensure_epoch(self) -> None:
        """A new journal, or one from before epochs, gets its epoch on the first writer's open;
        two openers racing agree on whichever stored it first."""
        if self.epoch() is not None:
            return
        gone = self._replaces
        try:
            self.record(JournalEpoch(
                epoch=uuid4().hex, replaces=gone.file if gone else "",
                replaced_head=gone.head if gone else "", damage=gone.damage if gone else "",
            ))
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
        """Damage found while serving: said once per process, never raised. Stored text in it
        is shown escaped, so it cannot drive a terminal."""
        text = escape_controls(text)
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
        self.check_trust(counted=False)  # moves the device's witness on to the new head

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
            self.notice(f"A journal snapshot could not be taken ({first_line(e)}).")

    # -- trust ---------------------------------------------------------------------------

    def check_trust(self, counted: bool = True) -> list[Break]:
        """The chain checked from the device's witness to the head: only what was added since,
        by this or another process. A break is damage: said once, recorded for the caregiver
        (and the care home's server), the settings made safe and open questions forgotten.
        `counted`: also count the rows before the witness (not needed right after a commit)."""
        if self.key is None or self._checking:
            return []
        if counted and self._counted_at_open:
            counted = self._counted_at_open = False
        self._checking = True
        try:
            breaks, reached = self._check_since_witness(self.key, counted)
            if breaks:
                self._on_break(breaks)
            elif reached is not None and self._writes:
                self._keep_witness(reached.knowing(self._known))
            return breaks
        finally:
            self._checking = False

    def _check_since_witness(
        self, key: bytes, counted: bool
    ) -> tuple[list[Break], Witness | None]:
        try:
            changed_key: list[Break] = []
            try:
                witness = read_witness(self._identity, key)
                if witness is not None:
                    self._known.update(witness.known)
            except ForeignWitness:
                witness = None
                changed_key = [Break(0, "the device key is not the one that last checked "
                                        "this journal")]
            removed = recorded_removals(self.chained.raw_events(RETENTION_ID), self.mapper)
            check = check_since(self.chained, key, witness, removed, counted)
        except Exception as e:  # the file is damaged past reading
            return [Break(0, f"the journal cannot be read: {first_line(e)}")], None
        return changed_key + check.breaks, check.reached

    def _keep_witness(self, reached: Witness, forward_only: bool = True) -> None:
        assert self.key is not None
        try:
            write_witness(self._identity, self.key, reached, forward_only)
        except OSError as e:
            self.notice(f"The device's witness of the journal cannot be written ({e.strerror}).")

    def _on_break(self, breaks: list[Break]) -> None:
        self._distrusted = True
        self._tail.clear()
        self._tail_upto = 0
        self._settings_cache = None
        self.notice(BREAK_NOTICE.format(breaks[0]))
        self._known.update(b.notification_id for b in breaks if b.notification_id)
        if not self._writes:
            return
        for _attempt in range(CONFLICT_ATTEMPTS):
            try:
                self._record_break(breaks)
            except JournalConflict:
                continue
            except Exception:  # cannot write (read-only media, a full disk, a damaged page)
                return  # safe in this process, and found again at the next open
            self._distrusted = False
            try:
                with self.chained.consistent() as query:
                    reached = position(query)
            except Exception:
                return
            self._keep_witness(reached.knowing(self._known), forward_only=False)
            return

    def _record_break(self, breaks: list[Break]) -> None:
        """In one transaction: the break (what the care home's server alerts on), each setting
        made no more permissive than its default, and every open question forgotten."""
        log = self._settings_log()
        aggregate = log.aggregate
        safe = made_safe(log.settings)
        for name in Settings.model_fields:
            old, new = getattr(log.settings, name), getattr(safe, name)
            if old != new:
                aggregate.change(key=name, old=_plain(old), new=_plain(new), by=CHECKER)
        device = self.device("journal")
        device.journal_checked(intact=False, problem=str(breaks[0]), head="")
        questions = []
        for turn in self._verified_tail(RECENT_EVENTS).values():
            if turn.pending:
                turn.decline(by=CHECKER)
                turn.end(Outcome.cancelled)
                questions.append(turn)
        self._settings_cache = None
        self.record(aggregate, device, *questions)

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
        settings = self._settings_log().settings
        return made_safe(settings) if self._distrusted else settings

    def chosen_settings(self) -> frozenset[str]:
        """The names of the settings a caregiver set; the others hold their defaults."""
        return self._settings_log().chosen

    def change_setting(self, key: str, value: Any, by: str) -> tuple[Any, Any]:
        """Record a change; returns (old, new). The value must already be validated."""
        log = self._settings_log()
        aggregate = log.aggregate
        self._settings_cache = None  # the aggregate changes below; fold afresh next time
        old, new = _plain(getattr(log.settings, key)), _plain(value)
        aggregate.change(key=key, old=old, new=new, by=by)
        self.record(aggregate)
        return old, new

    # -- taught targets ----------------------------------------------------------------

    def taught_targets(self) -> list[TaughtTarget]:
        """Targets a person taught, from the events the keyed chain vouches for only; none
        while a break found in the journal is not yet recorded."""
        return fold_taught(self._vouched_events(TAUGHT_ID))

    def taught_at(self) -> dict[str, datetime]:
        """When each target was taught (its vouched `TargetTaught` event's time), by id."""
        return {str(event.target.get("id", "")): event.timestamp
                for _nid, event in self._vouched_events(TAUGHT_ID)
                if type(event).__name__ == "TargetTaught" and isinstance(event.target, dict)}

    def teach_target(self, target: TaughtTarget) -> None:
        fields = target.model_dump(mode="json", exclude={"by", "hits", "misses_since_hit"})
        self._amend(partial(self._the_one, TaughtTargets),
                    lambda t: t.taught(target=fields, by=target.by))

    def target_used(self, target_id: str, hit: bool) -> None:
        self._amend(partial(self._the_one, TaughtTargets),
                    lambda t: t.used(target=target_id, hit=hit))

    def forget_target(self, target_id: str, by: str) -> bool:
        """A taught target dropped (from the caregiver page: `by` is the caregiver's name);
        False when no such target is taught."""
        if target_id not in {t.id for t in self.taught_targets()}:
            return False
        self._amend(partial(self._the_one, TaughtTargets),
                    lambda t: t.forgotten(target=target_id, by=by))
        return True

    # -- aliases -----------------------------------------------------------------------

    def aliases(self) -> list[Alias]:
        """Names a person gave elements ("call Doctor Patel my doctor"), oldest first, from the
        events the keyed chain vouches for only (an edited one is reported as damage and left
        out); none while a break found in the journal is not yet recorded."""
        return fold_aliases(self._vouched_events(ALIASES_ID))

    def teach_alias(self, app: str, element: str, name: str, by: str, turn: str = "",
                    role: str = "") -> Alias:
        """Record that `name` means the element called `element` in `app` (replacing what
        `name` meant there before); `by`: who (voice, text, switch, or the caregiver's name),
        `turn`: the turn it was said in ("" from the caregiver page)."""
        alias_id = uuid4().hex[:12]
        fields = {"alias": alias_id, "app": app, "element": element, "role": role,
                  "name": name, "by": by, "turn": turn}
        self._amend(partial(self._the_one, Aliases), lambda a: a.taught(**fields))
        return next(a for a in reversed(self.aliases()) if a.id == alias_id)

    def forget_alias(self, alias_id: str, by: str, turn: str = "") -> bool:
        """Drop an alias (`by`: who, `turn`: the turn it was said in, "" from the caregiver
        page); False when no such alias is taught."""
        alias = next((a for a in self.aliases() if a.id == alias_id), None)
        if alias is None:
            return False
        self._amend(partial(self._the_one, Aliases), lambda a: a.forgotten(
            alias=alias.id, app=alias.app, element=alias.element, name=alias.name, by=by,
            turn=turn))
        return True

    # -- devices -----------------------------------------------------------------------

    def device(self, name: str) -> Device:
        device_id = Device.create_id(name)
        try:
            return cast(Device, self.repository.get(device_id))
        except AggregateNotFoundError:
            return Device(name)
        except Exception as e:  # a damaged snapshot or event: fold what can be read
            self.notice(f"The journal's record of the {name} is damaged ({first_line(e)}).")
            folded: Any = None
            try:
                for _nid, event in self._decoded(self.chained.raw_events(device_id)):
                    folded = event.mutate(folded)
            except Exception:  # a gap in its versions: its counters start again
                folded = None
            return cast(Device, folded) if folded is not None else Device(name)

    def _the_one(self, kind: type[One]) -> One:
        """The one aggregate of its kind (its id is fixed: the taught targets, the aliases,
        the retention record), or a new one when none is stored yet."""
        try:
            return cast(One, self.repository.get(kind.create_id()))
        except AggregateNotFoundError:
            return kind()

    def _amend(self, load: Callable[[], A], change: Callable[[A], None]) -> None:
        """Record one event that always still applies (a device's counter, what was said) on
        an aggregate other processes write too: after a version conflict it is read again and
        the event recorded afresh after a random back-off that doubles with each loss (full
        jitter), since writers that keep colliding (a switch pressed from four processes, on a
        busy machine where reading the aggregate takes longer than the back-off) collide again."""
        for attempt in range(AMEND_ATTEMPTS):
            aggregate = load()
            change(aggregate)
            try:
                self.record(aggregate)
            except JournalConflict:
                if attempt == AMEND_ATTEMPTS - 1:
                    raise
                bound = min(AMEND_BACKOFF_CAP_S, AMEND_BACKOFF_S * 2**attempt)
                time.sleep(random.uniform(0, bound))
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

    def voice_takes_added(self, phrase: str, kind: str, takes: int, source: str,
                          by: str) -> None:
        """That takes were added to the voice profile beside the journal; never their audio."""
        self._amend(lambda: self.device("microphone"), lambda d: d.voice_takes_added(
            phrase=phrase, kind=kind, takes=takes, source=source, by=by))

    def voice_takes_removed(self, phrase: str, takes: int, by: str) -> None:
        self._amend(lambda: self.device("microphone"),
                    lambda d: d.voice_takes_removed(phrase=phrase, takes=takes, by=by))

    def remove_transcripts(self, before: datetime, by: str) -> int:
        """Words said, typed and answered in events before `before` rewritten to a marker;
        the removal is journaled first, with each rewritten event's new digest. Returns how
        many events were rewritten."""
        if self.key is None:
            raise StoreError(f"cannot remove transcripts: there is no device key at {key_path()}")
        planned = plan_removal(self.chained.raw_events(), self.mapper, self.key, before)
        if not planned:
            return 0
        retention = self._the_one(Retention)
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
        for page in self._pages(start):
            for row in page:
                n = self._notification(row)
                if n is not None:
                    yield n

    def _pages(self, start: int) -> Iterator[list[RawEvent]]:
        while True:
            try:
                page = self.chained.query(
                    "SELECT rowid, originator_id, originator_version, topic, state "
                    f"FROM {self.chained.events_table_name} WHERE rowid>=? ORDER BY rowid LIMIT ?",
                    (start, PAGE),
                )
            except Exception as e:  # the file is damaged past reading (a malformed page)
                raise StoreError(f"the journal cannot be read: {first_line(e)}") from None
            yield [cast(RawEvent, tuple(row)) for row in page]
            if len(page) < PAGE:
                return
            start = page[-1][0] + 1

    def _vouched_events(self, record_id: UUID) -> list[tuple[int, Any]]:
        """(notification id, event) of one record (the taught targets, the aliases), oldest
        first, only those the keyed chain vouches for: any other is reported as damage and
        left out. None while a break found in the journal is not yet recorded, nor when the
        record cannot be read where it is stored (then none of it is trusted)."""
        if self._distrusted:
            return []
        try:
            rows = self.chained.raw_events(record_id)
        except Exception:  # damaged where they are: nothing of the record is trusted
            return []
        vouched = []
        for row, ok in zip(rows, self._vouched(rows), strict=True):
            if ok:
                vouched.append(row)
            else:
                self._damaged(row[0], describe(row))
        return list(self._decoded(vouched))

    def _vouched(self, rows: list[RawEvent]) -> list[bool]:
        """For each row: does the chain vouch for it (its digest is the chain's)? Without the
        key (a reader elsewhere) nothing can be checked, and nothing is acted on either."""
        if self.key is None:
            return [True] * len(rows)
        digests = self.chained.chain_digests([r[0] for r in rows])
        return [digests.get(r[0]) == digest(self.key, *r[1:]) for r in rows]

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
        """Turns with events among the last `window` stored events, newest first; none while a
        break found in the journal is not yet recorded.

        The tail is kept between calls and only new notifications are read and folded, so a
        long-running appliance pays per new event, not per turn. Events already applied (our
        own saves, made on these same objects) are skipped by version. Only events the chain
        vouches for are folded: a turn with any other is left out with a notice, never acted
        on (its question answered, its action undone or reported).
        """
        if self._distrusted:
            return []
        tail = self._verified_tail(window)
        if self._found and not self._checking:
            found, self._found = self._found, []
            self._on_break(found)
            tail = {} if self._distrusted else self._verified_tail(window)
        return list(reversed(tail.values()))

    def _verified_tail(self, window: int) -> dict[UUID, Turn]:
        last = self.recorder.max_notification_id() or 0
        if not self._tail_upto or last - self._tail_upto > window or last < self._tail_upto:
            self._tail.clear()
            start = max(1, last - window + 1)
        else:
            start = self._tail_upto + 1
        if last >= start:
            for page in self._pages(start):
                page = [row for row in page if row[0] <= last]  # later ones: folded next time
                for row, vouched in zip(page, self._vouched(page), strict=True):
                    if ":Turn." in str(row[3]):
                        n = self._notification(row)
                        if n is not None:
                            self._fold(n, vouched, row)
                    elif not vouched and row[0] not in self._known:
                        self._found.append(Break(row[0], "modified or added outside the journal",
                                                 describe(row)))
        self._tail_upto = last
        while len(self._tail) > window // 4:  # turns are about 8 events each
            self._tail.pop(next(iter(self._tail)))
        return self._tail

    def _fold(self, n: Notification, vouched: bool, row: RawEvent) -> None:
        oid = UUID(str(n.originator_id))
        if oid in self._untrusted_turns:
            return
        if not vouched:
            self._untrust(oid, row)
            return
        turn = self._tail.pop(oid, None)  # re-inserted last: the dict is oldest-first
        try:
            if turn is None and n.originator_version != 1:
                turn = self.trusted_turn(oid)  # began before the tail; load it whole
                if turn is None:
                    return
            elif turn is None or n.originator_version > turn.version:
                turn = self.mapper.to_domain_event(n).mutate(turn)  # type: ignore[attr-defined]
        except Exception:
            self._damaged(n.id, f"{n.topic.rsplit(':', 1)[-1]} v{n.originator_version}")
            self._untrusted_turns.add(oid)
            return
        self._tail[oid] = cast(Turn, turn)

    def trusted_turn(self, turn_id: UUID) -> Turn | None:
        """The turn folded from its stored events, or None when the chain does not vouch for
        every one of them (or there are none): then it decides nothing."""
        if turn_id in self._untrusted_turns:
            return None
        rows = self.chained.raw_events(turn_id)
        for row, vouched in zip(rows, self._vouched(rows), strict=True):
            if not vouched:
                self._untrust(turn_id, row)
                return None
        folded: Any = None
        for row in rows:
            n = self._notification(row)
            try:
                if n is None:
                    raise ValueError(row)
                folded = self.mapper.to_domain_event(n).mutate(folded)  # type: ignore[attr-defined]
            except Exception:
                self._damaged(row[0], describe(row))
                self._untrusted_turns.add(turn_id)
                return None
        return folded if isinstance(folded, Turn) else None

    def _untrust(self, turn_id: UUID, row: RawEvent) -> None:
        """A turn with an event the chain does not vouch for decides nothing; the event is
        damage to report, once."""
        self._untrusted_turns.add(turn_id)
        self._tail.pop(turn_id, None)
        if row[0] not in self._known:
            self._found.append(Break(row[0], "modified or added outside the journal",
                                     describe(row)))

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
            raise StoreError(f"the journal cannot be read: {first_line(e)}") from None
        return Head(count, nid, link)

    def verify(self, expect: tuple[int, str] | None = None) -> list[Break]:
        """Every event, chain row and snapshot checked; damage is named, never raised."""
        try:
            return self._verify(expect)
        except Exception as e:  # the file itself is damaged past reading
            return [Break(0, f"the journal cannot be read: {first_line(e)}")]

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
        else:
            breaks[:0] = self._witness_breaks(self.key)
        breaks.extend(self._check_snapshots(events))
        return breaks or self._found_earlier()

    def _witness_breaks(self, key: bytes) -> list[Break]:
        """The device's own witness, as a recorded head: a cut end shows without one."""
        try:
            witness = read_witness(self._identity, key)
        except ForeignWitness:
            return []  # the chain's key rows say so already
        return witness_breaks(self.chained, witness) if witness is not None else []

    def _found_earlier(self) -> list[Break]:
        """Damage the live path found and recorded that leaves no trace in the chain itself
        (an end cut off with its chain rows), as the journal's record of it."""
        for nid, event in reversed(list(self._decoded(self.chained.raw_events(
                Device.create_id("journal"))))):
            if type(event).__name__ != "JournalChecked":
                continue
            if event.intact:
                return []
            if any(words in str(event.problem) for words in WITNESSED):
                return [Break(0, f"event #{nid} records damage found earlier: {event.problem}")]
        return []

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
                breaks.append(Break(0, f"{what} cannot be read ({first_line(e)})"))
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


def _plain(value: Any) -> Any:
    """A setting's value as events store it (a tuple as a list)."""
    return list(value) if isinstance(value, tuple) else value
