"""The caregiver page's small things and its settings (issue 45, items 6 and 10): headers on
every answer, a favicon, no CSP error in the console, undo as POST/redirect/GET, "Paired" after
pairing, and the settings in groups with plain labels and plain errors. The real server, Debian's
Chromium driven by Playwright, axe-core, as in test_web.py."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from appliance.settings import Settings
from appliance.web.settings_form import GROUPS, plain_error
from tests.cli_runner import run
from tests.integration import test_web
from tests.integration.test_web import PASSWORD, Server, _login, _pair
from tests.integration.test_web_day import _browser, _fits_and_passes, _log_in

server = test_web.server  # the same fixture: `appliance serve` after three turns, not paired
GROUP_NAMES = ["Listening", "Safety", "Switch", "Privacy", "Language model", "Apps", "Time"]


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html
    return found.group(1)


def test_every_answer_has_the_headers_a_429_says_when_and_the_favicon_is_served(
        server: Server) -> None:
    with httpx.Client(follow_redirects=False) as client:
        answers = [client.get(server.url + "/pair"), client.get(server.url + "/settings"),
                   client.get(server.url + "/static/style.css"),
                   client.post(server.url + "/settings", data={})]
        _pair(server, client)
        answers += [client.get(server.url + "/login")]
        for path in ("/favicon.ico", "/static/favicon.svg"):
            icon = client.get(server.url + path)
            assert icon.status_code == 200 and icon.headers["content-type"].startswith(
                "image/svg+xml") and b"<svg" in icon.content, path
            answers.append(icon)
        tries = [_login(server, client, "wrong wrong wrong") for _ in range(5)]
        refused = [r for r in tries if r.status_code == 429]
        assert refused
        answers += tries
        for r in answers:
            policy = r.headers.get("permissions-policy", "")
            for sensor in ("camera=()", "microphone=()", "geolocation=()"):
                assert sensor in policy, (r.url, r.status_code)
        for r in refused:
            wait = int(r.headers["retry-after"])
            assert wait >= 1
            said = re.search(r"Please wait (\d+) (seconds?)\.", r.text)
            assert said and int(said.group(1)) == wait
            assert said.group(2) == ("second" if wait == 1 else "seconds")


def test_no_console_error_or_missing_file_and_pairing_says_paired(server: Server,
                                                                  tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        page = _browser(p).new_page()
        complaints: list[str] = []
        page.on("console", lambda m: complaints.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: complaints.append(str(e)))
        page.on("response", lambda r: complaints.append(f"{r.status} {r.url}")
                if r.status >= 400 and not r.url.endswith(("/pair", "/login")) else None)
        page.goto(server.url + "/pair")
        page.fill("#code", server.code())
        page.fill("#name", "Carol")
        page.fill("#password", PASSWORD)
        page.click("button[type=submit]")
        expect(page).to_have_url(server.url + "/login")
        expect(page.get_by_role("status")).to_have_text(re.compile("^Paired."))
        page.reload()
        expect(page.locator("main")).not_to_contain_text("Paired")  # said once
        _log_in(page, server)
        for path in ("/", "/settings", "/week", "/health", "/sessions", "/people"):
            page.goto(server.url + path)
            page.wait_for_load_state("networkidle")
        page.goto(server.url + "/")
        page.wait_for_timeout(300)  # the live feed has connected
        assert complaints == []
        icon = page.evaluate("() => document.querySelector('link[rel=icon]').href")
        assert icon == server.url + "/static/favicon.svg"


def test_undo_answers_with_a_redirect_so_a_reload_does_not_undo_again(server: Server) -> None:
    server.say("untick urgent")
    with httpx.Client(follow_redirects=False) as client:
        _pair(server, client)
        _login(server, client)
        today = client.get(server.url + "/").text
        turn = re.search(r'href="/undo/([0-9a-f]+)"', today)
        assert turn
        done = client.post(server.url + f"/undo/{turn.group(1)}", data={"csrf": _csrf(today)})
        assert done.status_code == 303
        where = done.headers["location"]
        assert re.fullmatch(r"/turn/[0-9a-f]{8}", where), where
        for _ in range(2):  # a reload shows the answer again and does nothing more
            shown = client.get(server.url + where)
            assert shown.status_code == 200 and "Undone" in shown.text
    timeline = run("audit", "--store", str(server.store), "--json").json()
    assert sum(1 for r in timeline if r["event"] == "TurnStarted" and "web" in r["detail"]) == 1


def test_every_setting_has_a_group_and_errors_are_plain_words() -> None:
    grouped = [key for _, _, keys in GROUPS for key in keys]
    assert sorted(grouped) == sorted(Settings.model_fields)  # each in exactly one group
    assert [name for name, _, _ in GROUPS] == GROUP_NAMES
    for key in Settings.model_fields:
        assert Settings.model_fields[key].title, key  # a plain label, not the key in words
        assert Settings.model_fields[key].description, key
    assert plain_error("confirm_timeout_s", "soon", "") == "Write a number, like 30."
    assert plain_error("confirm_timeout_s", "2", "") == "Choose from 5 to 3600 seconds."
    assert plain_error("scan_loops", "2.5", "") == "Write a whole number, like 2."
    assert plain_error("llm", "gpt", "") == "Choose one of: ollama, llama-cpp, off."
    assert plain_error("wake_phrase", "a", "") == "Write at least 2 characters."
    assert plain_error("ollama_host", "http://example.org", "the model server must be on this "
                       "device") == "The model server must be on this device."


def test_settings_read_in_groups_and_a_wrong_value_is_named_beside_it_and_at_the_top(
        server: Server, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with httpx.Client() as client:
        _pair(server, client)
    with sync_playwright() as p:
        page = _browser(p).new_page(viewport={"width": 390, "height": 844})
        _log_in(page, server)
        page.goto(server.url + "/settings")
        assert page.locator("fieldset legend").all_inner_texts() == GROUP_NAMES
        expect(page.locator("label[for=confirm_timeout_s]")).to_have_text(
            "Time to answer a question (seconds)")
        expect(page.locator("label[for=llm]")).to_have_text("Language model")
        body = page.locator("main").inner_text()
        for dump in ("Confirm timeout s", "Llm", "Switch keys", "Denylist"):
            assert dump not in body, dump
        _fits_and_passes(page, tmp_path, "settings-phone")
        # Nothing changed: said so, never "Some settings were not saved".
        page.click("text=Save settings")
        expect(page.get_by_role("status")).to_have_text("Nothing changed, so nothing was saved.")
        # Two wrong values: each beside its field, both at the top with links, nothing saved.
        page.select_option("#allow_destructive", "yes")
        page.fill("#confirm_timeout_s", "soon")
        page.fill("#scan_loops", "99")
        page.click("text=Save settings")
        expect(page.locator("#confirm_timeout_s-error")).to_have_text("Write a number, like 30.")
        expect(page.locator("#scan_loops-error")).to_have_text("Choose from 1 to 10.")
        expect(page.locator("#confirm_timeout_s")).to_have_attribute("aria-invalid", "true")
        summary = page.get_by_role("alert")
        expect(summary).to_contain_text("Nothing was saved: 2 settings need a change.")
        links = summary.get_by_role("link")
        assert links.evaluate_all("(a) => a.map(l => l.getAttribute('href'))") == [
            "#confirm_timeout_s", "#scan_loops"]
        text = page.locator("main").inner_text()
        assert "Input should" not in text and "Some settings were not saved" not in text
        assert page.locator("#confirm_timeout_s").input_value() == "soon"  # kept to correct
        _fits_and_passes(page, tmp_path, "settings-phone-errors")
        links.first.click()
        expect(page).to_have_url(re.compile("#confirm_timeout_s$"))
        assert run("settings", "show", "--store", str(server.store), "--json").json()[
            "allow_destructive"] is False
        page.fill("#confirm_timeout_s", "45")
        page.fill("#scan_loops", "3")
        page.click("text=Save settings")
        expect(page.get_by_role("status")).to_have_text(
            "Saved: Allow deleting, Time to answer a question, Rounds before stopping.")
    shown = run("settings", "show", "--store", str(server.store), "--json").json()
    assert shown["allow_destructive"] is True and shown["confirm_timeout_s"] == 45.0
    assert shown["scan_loops"] == 3
