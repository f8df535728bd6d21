"""The caregiver page read as a busy caregiver reads it (issue 45): the day at a glance, outcomes
in plain words, why in a sentence, local time, one CSV row per command, every page fitting a
phone. The real server in its own process, a journal filled by real `appliance say` turns on
the sim scene, Debian's Chromium driven by Playwright, axe-core on every page."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import eventsourcing.domain
import httpx
import pytest

from appliance.journal.application import Journal
from tests.cli_runner import run
from tests.integration.test_web import (
    CHROMIUM,
    PASSWORD,
    Server,
    _axe,
    _login,
    _pair,
    _start,
    _stop,
)
from tests.scenes import messages, write_scene

SIZES = {"phone": (390, 844), "laptop": (1280, 800)}
# Said after the server's own three (click send, yes, a line of markup): one of each ending.
SAID = ("click send", "no", "click delete conversation", "click call", "blah blah fizz",
        "click banana", "untick urgent", "what is the status", "type hello into message")
DONE = {"executed", "answered", "undone"}
CANCELLED = {"cancelled", "timed_out", "clarify"}
FAILED = {"failed", "interrupted"}


@pytest.fixture()
def day(tmp_path: Path) -> Iterator[Server]:
    """A server whose journal holds a day of commands of every kind, and two microphone
    faults as the kiosk's voice layer records them."""
    server = _start(tmp_path)
    try:
        for said in SAID:
            server.say(said)
        journal = Journal(str(server.store))
        journal.device_fault("microphone", "no input device: plug in a USB microphone")
        journal.device_fault("microphone", "the microphone stopped sending sound")
        yield server
    finally:
        _stop(server)


def _browser(p: Any) -> Any:
    return p.chromium.launch(executable_path=CHROMIUM, args=[
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update"])


def _paired_phone(p: Any, server: Server) -> Any:
    """A phone-sized page, logged in to a server paired just now."""
    with httpx.Client() as client:
        _pair(server, client)
    page = _browser(p).new_page(viewport={"width": 390, "height": 844})
    _log_in(page, server)
    return page


def _log_in(page: Any, server: Server) -> None:
    page.goto(server.url + "/login")
    page.fill("#name", "Carol")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(server.url + "/")


def _fits_and_passes(page: Any, shots: Path, name: str) -> None:
    """No sideways scrolling, no axe-core violation, and a screenshot to look at."""
    wide = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert wide[0] <= wide[1], f"{name}: {wide[0]} px wide on a {wide[1]} px screen"
    assert _axe(page) == [], name
    page.screenshot(path=str(shots / f"{name}.png"), full_page=True)


def _journal_counts(store: Path) -> tuple[Counter[str], int]:
    """Today's commands by how they ended and the microphone's faults, straight from
    `appliance audit --json` (the server's day is UTC here, as the system's zone)."""
    rows = run("audit", "--store", str(store), "--json").json()
    today = datetime.now(ZoneInfo("UTC")).date().isoformat()
    started = {r["turn"] for r in rows if r["event"] == "TurnStarted"
               and r["time"].startswith(today)}
    ended = {r["turn"]: r["data"]["outcome"] for r in rows if r["event"] == "TurnEnded"}
    counts: Counter[str] = Counter()
    for turn in started:
        outcome = ended.get(turn, "")
        counts["done" if outcome in DONE else "refused" if outcome == "rejected"
               else "asked and cancelled" if outcome in CANCELLED
               else "went wrong" if outcome in FAILED else "waiting for an answer"] += 1
    faults = sum(1 for r in rows if r["event"] == "DeviceFault" and r["time"].startswith(today))
    return counts, faults


def _glance(text: str) -> tuple[int, Counter[str], int]:
    """The summary line read back: its total, its counts by ending, its microphone faults."""
    total = re.match(r"(\d+) commands? today", text)
    assert total, text
    found = Counter({words: int(n) for n, words in re.findall(
        r"(\d+) (done|refused|asked and cancelled|went wrong|waiting for an answer)", text)})
    faults = re.search(r"(\d+) microphone faults?", text)
    return int(total.group(1)), found, int(faults.group(1)) if faults else 0


def test_every_page_fits_a_phone_and_a_laptop_and_reads_as_the_day(day: Server,
                                                                    tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    shots = tmp_path / "screens"
    with sync_playwright() as p:
        browser = _browser(p)
        for size, (width, height) in SIZES.items():
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            page.goto(day.url + "/pair")
            if size == "phone":  # not paired yet: the pairing page is the first one seen
                _fits_and_passes(page, shots, f"pair-{size}")
                with httpx.Client() as client:
                    _pair(day, client)
            page.goto(day.url + "/login")
            _fits_and_passes(page, shots, f"login-{size}")
            page.goto(day.url + "/join")
            _fits_and_passes(page, shots, f"join-{size}")
            _log_in(page, day)
            # The day at a glance: the summary, then the commands, the first one on the phone's
            # first screen, not below a filter form.
            glance = page.locator(".glance")
            expect(glance).to_contain_text("commands today")
            first = page.locator("li.cmd").first.bounding_box()
            assert first is not None and first["y"] < height * 0.6, first
            assert "->" not in page.locator("#day").inner_text()
            assert page.locator("li.cmd svg.icon").count() == page.locator("li.cmd").count()
            _fits_and_passes(page, shots, f"today-{size}")
            page.get_by_role("link", name="Logins and devices").click()
            expect(page.locator("#day")).to_contain_text("Carol logged in")
            expect(page.locator("#day")).to_contain_text("Microphone fault")
            _fits_and_passes(page, shots, f"others-{size}")
            page.get_by_role("link", name="What went wrong").click()
            expect(page.locator("#day")).to_contain_text("Refused for safety")
            expect(page.locator("#day")).not_to_contain_text("\u201cwhat is the status\u201d")
            _fits_and_passes(page, shots, f"problems-{size}")
            page.goto(day.url + "/")
            page.click("summary:has-text('Choose a day')")
            expect(page.locator("#outcome")).to_be_visible()
            _fits_and_passes(page, shots, f"filters-{size}")
            # A refusal explains itself and links to the setting that would allow it.
            page.goto(day.url + "/")
            page.get_by_role("link", name="\u201cclick delete conversation\u201d").click()
            expect(page.locator("h1")).to_have_text("\u201cclick delete conversation\u201d")
            expect(page.locator(".lead")).to_contain_text(
                "They typed \u201cclick delete conversation\u201d. It refused, for safety")
            expect(page.get_by_role("link", name="Allow deleting")).to_have_attribute(
                "href", "/settings#allow_destructive")
            assert "{'" not in page.locator("main").inner_text()  # never a Python dict
            _fits_and_passes(page, shots, f"turn-refused-{size}")
            page.goto(day.url + "/")
            page.get_by_role("link", name="\u201cclick send\u201d").last.click()
            expect(page.locator(".lead")).to_contain_text(
                "That needs a yes, so it asked; they said yes (typed); it pressed Send.")
            page.click("summary:has-text('Technical detail')")
            expect(page.locator("details.technical table")).to_contain_text("ActionSucceeded")
            assert "{'" not in page.locator("main").inner_text()
            _fits_and_passes(page, shots, f"turn-asked-{size}")
            for path in ("/week", "/report?day=today", "/replay", "/replay?since=today",
                         "/settings", "/health", "/sessions", "/people", "/turn/0000dead",
                         "/voice", "/taught"):
                page.goto(day.url + path)
                name = path.strip("/").replace("?", "-").replace("=", "-").replace("/", "-")
                _fits_and_passes(page, shots, f"{name}-{size}")
            page.goto(day.url + "/")
            page.get_by_role("link", name="Undo this").click()
            expect(page.locator("h1")).to_have_text("Undo this?")  # the new page, not mid-way
            _fits_and_passes(page, shots, f"undo-{size}")
            context.close()
        browser.close()


def test_the_summary_counts_what_the_journal_holds_and_a_web_undo_is_the_caregivers(
        day: Server, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        page = _paired_phone(p, day)
        total, shown, faults = _glance(page.locator(".glance").inner_text())
        counts, recorded_faults = _journal_counts(day.store)
        assert (total, shown, faults) == (sum(counts.values()), counts, recorded_faults)
        assert faults == 2 and set(counts) >= {"done", "refused", "asked and cancelled"}
        # Each refusal says what it was, not "rejected".
        rows = page.locator("li.cmd")
        said = {rows.nth(i).locator(".said").inner_text(): rows.nth(i).locator(".badge")
                .inner_text().strip() for i in range(rows.count())}
        assert said["\u201cclick delete conversation\u201d"] == "Refused for safety"
        assert said["\u201cclick call\u201d"] == "Greyed out"
        assert said["\u201cblah blah fizz\u201d"] == "Didn't understand"
        assert said["\u201cclick banana\u201d"] == "Asked, then a new command"
        assert page.locator("li.cmd", has_text="Asked, then no").count() == 1  # click send, no
        # Undo from the page: it reads as Carol's, and the undone command says it was undone.
        page.get_by_role("link", name="Undo this").click()
        page.get_by_role("button", name="Yes, undo it").click()
        expect(page.locator("main")).to_contain_text("Undone")
        page.goto(day.url + "/")
        newest = page.locator("li.cmd").first
        expect(newest.locator(".said")).to_have_text("Carol undid the last change")
        expect(newest.locator(".by")).to_have_text("by Carol")
        assert "undo that" not in newest.inner_text()  # Carol did not say it
        undone = page.locator("li.cmd", has_text="\u201ctype hello into message\u201d")
        expect(undone.locator(".badge")).to_have_text("Done, then undone")
        expect(undone).to_contain_text("Later it was undone by Carol, from the caregiver page.")
        assert "executed" not in undone.inner_text()
        undone.get_by_role("link").first.click()
        expect(page.locator(".lead")).to_contain_text("undone by Carol")
        page.screenshot(path=str(tmp_path / "undone-turn.png"), full_page=True)
        # The summary follows: one more command, done.
        page.goto(day.url + "/")
        total_after, shown_after, _ = _glance(page.locator(".glance").inner_text())
        assert total_after == total + 1 and shown_after["done"] == shown["done"] + 1


def test_the_csv_has_one_row_per_command(day: Server) -> None:
    day.say("=HYPERLINK(\"http://example.org\")")
    with httpx.Client(follow_redirects=False) as client:
        _pair(day, client)
        _login(day, client)
        got = client.get(day.url + "/export", params={"since": "today", "format": "csv"})
    assert got.status_code == 200 and got.headers["content-disposition"].endswith('.csv"')
    table = list(csv.reader(io.StringIO(got.text)))
    header, rows = table[0], table[1:]
    assert header == ["time (UTC)", "what was said", "what happened", "outcome",
                      "who confirmed", "seconds it took", "started by", "it said", "turn"]
    started = [r for r in run("audit", "--store", str(day.store), "--json").json()
               if r["event"] == "TurnStarted"]
    assert [r[8] for r in rows] == [r["turn"] for r in started]  # one row each, oldest first
    by_said = {r[1]: r for r in rows}
    sent = next(r for r in rows if r[1] == "click send" and r[4])
    assert sent[3] == "Done" and sent[4] == "yes, typed" and float(sent[5]) >= 0
    assert by_said["click delete conversation"][3] == "Refused for safety"
    assert by_said["'=HYPERLINK(\"http://example.org\")"]  # shown, never run as a formula
    assert not [c for r in rows for c in r if c[:1] in ("=", "+", "@", "\t", "\r")]


def test_a_turn_near_midnight_lands_on_its_day_in_the_chosen_time_zone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Auckland is 12 or 13 hours ahead of UTC: five past midnight there is the day before in
    UTC, so a page counting in UTC would put it on the wrong day."""
    from playwright.sync_api import expect, sync_playwright

    zone = ZoneInfo("Pacific/Auckland")
    scene = write_scene(tmp_path / "scene.json", messages())
    store = str(tmp_path / "journal.sqlite")  # where _start serves from
    assert run("settings", "set", "time_zone", "Pacific/Auckland", "--by", "Carol",
               "--store", store).code == 0
    today = datetime.now(zone).date()
    late = datetime.combine(today - timedelta(days=1), time(23, 55), zone)
    early = datetime.combine(today, time(0, 5), zone)
    for at, said in ((late, "untick urgent"), (early, "tick urgent")):
        monkeypatch.setattr(eventsourcing.domain, "datetime_now_with_tzinfo",
                            lambda at=at: at.astimezone(ZoneInfo("UTC")))
        assert run("say", said, "--desktop", f"sim:{scene}", "--store", store).code == 0
    monkeypatch.undo()
    assert early.astimezone(ZoneInfo("UTC")).date() < today  # UTC would call it yesterday
    server = _start(tmp_path, said=())
    try:
        with sync_playwright() as p:
            page = _paired_phone(p, server)
            expect(page.locator(".glance")).to_contain_text("1 command today")
            headings = page.locator("h2.day")
            expect(headings).to_have_text(["Today", "Yesterday"])
            today_rows = page.locator("h2.day + ol.commands").first
            expect(today_rows).to_contain_text("\u201ctick urgent\u201d")
            expect(today_rows).to_contain_text("00:05")
            expect(today_rows).not_to_contain_text("untick")
            expect(page.locator("main")).to_contain_text("Times are Pacific/Auckland time.")
            page.screenshot(path=str(tmp_path / "auckland.png"), full_page=True)
            page.goto(server.url + "/report?day=yesterday")
            expect(page.locator("h1")).to_contain_text("Yesterday")
            expect(page.locator("ol.report")).to_contain_text("23:55")
            expect(page.locator("ol.report")).not_to_contain_text("\u201ctick urgent\u201d")
            page.goto(server.url + f"/?day={today.isoformat()}")
            expect(page.locator("#day")).to_contain_text("\u201ctick urgent\u201d")
            expect(page.locator("#day")).not_to_contain_text("\u201cuntick urgent\u201d")
            page.goto(server.url + "/week")
            expect(page.locator("table.week tbody tr").last.locator("td").first).to_have_text(
                "Today", use_inner_text=True)
            expect(page.locator("table.week tbody tr").last.locator("td").nth(1)).to_have_text(
                "1")
    finally:
        _stop(server)

