"""A day at a glance: its commands counted by how they ended, and its device faults. A `DayTally`
reads only what the journal gained since it last looked, so the count at the end of a busy day
costs what it did at its start."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from uuid import UUID

from appliance.audit.days import day_span, zone_name
from appliance.audit.story import LONGEST_TURN, Group, Told, group_of
from appliance.audit.timeline import device_name, first_at
from appliance.journal.application import Journal


@dataclass(frozen=True)
class DayCounts:
    """One day's commands by how they ended (a command is counted on the day it began), and
    the faults its devices recorded."""

    day: date
    groups: dict[Group, int]
    faults: dict[str, int]  # by device: "microphone", "switch"

    @property
    def commands(self) -> int:
        return sum(self.groups.values())

    @classmethod
    def of(cls, day: date, found: Told) -> DayCounts:
        """The counts of a day told whole (the printed report)."""
        return cls.counted(day, (s.group for s in found.stories),
                           (h.fault for h in found.happenings if h.fault))

    @classmethod
    def counted(cls, day: date, groups: Iterable[Group], faults: Iterable[str]) -> DayCounts:
        """Each command's group and each fault's device, counted (the groups in their order)."""
        by_group = Counter(groups)
        return cls(day, {g: by_group[g] for g in Group if by_group[g]}, dict(Counter(faults)))


class DayTally:
    """The counts of one day in one time zone, kept up to date as the journal grows."""

    def __init__(self) -> None:
        self._kept: tuple[date, str] | None = None
        self._read_to = 0
        self._complete = False
        self._outcomes: dict[UUID, str] = {}  # every turn begun that day: its outcome, or ""
        self._faults: list[str] = []  # the device of each fault that day

    def counts(self, journal: Journal, day: date, zone: tzinfo) -> DayCounts:
        start, end = day_span(day, zone)
        shrank = (journal.recorder.max_notification_id() or 0) < self._read_to  # a new file
        if self._kept != (day, zone_name(zone)) or shrank:
            self._kept, self._complete = (day, zone_name(zone)), False
            self._outcomes, self._faults = {}, []
            self._read_to = first_at(journal, start) - 1
        if not self._complete:
            self._read(journal, start, end)
        return DayCounts.counted(day, map(group_of, self._outcomes.values()), self._faults)

    def _read(self, journal: Journal, begun: datetime, over: datetime) -> None:
        for nid, e in journal.domain_events(self._read_to + 1):
            if e.timestamp >= over + LONGEST_TURN:  # no turn of that day can end this late
                self._complete = True
                return
            self._read_to = nid
            name = type(e).__name__
            if name == "TurnEnded" and e.originator_id in self._outcomes:
                self._outcomes[e.originator_id] = str(e.outcome)  # ended after midnight too
            if not begun <= e.timestamp < over:
                continue
            if name == "TurnStarted":
                self._outcomes[e.originator_id] = ""
            elif name == "DeviceFault":
                self._faults.append(device_name(e.originator_id) or "device")
