"""The caregiver web page (`appliance serve`): the real server in its own process on loopback,
Debian's Chromium driven by Playwright, a journal filled by real `appliance say` turns on a sim
scene, axe-core on every page; security checked over plain HTTP as a stranger would."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from appliance.audit.story import Story
from appliance.web.export import as_csv
from tests.cli_runner import APPLIANCE, run
from tests.scenes import messages, write_scene

CHROMIUM = "/usr/bin/chromium"
AXE = Path(__file__).parents[1] / "web" / "axe.min.js"
PASSWORD = "a long walk by the river"


@dataclass
class Server:
    url: str
    store: Path
    scene: Path
    runtime: Path
    proc: subprocess.Popen[str]

    def code(self) -> str:
        """The pairing code, read where the kiosk picks it up."""
        path = self.runtime / "appliance" / "pairing-code"
        deadline = time.monotonic() + 10
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return path.read_text().strip()

    def say(self, text: str) -> None:
        result = run("say", text, "--desktop", f"sim:{self.scene}", "--store", str(self.store))
        assert result.code == 0, result.err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


FIRST_SAID = ("click send", "yes", "<b>bold</b> <script>alert(1)</script>")


def _start(tmp_path: Path, *extra: str, scheme: str = "http",
           said: tuple[str, ...] = FIRST_SAID) -> Server:
    """`appliance serve` on tmp_path/journal.sqlite (kept if there is one), after `said`."""
    scene = write_scene(tmp_path / "scene.json", messages())
    store = tmp_path / "journal.sqlite"
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    for words in said:
        assert run("say", words, "--desktop", f"sim:{scene}", "--store", str(store)).code == 0
    port = _free_port()
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    proc = subprocess.Popen([str(APPLIANCE), "serve", "--store", str(store), "--port", str(port),
                             "--desktop", f"sim:{scene}", *extra], env=env,
                            stderr=subprocess.PIPE, text=True)
    url = f"{scheme}://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(url + "/login", timeout=1, verify=False)
            break
        except httpx.TransportError:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "appliance serve never answered"
            time.sleep(0.1)
    return Server(url, store, scene, runtime, proc)


def _stop(server: Server) -> None:
    server.proc.terminate()
    server.proc.wait(timeout=10)


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[Server]:
    started = _start(tmp_path)
    try:
        yield started
    finally:
        _stop(started)


def _form_token(html: str) -> str:
    m = re.search(r'name="form_token" value="([^"]+)"', html)
    assert m, html
    return m.group(1)


def _urgent(server: Server) -> list[str]:
    data = json.loads(server.scene.read_text())
    urgent = next(e for e in data["applications"][0]["windows"][0]["children"]
                  if e.get("name") == "Urgent")
    return list(urgent.get("states", []))


def _pair(server: Server, client: httpx.Client) -> None:
    page = client.get(server.url + "/pair")
    data = {"form_token": _form_token(page.text), "code": server.code(), "name": "Carol",
            "password": PASSWORD}
    assert client.post(server.url + "/pair", data=data).status_code == 303


def _login(server: Server, client: httpx.Client, password: str = PASSWORD) -> httpx.Response:
    page = client.get(server.url + "/login")
    return client.post(server.url + "/login", data={
        "form_token": _form_token(page.text), "name": "Carol", "password": password})


# -- in the browser ----------------------------------------------------------------------------


def _axe(page: Any) -> list[dict[str, Any]]:
    page.evaluate(AXE.read_text())  # evaluated by the browser's debugger, past the page's CSP
    result: dict[str, Any] = page.evaluate("async () => await axe.run(document)")
    return [{"id": v["id"], "nodes": [n["html"] for n in v["nodes"]]}
            for v in result["violations"]]


def _answers(page: Any, control: Any, where: Any, text: str) -> None:
    """`control` pressed, `where` shows `text`, and the page is still accessible."""
    from playwright.sync_api import expect

    control.click()
    expect(where).to_contain_text(text)
    assert _axe(page) == []


def test_pair_log_in_and_watch_the_day_live(server: Server, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    shots = tmp_path / "screens"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update"])
        page = browser.new_page()
        page.goto(server.url + "/")
        expect(page).to_have_url(server.url + "/pair")
        assert _axe(page) == []
        # A weak password is refused next to the form, and the used code is replaced.
        page.fill("#code", server.code())
        page.fill("#name", "Carol")
        page.fill("#password", "password1234")
        page.click("button[type=submit]")
        expect(page.get_by_role("alert")).to_contain_text("too easy to guess")
        page.screenshot(path=str(shots / "pair-error.png"))
        page.fill("#code", server.code())
        page.fill("#password", PASSWORD)
        page.click("button[type=submit]")
        expect(page).to_have_url(server.url + "/login")
        assert _axe(page) == []
        page.fill("#name", "Carol")
        page.fill("#password", "not the password at all")
        page.click("button[type=submit]")
        expect(page.get_by_role("alert")).to_contain_text("do not match")
        page.fill("#password", PASSWORD)
        page.click("button[type=submit]")
        expect(page).to_have_url(server.url + "/")
        day = page.locator("#day")
        expect(day).to_contain_text("\u201cclick send\u201d")
        # What was said is shown as text, never as markup.
        expect(day).to_contain_text("<b>bold</b> <script>alert(1)</script>")
        assert page.locator("#day b").count() == 0
        assert _axe(page) == []
        page.screenshot(path=str(shots / "today.png"), full_page=True)
        # A turn taken now by another process appears without a reload (SSE).
        server.say("untick urgent")
        expect(day).to_contain_text("\u201cuntick urgent\u201d", timeout=10_000)
        page.screenshot(path=str(shots / "today-live.png"), full_page=True)
        # Only what went wrong: the markup one was not understood; click send was done.
        page.click("summary:has-text('Choose a day')")
        page.check("input[name=problems]")
        page.get_by_role("button", name="Show", exact=True).click()
        expect(page.locator("#day")).to_contain_text("<b>bold</b>")
        expect(page.locator("#day")).not_to_contain_text("click send")
        assert _axe(page) == []
        page.select_option("#trigger", "switch")
        page.get_by_role("button", name="Show", exact=True).click()
        expect(page.locator("#day")).to_contain_text("Nothing")
        page.goto(server.url + "/")
        # One turn, every step.
        page.get_by_role("link", name=re.compile("untick urgent")).first.click()
        expect(page.locator("table")).to_contain_text("Heard")
        expect(page.locator("table")).to_contain_text("ActionSucceeded")
        expect(page.locator("ol.steps")).to_contain_text("Urgent is no longer ticked")
        assert _axe(page) == []
        page.screenshot(path=str(shots / "turn.png"), full_page=True)
        # Undo the newest change from the page: asked first, done through the session, the
        # sim screen really changes back, and the kiosk is handed what to announce.
        page.goto(server.url + "/")
        assert "checked" not in _urgent(server)
        _answers(page, page.get_by_role("link", name="Undo this"), page.locator("main"),
                 "Unticked Urgent.")
        page.get_by_role("button", name="Yes, undo it").click()
        expect(page.locator("main")).to_contain_text("Undone")
        assert "checked" in _urgent(server)
        note = server.runtime / "appliance" / "announce"
        assert note.read_text().strip() == "Carol undid: Unticked Urgent."
        page.goto(server.url + "/week")
        expect(page.get_by_role("img", name="Commands a day, by how they ended")).to_be_visible()
        today = page.locator("tbody tr").last
        expect(today.locator("td").nth(1)).to_have_text("3")  # click send, untick, undo
        expect(today.locator("td").nth(2)).to_have_text("1")  # the markup, not understood
        assert _axe(page) == []
        page.screenshot(path=str(shots / "week.png"), full_page=True)
        page.goto(server.url + "/replay")
        page.get_by_role("button", name="Replay").click()
        expect(page.get_by_role("status")).to_contain_text("0 differed")
        expect(page.get_by_role("status")).to_contain_text("Replayed 3 actions")
        assert _axe(page) == []
        page.goto(server.url + "/")
        _answers(page, page.get_by_role("link", name="Today's report, to print"),
                 page.locator("ol.report"), "\u201cuntick urgent\u201d")
        page.goto(server.url + "/people")
        assert _axe(page) == []
        _answers(page, page.get_by_role("button", name="Make an invitation"),
                 page.get_by_role("status"), "Invitation for a caregiver")
        page.goto(server.url + "/health")
        _answers(page, page.get_by_role("button", name="Check the record now"),
                 page.locator("ul.parts"), "nothing in it was changed or removed")
        page.screenshot(path=str(shots / "health.png"), full_page=True)
        # Settings: a wrong value is named next to its field and nothing is saved.
        page.goto(server.url + "/settings")
        assert _axe(page) == []
        page.select_option("#allow_destructive", "yes")
        page.fill("#confirm_timeout_s", "soon")
        page.click("text=Save settings")
        expect(page.locator("#confirm_timeout_s-error")).to_be_visible()
        page.screenshot(path=str(shots / "settings-error.png"), full_page=True)
        assert run("settings", "show", "--store", str(server.store), "--json").json()[
            "allow_destructive"] is False
        page.fill("#confirm_timeout_s", "45")
        page.click("text=Save settings")
        expect(page.get_by_role("status")).to_contain_text("Allow deleting")
        page.goto(server.url + "/sessions")
        assert page.locator("tbody tr").count() == 1
        assert _axe(page) == []
        page.goto(server.url + "/join")
        assert _axe(page) == []
        page.goto(server.url + "/")
        page.get_by_role("button", name="Log out").click()
        expect(page).to_have_url(server.url + "/login")
        browser.close()
    shown = run("settings", "show", "--store", str(server.store), "--json").json()
    assert shown["allow_destructive"] is True and shown["confirm_timeout_s"] == 45.0
    # ...and the next command sees it: deleting now asks instead of being refused.
    said = run("say", "click delete conversation", "--desktop", f"sim:{server.scene}",
               "--store", str(server.store), "--json").json()
    assert said["decision"] == "needs_confirmation", said
    timeline = run("audit", "--store", str(server.store), "--json").json()
    access = [r["detail"] for r in timeline if r["event"] == "WebAccess"]
    assert [a.split(" by ")[0] for a in access] == [
        "paired", "login failed", "logged in", "invited caregiver", "logged out"]
    assert all("by Carol from 127.0.0.1" in a for a in access)
    undone = [r for r in timeline if r["event"] == "TurnStarted" and "web" in r["detail"]]
    assert len(undone) == 1 and undone[0]["data"]["device"] == "web:Carol"
    changed = [r["detail"] for r in timeline if r["event"] == "SettingChanged"]
    assert changed == ["allow_destructive: False -> True by Carol",
                       "confirm_timeout_s: 30.0 -> 45.0 by Carol"]
    assert PASSWORD not in (server.store.read_bytes().decode("latin-1"))


# -- as a stranger -----------------------------------------------------------------------------


def test_nothing_without_a_session(server: Server) -> None:
    with httpx.Client(follow_redirects=False) as stranger:
        _pair(server, stranger)
        for path in ("/", "/turn/abc", "/pair", "/week", "/replay", "/health", "/export",
                     "/report", "/people", "/settings", "/sessions", "/undo/0123456789ab",
                     "/fleet", "/voice", "/voice/take/1/audio", "/voice/take/1/delete",
                     "/voice/phrase/1/delete", "/voice/delete-all", "/taught",
                     "/taught/0123456789ab/remove", "/taught/name/0123456789ab/remove"):
            r = stranger.get(server.url + path)
            assert r.status_code == 303 and r.headers["location"] in ("/login", "/pair"), path
        assert stranger.get(server.url + "/events").status_code == 401
        assert stranger.get(server.url + "/kiosk/status").status_code == 401
        assert stranger.post(server.url + "/undo/0123456789ab", data={}).status_code == 403
        for path in ("/settings", "/health/verify", "/people/invite", "/people/remove",
                     "/people/withdraw", "/sessions/end", "/sessions/end-one",
                     "/voice/take/1/delete", "/voice/take/1/approve", "/voice/phrase/1/delete",
                     "/voice/delete-all", "/taught/0123456789ab/remove",
                     "/taught/name/0123456789ab/remove"):
            assert stranger.post(server.url + path, data={}).status_code == 403, path
        assert stranger.post(server.url + "/logout", data={"csrf": "x"}).status_code == 403
        page = stranger.get(server.url + "/login")
        headers = page.headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert "script-src 'self'" in headers["content-security-policy"]
        assert "unsafe-inline" not in headers["content-security-policy"]
        assert headers["referrer-policy"] == "no-referrer"
        assert headers["x-content-type-options"] == "nosniff"
        assert "server" not in headers


def test_forms_need_their_token_and_sessions_end(server: Server) -> None:
    with httpx.Client(follow_redirects=False) as client:
        _pair(server, client)
        # A login posted from elsewhere (no form token from this page) is refused.
        bare = client.post(server.url + "/login", data={"name": "Carol", "password": PASSWORD})
        assert bare.status_code == 403
        assert _login(server, client).status_code == 303
        assert client.get(server.url + "/").status_code == 200
        assert client.post(server.url + "/logout", data={"csrf": "wrong"}).status_code == 403
        assert client.get(server.url + "/").status_code == 200  # still logged in
        cookie = dict(client.cookies)
        csrf = re.search(r'name="csrf" value="([^"]+)"', client.get(server.url + "/").text)
        assert csrf
        assert client.post(server.url + "/logout", data={"csrf": csrf.group(1)}).status_code == 303
    with httpx.Client(follow_redirects=False, cookies=cookie) as replayed:
        assert replayed.get(server.url + "/").status_code == 303  # the old session is gone


def test_a_pairing_code_is_used_once(server: Server) -> None:
    code = server.code()
    with httpx.Client(follow_redirects=False) as first, httpx.Client() as second:
        page = first.get(server.url + "/pair")
        data = {"form_token": _form_token(page.text), "code": code, "name": "Carol",
                "password": PASSWORD}
        assert first.post(server.url + "/pair", data=data).status_code == 303
        page = second.get(server.url + "/login")
        again = second.post(server.url + "/pair", data={**data, "form_token": _form_token(
            page.text), "name": "Mallory"})
        assert again.status_code == 403


def test_wrong_passwords_back_off(server: Server) -> None:
    with httpx.Client(follow_redirects=False) as client:
        _pair(server, client)
        codes = [_login(server, client, "wrong wrong wrong").status_code for _ in range(5)]
        assert codes[:3] == [400, 400, 400] and 429 in codes[3:]
        # Even the right password waits its turn from this address...
        assert _login(server, client).status_code == 429


def test_the_kiosk_says_and_shows_a_new_pairing_code_once(tmp_path: Path) -> None:
    from appliance.desktop.scene import Scene
    from appliance.desktop.sim import SimDesktop
    from appliance.intents.grammar import GrammarPlanner
    from appliance.journal.application import Journal
    from appliance.kiosk import Kiosk
    from appliance.panel.state import PanelState
    from appliance.web.handoff import spoken_code
    from appliance.web.pairing import PairingOffer

    shown: list[PanelState] = []
    said: list[str] = []
    code_file = tmp_path / "runtime" / "pairing-code"
    kiosk = Kiosk(Journal(str(tmp_path / "journal.sqlite")), lambda: SimDesktop(Scene()),
                  GrammarPlanner(), panel=False, switch=False, pairing_file=code_file)
    kiosk.speak = said.append
    kiosk.feed.panel.show = shown.append  # type: ignore[method-assign]
    kiosk.check_web()
    assert said == [] and shown == []
    code = PairingOffer(code_file).new()
    assert oct(code_file.stat().st_mode & 0o777) == "0o600"
    kiosk.check_web()
    kiosk.check_web()  # said once, not on every tick
    assert said == [f"A caregiver is pairing with me. The code is {spoken_code(code)}."]
    assert shown[-1].reply == f"Pairing code: {code[:4]} {code[4:]}"
    assert spoken_code("12345678") == "1 2 3 4, 5 6 7 8"


def test_the_owner_invites_a_viewer_who_can_only_look_and_can_be_removed(server: Server) -> None:
    with httpx.Client(follow_redirects=False) as owner, \
            httpx.Client(follow_redirects=False) as viewer:
        _pair(server, owner)
        _login(server, owner)
        csrf = re.search(r'name="csrf" value="([^"]+)"', owner.get(server.url + "/people").text)
        assert csrf
        made = owner.post(server.url + "/people/invite", data={"csrf": csrf.group(1),
                                                               "role": "viewer"})
        code = re.search(r'class="code">([^<]+)<', made.text)
        assert made.status_code == 200 and code
        page = viewer.get(server.url + "/join")
        joined = viewer.post(server.url + "/join", data={
            "form_token": _form_token(page.text), "code": code.group(1), "name": "Vic",
            "password": "another long passphrase"})
        assert joined.status_code == 303
        again = viewer.post(server.url + "/join", data={
            "form_token": _form_token(page.text), "code": code.group(1), "name": "Eve",
            "password": "another long passphrase"})
        assert again.status_code == 400  # an invitation is used once
        page = viewer.get(server.url + "/login")
        assert viewer.post(server.url + "/login", data={
            "form_token": _form_token(page.text), "name": "Vic",
            "password": "another long passphrase"}).status_code == 303
        mine = re.search(r'name="csrf" value="([^"]+)"', viewer.get(server.url + "/").text)
        assert mine
        refused = viewer.post(server.url + "/settings", data={
            "csrf": mine.group(1), "allow_destructive": "yes"})
        assert refused.status_code == 403
        assert viewer.get(server.url + "/people").status_code == 403
        server.say("untick urgent")
        turn = re.search(r'href="/turn/([0-9a-f]+)"', viewer.get(server.url + "/").text)
        assert turn and "Undo this" not in viewer.get(server.url + "/").text
        assert viewer.post(server.url + f"/undo/{turn.group(1)}",
                           data={"csrf": mine.group(1)}).status_code == 403
        assert 'disabled' in viewer.get(server.url + "/settings").text
        owner.post(server.url + "/people/remove", data={"csrf": csrf.group(1), "name": "Vic"})
        assert viewer.get(server.url + "/").status_code == 303  # the session went with Vic
    shown = run("settings", "show", "--store", str(server.store), "--json").json()
    assert shown["allow_destructive"] is False


def test_export_as_csv_and_json_lines_and_health(server: Server) -> None:
    server.say("=HYPERLINK(\"http://example.org\")")
    with httpx.Client(follow_redirects=False) as client:
        _pair(server, client)
        _login(server, client)
        csv_text = client.get(server.url + "/export", params={"since": "today",
                                                             "format": "csv"})
        assert csv_text.status_code == 200
        assert csv_text.headers["content-disposition"].endswith('.csv"')
        cells = [c for row in csv.reader(io.StringIO(csv_text.text)) for c in row]
        assert any("HYPERLINK" in c for c in cells)
        assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")]  # no formula
        said = Story(turn="ab", started=datetime.now(UTC), trigger="text", said="=1+1")
        assert ",'=1+1," in as_csv([said], "UTC").splitlines()[1]
        lines = client.get(server.url + "/export", params={"format": "jsonl"}).text.splitlines()
        events = [json.loads(line) for line in lines]
        assert {"Heard", "TurnEnded", "WebAccess"} <= {e["event"] for e in events}
        bad = client.get(server.url + "/export", params={"since": "yesterday-ish"})
        # Said in the page's words, not the command line's ("--since").
        assert bad.status_code == 400 and "is not a time this page can read" in bad.text
        assert "--since" not in bad.text
        health = client.get(server.url + "/health").text
        for part in ("Microphone", "Switch", "Speech", "Language model",
                     "Record of what happened", "Space for the record", "Care home server"):
            assert f"<strong>{part}</strong>" in health
        # No kiosk runs here: the microphone is not known, never "OK: no faults recorded".
        assert "nothing is reading the microphone" in health
        assert "Not known if it is listening" in health
        csrf = re.search(r'name="csrf" value="([^"]+)"', health)
        assert csrf
        client.post(server.url + "/health/verify", data={"csrf": csrf.group(1)})
        checked = client.get(server.url + "/health").text
        assert "nothing in it was changed or removed" in checked
        assert "intact:" in checked  # the check's own words, in the folded detail


def test_lan_is_tls_only_with_a_certificate_the_kiosk_announces(tmp_path: Path) -> None:
    """`--lan` on loopback here (--host): the same TLS path a phone on the LAN would reach."""
    import hashlib
    import ssl

    from playwright.sync_api import expect, sync_playwright

    server = _start(tmp_path, "--lan", "--host", "127.0.0.1", scheme="https")
    try:
        port = int(server.url.rsplit(":", 1)[1])
        served = ssl.get_server_certificate(("127.0.0.1", port))
        fingerprint = hashlib.sha256(ssl.PEM_cert_to_DER_cert(served)).hexdigest().upper()
        note = (server.runtime / "appliance" / "announce").read_text()
        spoken = " ".join(fingerprint[:8])
        assert f"Its certificate begins {spoken}." in note
        key = server.store.parent / "web-tls.key"
        assert oct(key.stat().st_mode & 0o777) == "0o600"
        with pytest.raises(httpx.TransportError):  # no plain HTTP on the same port
            httpx.get(f"http://127.0.0.1:{port}/login", timeout=2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--headless", "--no-sandbox", "--disable-gpu"])
            context = browser.new_context(ignore_https_errors=True)
            page = context.new_page()
            page.goto(server.url + "/pair")
            page.fill("#code", server.code())
            page.fill("#name", "Carol")
            page.fill("#password", PASSWORD)
            page.click("button[type=submit]")
            page.fill("#name", "Carol")
            page.fill("#password", PASSWORD)
            page.click("button[type=submit]")
            expect(page).to_have_url(server.url + "/")
            cookie = next(c for c in context.cookies() if c["name"].startswith("__Host-"))
            assert cookie["name"] == "__Host-appliance" and cookie["secure"]
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
            browser.close()
    finally:
        _stop(server)


def test_a_pairing_code_runs_out_of_time_and_of_tries(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from appliance.web.pairing import MAX_TRIES, VALID_S, PairingOffer

    offer = PairingOffer(tmp_path / "pairing-code")
    code = offer.new()
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + VALID_S + 1)
    assert not offer.take(code)  # too old
    assert not (tmp_path / "pairing-code").exists()  # withdrawn from the kiosk too
    monkeypatch.setattr(time, "time", lambda: now)
    code = offer.new()
    wrong = "0" * 8 if code != "0" * 8 else "1" * 8
    for _ in range(MAX_TRIES):
        assert not offer.take(wrong)
    assert not offer.take(code)  # void after too many wrong tries


def test_log_out_everywhere_ends_every_session_of_that_caregiver(server: Server) -> None:
    with httpx.Client(follow_redirects=False) as phone, \
            httpx.Client(follow_redirects=False) as laptop:
        _pair(server, phone)
        _login(server, phone)
        _login(server, laptop)
        listed = phone.get(server.url + "/sessions").text
        assert listed.count('action="/sessions/end-one"') == 2  # one row each
        csrf = re.search(r'name="csrf" value="([^"]+)"', listed)
        assert csrf
        assert phone.post(server.url + "/sessions/end",
                          data={"csrf": csrf.group(1)}).status_code == 303
        assert laptop.get(server.url + "/").status_code == 303
        assert phone.get(server.url + "/").status_code == 303
