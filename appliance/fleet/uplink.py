"""The kiosk's uplink: follows the journal's notification log and pushes each batch of events
after the position the central server acknowledged. The kiosk's journal stays the source of
truth; the network may be away for days, and everything arrives when it is back."""

from __future__ import annotations

import base64
import json
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
from eventsourcing.application import LocalNotificationLog
from eventsourcing.persistence import Notification

from appliance.fleet.link import FleetError, FleetLink, LinkFile, pinned_context
from appliance.fleet.outgoing import outgoing_state
from appliance.fleet.signing import events_digest, sign, signed_text
from appliance.fleet.wire import Batch, Position, WireEvent
from appliance.journal.application import Journal
from appliance.journal.chain import CHAIN_TABLE, GENESIS, oid_text
from appliance.journal.serving import renewed
from appliance.journal.store import first_line

BATCH = 500
POLL_S = 0.2
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 60.0
PROBE_S = 2.0
"""While backing off, a look at the link file and (the server being away) a health probe at
least this often (jittered down to half), so a re-join or the server's return ends the wait."""
PROBE_TIMEOUT_S = 5.0
STATUS_FILE = "fleet-uplink.json"
CHECK_EVERY_S = 24 * 3600.0
"""How often the uplink runs the journal's check and records the verdict (which it then sends)."""
STATUS_EVERY_S = 30.0
HEARTBEAT_S = 300.0
"""An idle uplink asks for its position this often, so the central server knows it is alive."""


class Refused(FleetError):
    """The central server refused this kiosk (unknown or revoked credential, not its key)."""


class Rejected(FleetError):
    """The central server refused a request for what it held (a batch it could not take)."""


class OutOfOrder(FleetError):
    """The central server holds a different position than the batch assumed."""

    def __init__(self, position: int) -> None:
        super().__init__(f"the central server holds up to #{position}")
        self.position = position


@dataclass
class UplinkStatus:
    """What the health page shows: how far behind the central copy is, and why."""

    central: str
    kiosk: str
    epoch: str
    state: str = "starting"  # ok, away, refused, starting
    detail: str = ""
    acknowledged: int = 0
    lag_events: int = 0
    lag_s: float = 0.0
    retry_at: float = 0.0  # when a backing-off uplink tries again at the latest (0: not waiting)
    updated: float = 0.0


def backoff_s(failures: int, rng: random.Random) -> float:
    """Full jitter (a random wait up to an exponentially growing cap), so a hundred kiosks
    coming back after the server restarts do not all knock at the same moment."""
    return rng.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** min(failures, 16)))


class Uplink:
    def __init__(
        self, journal: Journal, link: FleetLink, status_path: Path | None = None,
        batch: int = BATCH, clock: Callable[[], float] = time.time,
        link_file: Path | None = None,
    ) -> None:
        """`link_file`: where `link` was read, followed for a re-join while running."""
        epoch = journal.epoch()
        if epoch is None or journal.key is None:
            raise FleetError("the journal has no epoch yet: open it for writing once first")
        self.journal = journal
        self.log = LocalNotificationLog(journal.recorder, section_size=batch)
        self.batch = batch
        self.clock = clock
        self.rng = random.Random()
        self.status_path = status_path
        self.status = UplinkStatus(central=link.url, kiosk=link.kiosk, epoch=epoch)
        self.watch = LinkFile(link_file) if link_file is not None else None
        self.link = link
        self.client = _client(link)
        self.position: int | None = None
        self.checked_at: float | None = None
        self._saved: dict[str, Any] = {}

    # -- one step ---------------------------------------------------------------------

    def fetch_position(self) -> int:
        """Where the central copy of this epoch ends. A copy that went further than this
        journal, or differs from it there, means the journal was restored from a backup: it
        starts a new epoch (journaled), sent from its first event, so nothing it records is
        taken for what the central server already holds."""
        held = self._held()
        if held.position and held.link != self._link_at(held.position):
            self.status.epoch = self.journal.new_epoch(
                f"the central copy of epoch {held.epoch[:8]} goes further than this journal "
                f"(to #{held.position}): restored from a backup?")
            held = self._held()
        return held.position

    def _follow(self) -> None:
        """A journal file the kiosk set aside as damaged (appliance/journal/serving.py): go on
        with the new journal, under its own epoch, from its first event (which names the old
        file and the damage, and is followed by the check that raises the care team's alert)."""
        fresh = renewed(self.journal)
        epoch = fresh.epoch() if fresh is not None else None
        if fresh is None or epoch is None:
            return
        self.journal, old = fresh, self.journal
        old.close()  # the file set aside: nothing more is read from it here
        self.log = LocalNotificationLog(fresh.recorder, section_size=self.batch)
        self.status.epoch, self.status.acknowledged = epoch, 0
        self.position = self.checked_at = None

    def _relinked(self) -> bool:
        """A join rewrote the link file (a new credential and signing key, perhaps another
        server): go on with it, asking afresh where the central copy ends."""
        link = self.watch.changed(self.link) if self.watch is not None else None
        if link is None:
            return False
        self.client, old = _client(link), self.client
        old.close()
        self.link, self.position = link, None
        self.status.central, self.status.kiosk = link.url, link.kiosk
        return True

    def _held(self) -> Position:
        reply = self._checked(self.client.get("/v1/position", params={"epoch": self.status.epoch}))
        return Position.model_validate_json(reply.content)

    def _link_at(self, nid: int) -> str | None:
        rows = self.journal.chained.query(
            f"SELECT hash FROM {CHAIN_TABLE} WHERE notification_id=?", (nid,))
        return str(rows[0][0]) if rows else None

    def push_once(self) -> int:
        """Send the next batch, if any; returns how many events the server newly holds.
        Raises httpx.HTTPError, Refused, Rejected or OutOfOrder."""
        self._relinked()
        self._follow()
        if self.checked_at is None or self.clock() - self.checked_at > CHECK_EVERY_S:
            self.journal.check_and_record()  # a damaged journal is news for the care team
            self.checked_at = self.clock()
        if self.position is None:
            self.position = self.status.acknowledged = self.fetch_position()
        pending = self.log.select(self.position, self.batch, inclusive_of_start=False)
        self._lag(pending, self.position)
        if not pending:
            return 0
        batch = self._batch(self.position, pending)
        reply = self._checked(self.client.post(
            "/v1/batches", content=batch.model_dump_json(),
            headers={"Content-Type": "application/json"},
        ))
        acknowledged = Position.model_validate_json(reply.content).position
        sent, self.position = acknowledged - self.position, acknowledged
        self.status.acknowledged = acknowledged
        return sent

    def _batch(self, after: int, pending: Sequence[Notification]) -> Batch:
        chained = self.journal.chained
        rows = chained.query(
            f"SELECT notification_id, digest, hash FROM {CHAIN_TABLE} "
            "WHERE notification_id>? AND notification_id<=? ORDER BY 1",
            (after, pending[-1].id),
        )
        chain = {r[0]: (r[1], r[2]) for r in rows}
        transcripts = self.journal.settings().fleet_transcripts
        assert self.journal.key is not None
        events = []
        for n in pending:
            if n.id not in chain:
                raise FleetError(f"event #{n.id} has no chain row: run appliance audit verify")
            state, redacted = outgoing_state(n, self.journal.mapper, self.journal.key, transcripts)
            events.append(WireEvent(
                id=n.id, originator_id=oid_text(n.originator_id),
                originator_version=n.originator_version, topic=n.topic,
                state=base64.b64encode(state).decode(), digest=chain[n.id][0],
                link=chain[n.id][1], redacted_digest=redacted,
            ))
        keys = [(since, key) for since, key in chained.chain_keys() if since <= pending[-1].id]
        return self._signed(after, events, keys)

    def _signed(self, after: int, events: list[WireEvent], keys: list[tuple[int, str]]) -> Batch:
        """The batch with the kiosk's signature over its chain head (appliance/fleet/signing.py)."""
        if self.link.signing_key is None:
            raise Refused("this kiosk joined before batches were signed: join it again "
                          "(appliance central enroll, then appliance fleet join)")
        previous = self._link_at(after) if after else GENESIS
        if previous is None:
            raise FleetError(f"the central copy ends at #{after}, which this journal lacks")
        head, epoch = events[-1], self.status.epoch
        text = signed_text(self.link.kiosk, epoch, after, previous, (head.id, head.link),
                           events_digest(events, keys))
        return Batch(epoch=epoch, after=after, previous=previous, events=events, keys=keys,
                     signature=sign(self.link.signing_key, text))

    def _lag(self, pending: Sequence[Notification], acknowledged: int) -> None:
        """Events the central copy lacks, and how long the oldest of them has waited."""
        last = self.journal.recorder.max_notification_id() or 0
        self.status.lag_events = max(0, last - acknowledged)
        oldest = 0.0
        if pending:
            try:
                event: Any = self.journal.mapper.to_domain_event(pending[0])
                oldest = max(0.0, self.clock() - event.timestamp.timestamp())
            except Exception:  # a damaged event: its age is unknown, it is still sent
                oldest = 0.0
        self.status.lag_s = round(oldest, 3)

    def _checked(self, reply: httpx.Response) -> httpx.Response:
        if reply.status_code in (401, 403):
            raise Refused(f"the central server refused this kiosk: {_detail(reply)}")
        if reply.status_code == 409 and isinstance(_body(reply).get("position"), int):
            raise OutOfOrder(int(_body(reply)["position"]))
        if 400 <= reply.status_code < 500:
            raise Rejected(f"the central server refused the batch: {_detail(reply)}")
        reply.raise_for_status()
        return reply

    # -- the loop -----------------------------------------------------------------------

    def run(self, stop: threading.Event, poll_s: float = POLL_S) -> None:
        """Push until `stop` is set; on any failure, forget the position (the batch may or
        may not have landed: the server says), wait with back-off and jitter, try again."""
        failures = 0
        contact = self.clock()
        while not stop.is_set():
            try:
                sent = self.push_once()
            except OutOfOrder as e:
                self.position = e.position  # the server's word is the truth: resume there
                continue
            except Exception as e:  # a service: whatever failed is said and tried again
                failures += 1
                self.position = None
                with suppress(Exception):
                    self._lag(self.log.select(self.status.acknowledged, 1,
                                              inclusive_of_start=False), self.status.acknowledged)
                self.status.state = (
                    "refused" if isinstance(e, Refused)
                    else "away" if isinstance(e, httpx.HTTPError | OSError) else "problem")
                self.status.detail = first_line(e)
                wait = backoff_s(failures, self.rng)
                self.status.retry_at = round(self.clock() + wait, 3)
                self.save_status()
                # Probed only when nothing answered: a server that answers with an error is
                # not helped by being asked sooner.
                self._wait_out(stop, wait, away=isinstance(e, httpx.TransportError | OSError))
                continue
            failures = 0
            self.status.state, self.status.detail, self.status.retry_at = "ok", "", 0.0
            self.save_status()
            if sent:
                contact = self.clock()
            elif self.clock() - contact > HEARTBEAT_S:
                self.position, contact = None, self.clock()  # asked afresh: a heartbeat
            else:
                stop.wait(poll_s)

    def _wait_out(self, stop: threading.Event, seconds: float, away: bool) -> None:
        """The back-off, cut short by a re-join or, when the server was away, by its answer
        to a health probe: after an outage the kiosks notice within PROBE_S, not up to 60 s."""
        until = time.monotonic() + seconds
        while (left := until - time.monotonic()) > 0:
            if stop.wait(min(left, self.rng.uniform(PROBE_S / 2, PROBE_S))):
                return
            if self._relinked() or (away and self._answers()):
                return

    def _answers(self) -> bool:
        try:
            reply = self.client.get("/v1/health", timeout=PROBE_TIMEOUT_S)
        except httpx.HTTPError:
            return False
        return reply.status_code == 200

    def save_status(self, force: bool = False) -> None:
        """Written when it changed, else at most every STATUS_EVERY_S: an idle uplink polls
        five times a second, and an SD card should not be written that often."""
        now = self.clock()
        shown = asdict(self.status)
        shown.pop("updated")
        if self.status_path is None or (
            not force and shown == self._saved and now - self.status.updated < STATUS_EVERY_S
        ):
            return
        self.status.updated = round(now, 3)
        self._saved = shown
        write_status(self.status_path, asdict(self.status))

    def close(self) -> None:
        self.client.close()


def write_status(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(data))
    temporary.replace(path)


def read_status(folder: Path) -> dict[str, Any] | None:
    """The uplink's last status beside the journal, None when no uplink ever ran."""
    try:
        data: dict[str, Any] = json.loads((folder / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data


def _client(link: FleetLink) -> httpx.Client:
    return httpx.Client(
        base_url=link.url, verify=pinned_context(link.certificate), timeout=30.0,
        headers={"Authorization": f"Bearer {link.credential}"},
    )


def _body(reply: httpx.Response) -> dict[str, Any]:
    try:
        data = reply.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _detail(reply: httpx.Response) -> str:
    return str(_body(reply).get("detail", reply.status_code))
