"""Days as the people looking after someone say them: in the device's time zone (the caregiver's
`time_zone` setting, else the system's), "Today", "Yesterday", "Monday 30 November"."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from appliance.audit.timeline import AuditQueryError
from appliance.limits import escape_controls

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
LOCALTIME = Path("/etc/localtime")
ZONEINFO_DIRS = ("/usr/share/zoneinfo/", "/usr/lib/zoneinfo/")


def named_zone(name: str) -> ZoneInfo | None:
    """The zone called `name` (Europe/London), or None when there is no such zone."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # unknown, "../x", a directory
        return None


def system_zone() -> tzinfo:
    """The system's time zone: $TZ, else what /etc/localtime names, else UTC."""
    found = named_zone(os.environ.get("TZ", "").removeprefix(":")) if os.environ.get("TZ") else None
    if found is not None:
        return found
    target = str(LOCALTIME.resolve()) if LOCALTIME.exists() else ""
    for folder in ZONEINFO_DIRS:
        if target.startswith(folder) and (found := named_zone(target[len(folder):])):
            return found
    return UTC


def zone_of(setting: str) -> tzinfo:
    """The zone the `time_zone` setting names, or the system's when it is empty."""
    return (named_zone(setting) if setting else None) or system_zone()


def zone_name(zone: tzinfo) -> str:
    """The zone as people read it: "Europe/London", "UTC" (not "Etc/UTC")."""
    return str(getattr(zone, "key", "") or zone.tzname(None) or "UTC").removeprefix("Etc/")


def day_span(day: date, zone: tzinfo) -> tuple[datetime, datetime]:
    """The moments `day` begins and the next one begins, in `zone` (23 or 25 hours apart on
    the days the clocks change)."""
    start = datetime.combine(day, datetime.min.time(), zone)
    return start, datetime.combine(day + timedelta(days=1), datetime.min.time(), zone)


def today_in(zone: tzinfo, now: datetime | None = None) -> date:
    return (now or datetime.now(UTC)).astimezone(zone).date()


def said_day(day: date, today: date) -> str:
    """"Today", "Yesterday", "Monday 30 November" (with the year when it is not this one)."""
    if day == today:
        return "Today"
    if day == today - timedelta(days=1):
        return "Yesterday"
    return long_day(day, day.year != today.year)


def long_day(day: date, with_year: bool = True) -> str:
    """"Monday 30 November 2026"."""
    said = f"{WEEKDAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]}"
    return f"{said} {day.year}" if with_year else said


def on_day(day: date, today: date) -> str:
    """A day as said after a count: "today", "yesterday", "on Monday 30 November"."""
    said = said_day(day, today)
    return said.lower() if said in ("Today", "Yesterday") else f"on {said}"


def short_day(day: date, today: date) -> str:
    """A day in a few letters, for a chart's axis: "Today", "Mon 30"."""
    return "Today" if day == today else f"{WEEKDAYS[day.weekday()][:3]} {day.day}"


def parse_day(text: str, today: date) -> date:
    """"today", "yesterday" or 2026-11-30 as a day; AuditQueryError in one line otherwise."""
    words = text.strip().lower()
    if words in ("", "today"):
        return today
    if words == "yesterday":
        return today - timedelta(days=1)
    try:
        return date.fromisoformat(words)
    except ValueError:
        raise AuditQueryError(
            f"cannot read the day {escape_controls(text)!r}; try today, yesterday or 2026-11-30"
        ) from None
