"""Days and moments as a caregiver writes them in the page's forms (today, yesterday, Monday,
30 November, 2026-11-30, 09:00, 2h) and, when one cannot be read, what can, in words: never
the command line's "--since"."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, tzinfo

from appliance.audit.days import MONTHS, WEEKDAYS, day_span
from appliance.audit.timeline import AuditQueryError, parse_since
from appliance.limits import escape_controls

DAY_HELP = ("Write today, yesterday, a day of the week (Monday), or a date (30 November, or "
            "2026-11-30).")
SINCE_HELP = ("Write today, yesterday, a day of the week (Monday), a date (30 November), a time "
              "today (09:00), or how long ago (2h for two hours, 3d for three days).")
SHOWN = 40  # of what was typed, said back


class Unreadable(ValueError):
    """What was typed is not a day or a moment; the message says what would be."""


def _quoted(text: str) -> str:
    shown = escape_controls(text.strip())
    return f"\u201c{shown[:SHOWN]}{'...' if len(shown) > SHOWN else ''}\u201d"


def _named(word: str, names: tuple[str, ...]) -> int | None:
    """The index of the name `word` is, or begins with in three letters or more."""
    if len(word) < 3:
        return None
    found = [i for i, name in enumerate(names) if name.lower().startswith(word)]
    return found[0] if len(found) == 1 else None


def read_day(text: str, today: date) -> date:
    """The day `text` names; a day of the week is the latest one up to today ("last Monday":
    before today), a date without a year the latest one up to today."""
    words = re.sub(r"[,.]", " ", text.strip().lower()).split()
    if not words or words == ["today"]:
        return today
    if words == ["yesterday"]:
        return today - timedelta(days=1)
    try:
        return date.fromisoformat(" ".join(words))
    except ValueError:
        pass
    before = words[0] == "last"
    words = words[1:] if before else words
    weekday = _named(words[0], WEEKDAYS) if words else None
    if weekday is not None and len(words) == 1:
        back = (today.weekday() - weekday) % 7 or (7 if before else 0)
        return today - timedelta(days=back)
    if weekday is not None:
        words = words[1:]  # "Monday 30 November": the date says which
    found = _calendar(words, today)
    if found is None:
        raise Unreadable(f"{_quoted(text)} is not a day this page can read. {DAY_HELP}")
    return found


def _calendar(words: list[str], today: date) -> date | None:
    """"30 november", "nov 30", "30 nov 2026" as a date; None when it is not one."""
    numbers = [w for w in words if w.isdigit()]
    months = [m for m in (_named(w, MONTHS) for w in words if not w.isdigit()) if m is not None]
    if len(words) not in (2, 3) or len(months) != 1 or len(numbers) != len(words) - 1:
        return None
    day = int(numbers[0])
    year = int(numbers[1]) if len(numbers) == 2 else today.year
    try:
        found = date(year, months[0] + 1, day)
        if len(numbers) == 1 and found > today:
            found = date(year - 1, months[0] + 1, day)
    except ValueError:
        return None
    return found


def read_since(text: str, zone: tzinfo, now: datetime | None = None) -> datetime | None:
    """The moment `text` names (None for nothing typed): what `appliance audit --since`
    reads, or the start of a day `read_day` reads."""
    try:
        return parse_since(text or None, now=now, zone=zone)
    except AuditQueryError:
        pass
    try:
        today = (now or datetime.now(zone)).astimezone(zone).date()
        return day_span(read_day(text, today), zone)[0]
    except Unreadable:
        raise Unreadable(f"{_quoted(text)} is not a time this page can read. "
                         f"{SINCE_HELP}") from None
