"""The day as a caregiver reads it: the day's counts, then one row per command in plain words
(`appliance.audit.story`), under the days people say ("Today", "Yesterday"); logins, setting
changes and devices on a view of their own."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from typing import Any

from appliance.audit.days import day_span, on_day, said_day, today_in
from appliance.audit.story import Group, Happening, Story, told
from appliance.audit.tally import DayCounts, DayTally
from appliance.audit.timeline import WINDOW, first_at, timeline
from appliance.journal.application import Journal
from appliance.web.when import Unreadable, read_day

TRIGGERS = {"voice": "voice", "switch": "the switch", "text": "typing", "web": "the caregiver page"}
PROBLEMS = frozenset({Group.refused, Group.failed})


@dataclass(frozen=True)
class Filter:
    """What the caregiver asked to see: a day, how commands ended, what started them, only
    problems; or, instead of commands, the logins, settings and devices."""

    day: date | None = None
    outcome: Group | None = None
    trigger: str = ""
    problems: bool = False
    others: bool = False

    @classmethod
    def asked(cls, query: Any, today: date) -> tuple[Filter, str]:
        """The filter a page's query asks for, and what in it could not be read ("")."""
        problem = ""
        try:
            day = read_day(query.get("day", "")[:80], today) if query.get("day") else None
        except Unreadable as e:
            day, problem = None, str(e)
        outcome = query.get("outcome", "")
        trigger = query.get("trigger", "")
        return cls(day=day, outcome=Group(outcome) if outcome in Group.__members__ else None,
                   trigger=trigger if trigger in TRIGGERS else "",
                   problems="problems" in query, others=query.get("show") == "others"), problem

    def wants(self, story: Story) -> bool:
        if self.day and story.started.date() != self.day:
            return False
        if self.outcome and story.group != self.outcome:
            return False
        if self.trigger and story.trigger != self.trigger:
            return False
        return not (self.problems and story.group not in PROBLEMS)

    @property
    def active(self) -> bool:
        return bool(self.day or self.outcome or self.trigger or self.problems or self.others)

    @property
    def chosen(self) -> bool:
        """Narrowed by the form (the view of logins and devices is not a narrowing)."""
        return bool(self.day or self.outcome or self.trigger or self.problems)


@dataclass
class Dated:
    """One day's rows, as the day is said ("Today")."""

    day: date
    said: str
    stories: list[Story] = field(default_factory=list)
    happenings: list[Happening] = field(default_factory=list)


@dataclass
class Page:
    days: list[Dated]  # newest first, and each day's rows newest first
    older: int | None  # the `before` of the next page back, if there is one

    @property
    def empty(self) -> bool:
        return not any(d.stories or d.happenings for d in self.days)


def day_page(journal: Journal, zone: tzinfo, shown: Filter = Filter(), before: int | None = None,
             limit: int = 200, now: datetime | None = None) -> Page:
    """Up to `limit` rows from the events before notification `before` (None: the newest),
    newest first, those `shown` wants; a chosen day is looked for where it is in the journal."""
    last = journal.recorder.max_notification_id() or 0
    end = min(last, before - 1) if before else last
    if shown.day:
        _, over = day_span(shown.day, zone)
        end = min(end, first_at(journal, over) + WINDOW)
    start = max(1, end - WINDOW + 1)
    found = told(timeline(journal, start=start, end=end), zone)
    today = today_in(zone, now)
    days: dict[date, Dated] = {}

    def on(day: date) -> Dated:
        return days.setdefault(day, Dated(day, said_day(day, today)))

    if shown.others:
        for happening in reversed(found.happenings):
            if not shown.day or happening.at.date() == shown.day:
                on(happening.at.date()).happenings.append(happening)
    else:
        for story in [s for s in reversed(found.stories) if shown.wants(s)][:limit]:
            on(story.started.date()).stories.append(story)
    return Page(days=list(days.values()), older=start if start > 1 else None)


@dataclass
class DayView:
    """Everything the day's part of the page shows (drawn again on every live update)."""

    page: Page
    counts: DayCounts
    counted: str  # the day counted, as said after a number: "today", "on Monday 30 November"
    shown: Filter
    undo: str  # the short id of the command an undo would take back, if it may be undone here


def day_view(journal: Journal, tally: DayTally, zone: tzinfo, shown: Filter = Filter(),
             before: int | None = None, undo: str = "") -> DayView:
    today = today_in(zone)
    day = shown.day or today
    return DayView(page=day_page(journal, zone, shown, before), undo=undo, shown=shown,
                   counts=tally.counts(journal, day, zone), counted=on_day(day, today))
