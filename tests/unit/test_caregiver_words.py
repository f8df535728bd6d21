"""What a caregiver types and reads on the page (issue 45): days and moments as people write
them, errors that say what would do (never "--since"), sessions named by device and browser,
invitation codes read aloud in groups, and the week chart's labels."""

from __future__ import annotations

import time
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from appliance.web.accounts import AccountError, Accounts, grouped
from appliance.web.browsers import described
from appliance.web.week import Day, axis_label, bars
from appliance.web.when import Unreadable, read_day, read_since

WEDNESDAY = date(2026, 12, 2)
PASSWORD = "a long walk by the river"


@pytest.mark.parametrize(("typed", "day"), [
    ("", WEDNESDAY), ("today", WEDNESDAY), ("Yesterday", date(2026, 12, 1)),
    ("monday", date(2026, 11, 30)), ("Mon", date(2026, 11, 30)),
    ("wednesday", WEDNESDAY), ("last wednesday", date(2026, 11, 25)),
    ("30 November", date(2026, 11, 30)), ("nov 30", date(2026, 11, 30)),
    ("Monday 30 November 2026", date(2026, 11, 30)), ("2026-11-30", date(2026, 11, 30)),
    ("25 December", date(2025, 12, 25)),  # not yet this year: last year's
])
def test_a_day_is_read_as_people_write_it(typed: str, day: date) -> None:
    assert read_day(typed, WEDNESDAY) == day


@pytest.mark.parametrize("typed", ["banana", "31 February", "30 30", "m", "2026-13-45"])
def test_a_day_that_cannot_be_read_says_what_can(typed: str) -> None:
    with pytest.raises(Unreadable) as said:
        read_day(typed, WEDNESDAY)
    assert str(said.value).startswith(f"\u201c{typed}\u201d is not a day this page can read.")
    assert "yesterday" in str(said.value) and "--" not in str(said.value)


def test_a_moment_is_read_as_the_command_line_reads_it_or_as_a_day() -> None:
    zone = ZoneInfo("Europe/London")
    now = datetime(2026, 12, 2, 15, 0, tzinfo=zone)
    assert read_since("2h", zone, now) == datetime(2026, 12, 2, 13, 0, tzinfo=zone)
    assert read_since("monday", zone, now) == datetime(2026, 11, 30, tzinfo=zone)
    assert read_since("", zone, now) is None
    with pytest.raises(Unreadable) as said:
        read_since("banana\x1b[31m", zone, now)
    assert "--since" not in str(said.value) and "\x1b" not in str(said.value)
    assert "is not a time this page can read" in str(said.value)


def test_sessions_are_named_by_browser_and_device() -> None:
    assert described("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, "
                     "like Gecko) Chrome/120.0 Mobile Safari/537.36"
                     ) == "Chrome on an Android phone"
    assert described("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1"
                     ".15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1"
                     ) == "Safari on an iPhone"
    assert described("Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0 Safari/537.36 "
                     "Edg/120.0") == "Edge on a Windows computer"
    assert described("python-httpx/0.27") == described("") == "An unknown browser"


def test_invitations_are_digits_in_groups_listed_until_used_and_can_be_cancelled(
        tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / "web.sqlite")
    accounts.create("Carol", PASSWORD, "owner")
    code = accounts.invite("viewer", "Carol")
    assert code.isdigit() and len(code) == 12
    assert grouped(code) == f"{code[:4]} {code[4:8]} {code[8:]}"
    other = accounts.invite("caregiver", "Carol")
    assert [i.role for i in accounts.invitations()] == ["caregiver", "viewer"]
    assert accounts.join(grouped(code), "Vic", "another long passphrase", "10.0.0.2") == "viewer"
    assert [i.role for i in accounts.invitations()] == ["caregiver"]
    assert accounts.withdraw(accounts.invitations()[0].id)
    with pytest.raises(AccountError):
        accounts.join(other, "Eve", "another long passphrase", "10.0.0.2")
    assert accounts.invitations() == []


def test_wrong_invitation_codes_back_off_per_address(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / "web.sqlite")
    code = accounts.invite("viewer", "Carol")
    said = []
    for _ in range(5):
        with pytest.raises(AccountError) as refused:
            accounts.join("0000 0000 0000", "Eve", "another long passphrase", "10.0.0.9")
        said.append(str(refused.value))
    assert any(s.startswith("Too many wrong codes. Please wait") for s in said)
    with pytest.raises(AccountError):  # even the right code waits, from that address
        accounts.join(code, "Eve", "another long passphrase", "10.0.0.9")
    assert accounts.join(code, "Vic", "another long passphrase", "10.0.0.2") == "viewer"


def test_each_session_says_its_browser_which_is_this_one_and_ends_alone(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / "web.sqlite")
    accounts.create("Carol", PASSWORD, "owner")
    accounts.create("Dave", "yet another long passphrase", "caregiver")
    phone = accounts.login("Carol", PASSWORD, "10.0.0.2", "Mozilla/5.0 (iPhone) Safari/604.1")
    time.sleep(0.01)
    laptop = accounts.login("Carol", PASSWORD, "10.0.0.3", "Mozilla/5.0 (X11; Linux) Firefox/120")
    dave = accounts.login("Dave", "yet another long passphrase", "10.0.0.4")
    assert phone and laptop and dave
    listed = accounts.sessions_of("Carol", laptop)
    assert [(described(s.agent), s.current) for s in listed] == [
        ("Firefox on a Linux computer", True), ("Safari on an iPhone", False)]
    theirs = accounts.sessions_of("Dave")[0].id
    assert not accounts.end_session("Carol", theirs)  # never another caregiver's
    assert accounts.end_session("Carol", listed[1].id)
    assert accounts.session(phone) is None and accounts.session(laptop) is not None
    assert accounts.session(dave) is not None


def test_the_week_chart_names_days_and_shows_each_count() -> None:
    assert axis_label(date(2026, 11, 30), WEDNESDAY) == ("Mon", "30", "Nov")
    assert axis_label(WEDNESDAY, WEDNESDAY) == ("Today", "2", "Dec")
    days = [Day(date(2026, 11, 26 + i) if i < 5 else date(2026, 12, i - 4), "", "")
            for i in range(7)]
    days[-1].outcomes.update({"done": 9, "refused": 1})  # type: ignore[dict-item]
    chart = bars(days)
    today = chart["bars"][-1]
    assert (today["first"], today["second"], today["third"], today["total"]) == (
        "Today", "2", "Dec", 10)
    done, refused, _ = today["parts"]
    assert done["shows"] and done["count"] == 9  # tall enough to carry its number
    assert not refused["shows"]  # too short: the total above and the table say it
    assert chart["label_px"] * 390 / chart["width"] >= 12 * 1.25  # >= 15 px on a phone


def test_every_switch_meaning_reads_in_words() -> None:
    """The caregiver's story says what each press meant in words, never its code name."""
    from typing import get_args

    from appliance.audit.story import _PRESSED, _pressed
    from appliance.switch.meaning import Meaning

    assert set(get_args(Meaning)) <= set(_PRESSED)
    assert _pressed("scan_select: Send") == "chose Send"
    assert _pressed("enrol_skip") == "skipped a phrase of learning the voice"
