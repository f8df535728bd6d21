"""Is it working now? (issue 45): the caregiver page reads the running kiosk's heartbeat. A real
`appliance serve` and a real `appliance run` on a WAV file (noise, so it hears sound) sharing a
journal, Debian's Chromium driven by Playwright, axe-core; and the rest of issue 45's page:
the week chart on a phone, days as people write them, sessions, invitations, pairing."""

from __future__ import annotations

import os
import random
import re
import subprocess
import time
from array import array
from pathlib import Path
from typing import Any

import httpx

from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, write_wav
from appliance.web.week import MONTHS_SHORT
from tests.cli_runner import APPLIANCE
from tests.integration.test_web import PASSWORD, _pair, _start, _stop
from tests.integration.test_web_day import _browser, _fits_and_passes, _log_in

NOISE_S = 1200  # read ~50x faster than real time: the kiosk listens for some 20 s


def _noise_wav(path: Path) -> Path:
    """A quiet room: low noise, no speech, never exactly zero (that would read as muted)."""
    rng = random.Random(45)
    second = array("h", (rng.choice((-1, 1)) * rng.randint(20, 60) for _ in range(PIPELINE_RATE)))
    write_wav(path, Pcm(second.tobytes() * NOISE_S, PIPELINE_RATE))
    return path


def _kiosk(store: Path, scene: Path, runtime: Path, wav: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(APPLIANCE), "run", "--audio", str(wav), "--desktop", f"sim:{scene}", "--no-panel",
         "--no-switch", "--store", str(store)],
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)}, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _until(page: Any, url: str, text: str, kiosk: subprocess.Popen[str],
           where: str = "#kiosk") -> None:
    """Reload `url` until `where` on it says `text` (a poll, never a fixed wait)."""
    deadline = time.monotonic() + 240
    while text not in page.locator(where).inner_text():
        assert kiosk.poll() is None, kiosk.stderr.read() if kiosk.stderr else ""
        assert time.monotonic() < deadline, page.locator(where).inner_text()
        page.wait_for_timeout(250)
        page.goto(url)


def test_the_page_says_listening_while_the_kiosk_runs_and_not_once_it_stops(
        tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    server = _start(tmp_path)
    wav = _noise_wav(tmp_path / "room.wav")
    kiosk: subprocess.Popen[str] | None = None
    try:
        with httpx.Client() as client:
            _pair(server, client)
        with sync_playwright() as p:
            page = _browser(p).new_page(viewport={"width": 390, "height": 844})
            _log_in(page, server)
            # No kiosk yet: not known, and every page says so at its top.
            expect(page.locator(".kiosk-live")).to_contain_text("Not known if it is listening")
            kiosk = _kiosk(server.store, server.scene, server.runtime, wav)
            page.goto(server.url + "/health")
            _until(page, server.url + "/health", "Listening now", kiosk)
            # The parts are read when the page is, the kiosk's state live after it: a page
            # loaded just before the kiosk began says so until it is loaded again.
            _until(page, server.url + "/health", "It hears a quiet room now", kiosk, "ul.parts")
            heartbeat = server.store.parent / "kiosk-heartbeat.json"
            assert oct(heartbeat.stat().st_mode & 0o777) == "0o600"
            assert "heard" not in heartbeat.read_text().replace("heard_at", "")
            _fits_and_passes(page, tmp_path, "health-listening")
            # The file ends, the kiosk stops; the open page sees it by itself (htmx polls).
            assert kiosk.wait(timeout=300) == 0, kiosk.stderr.read() if kiosk.stderr else ""
            expect(page.locator("#kiosk")).to_contain_text("Not listening since",
                                                           timeout=30_000)
            _fits_and_passes(page, tmp_path, "health-stopped")
            page.goto(server.url + "/week")
            banner = page.locator(".kiosk-live")
            expect(banner).to_contain_text("Not listening since")
            expect(banner.get_by_role("link", name=re.compile("^Not listening since"))
                   ).to_have_attribute("href", "/health")
            _fits_and_passes(page, tmp_path, "week-banner")
            # A dropped live connection is said, not silently frozen.
            page.goto(server.url + "/")
            page.wait_for_timeout(500)  # the live feed has connected
            expect(page.locator("#live-paused")).to_be_hidden()
            _stop(server)
            expect(page.locator("#live-paused")).to_have_text(
                "Live updates paused: reconnecting\u2026", timeout=30_000)
    finally:
        if kiosk is not None and kiosk.poll() is None:
            kiosk.kill()
            kiosk.wait()
        if server.proc.poll() is None:
            _stop(server)


def test_the_week_days_sessions_invitations_and_pairing_read_plainly(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    server = _start(tmp_path)
    try:
        for said in ("untick urgent", "tick urgent", "click delete conversation"):
            server.say(said)
        with sync_playwright() as p:
            page = _browser(p).new_page(viewport={"width": 390, "height": 844})
            # A weak password uses the code up: the page says a new one is on the kiosk.
            page.goto(server.url + "/pair")
            page.fill("#code", server.code())
            page.fill("#name", "Carol")
            page.fill("#password", "password1234")
            page.click("button[type=submit]")
            expect(page.get_by_role("alert")).to_contain_text("the kiosk is saying and showing "
                                                              "a new one")
            page.fill("#code", server.code())
            page.fill("#password", PASSWORD)
            page.click("button[type=submit]")
            _log_in(page, server)
            # The week: day names people read, a number on the bars, labels big enough.
            page.goto(server.url + "/week")
            labels = page.locator("svg.chart text").all_text_contents()
            # Under each bar: "Mon", "30", "Nov"; today's bar says "Today" (on a Monday, no "Mon").
            days = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
            assert "Today" in labels and len(days & set(labels)) == 6, labels
            assert set(labels) & set(MONTHS_SHORT), labels
            assert "5" in labels  # today's total above its bar (3 here, 2 from _start's turns)
            smallest = page.evaluate("""() => {
                const svg = document.querySelector('svg.chart');
                const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                return Math.min(...[...svg.querySelectorAll('text')].map(
                    t => parseFloat(getComputedStyle(t).fontSize) * scale)); }""")
            assert smallest >= 12, smallest
            expect(page.locator("ul.legend")).to_be_visible()
            expect(page.locator("ul.legend")).to_contain_text("refused")
            _fits_and_passes(page, tmp_path, "week-phone")
            # Days as people write them; a wrong one says what would do.
            page.goto(server.url + "/?day=yesterday")
            expect(page.locator("#day")).to_contain_text("Nothing to show")
            expect(page.locator("#not-live")).to_contain_text("does not change as new commands")
            page.goto(server.url + "/?day=banana")
            expect(page.get_by_role("alert")).to_contain_text(
                "\u201cbanana\u201d is not a day this page can read. Write today, yesterday")
            _fits_and_passes(page, tmp_path, "day-unreadable")
            # Sessions: which browser, which is this one; one can be ended alone.
            with httpx.Client() as other:
                other.get(server.url + "/login")
                token = re.search(r'name="form_token" value="([^"]+)"',
                                  other.get(server.url + "/login").text)
                assert token
                other.post(server.url + "/login", headers={"user-agent": (
                    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) Safari/604.1")},
                    data={"form_token": token.group(1), "name": "Carol", "password": PASSWORD})
                page.goto(server.url + "/sessions")
                rows = page.locator("tbody tr")
                expect(rows).to_have_count(2)
                expect(rows.first).to_contain_text("Safari on an iPhone")
                expect(page.locator("tr.current")).to_contain_text(
                    "Chrome on a Linux computer (this one)")
                _fits_and_passes(page, tmp_path, "sessions-phone")
                rows.first.get_by_role("button", name="Log out there").click()
                expect(page.get_by_role("status")).to_have_text("That session was logged out.")
                expect(page.locator("tbody tr")).to_have_count(1)
                assert other.get(server.url + "/", follow_redirects=False).status_code == 303
            # Invitations: digits in groups of four, listed until used, and cancelled.
            page.goto(server.url + "/people")
            page.get_by_role("button", name="Make an invitation").click()
            code = page.locator("strong.code").inner_text()
            assert re.fullmatch(r"\d{4} \d{4} \d{4}", code), code
            expect(page.locator("table.pending tbody tr")).to_have_count(1)
            _fits_and_passes(page, tmp_path, "people-invited")
            page.goto(server.url + "/people")
            page.get_by_role("button", name="Cancel this invitation").click()
            expect(page.get_by_role("status")).to_contain_text("its code no longer works")
            expect(page.locator("table.pending")).to_have_count(0)
        with httpx.Client() as late:
            form = late.get(server.url + "/join").text
            token = re.search(r'name="form_token" value="([^"]+)"', form)
            assert token
            refused = late.post(server.url + "/join", data={
                "form_token": token.group(1), "code": code, "name": "Vic",
                "password": "another long passphrase"})
            assert refused.status_code == 400 and "not valid" in refused.text
    finally:
        _stop(server)
