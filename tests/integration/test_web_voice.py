"""The person's voice and their taught names on the caregiver page (issue 44 item 2, issue 46
item 3). The real `appliance serve` in its own process, a real voice profile beside its journal
built with `VoiceProfile.add` from espeak-ng's speech, taught targets journaled as a session
journals them, Debian's Chromium driven by Playwright, axe-core, the journal read back with
`appliance audit`."""

from __future__ import annotations

import io
import os
import re
import time
import wave
from pathlib import Path
from typing import Any

import httpx

from appliance.desktop.seeing.taught import TaughtTarget
from appliance.health.heartbeat import Beat, heartbeat_path, write_beat
from appliance.journal.application import Journal
from appliance.journal.store import voice_profile_path
from appliance.voice.audio.pcm import PIPELINE_RATE
from appliance.voice.hearing.profile import Take, TakeKind, TakeSource, VoiceProfile
from tests.cli_runner import run
from tests.integration.test_voice_profile import espeak
from tests.integration.test_web import Server, _login, _pair, _start, _stop
from tests.integration.test_web_day import SIZES, _fits_and_passes, _paired_phone

NEW_PAGES = ("/voice", "/taught", "/voice/take/1/audio", "/voice/take/1/delete",
             "/voice/phrase/1/delete", "/voice/delete-all", "/taught/0123abcd4567/remove",
             "/taught/name/0123abcd4567/remove")
NEW_FORMS = ("/voice/take/1/delete", "/voice/take/1/approve", "/voice/phrase/1/delete",
             "/voice/delete-all", "/voice/enrol", "/taught/0123abcd4567/remove",
             "/taught/name/0123abcd4567/remove")


def _profile(server: Server) -> VoiceProfile:
    return VoiceProfile(voice_profile_path(str(server.store)))


def _enrol(profile: VoiceProfile) -> dict[str, Take]:
    """Three takes of the wake phrase, two enrolled and one learned take of "tick urgent",
    and of "click send" one enrolled take and one learned from a single yes (pending): one
    take of a phrase is not enough to be used, two are."""
    takes = {f"wake{i}": profile.add("hey juniper", TakeKind.WAKE, espeak("hey juniper", rate))
             for i, rate in enumerate((135, 160, 185))}
    for i, rate in enumerate((135, 185)):
        takes[f"tick{i}"] = profile.add("tick urgent", TakeKind.COMMAND,
                                        espeak("tick urgent", rate))
    takes["tick-learned"] = profile.add("tick urgent", TakeKind.COMMAND,
                                        espeak("tick urgent", 150), TakeSource.LEARNED)
    profile.add("click send", TakeKind.COMMAND, espeak("click send", 135))
    takes["send"] = profile.learn("click send", espeak("click send", 170))
    assert takes["send"].pending
    return takes


def _events(server: Server, name: str) -> list[dict[str, Any]]:
    return [r for r in run("audit", "--store", str(server.store), "--json").json()
            if r["event"] == name]


def _duration(page: Any, audio: Any) -> float:
    """How long the browser says the <audio> element's recording is, once it has loaded it."""
    seconds: float = audio.evaluate("""async (el) => {
        el.preload = 'metadata';
        el.load();
        await new Promise((ok, no) => {
            el.addEventListener('loadedmetadata', ok, {once: true});
            el.addEventListener('error', () => no(String(el.error && el.error.code)),
                                {once: true});
        });
        return el.duration; }""")
    return seconds


def test_the_voice_page_lists_plays_approves_and_deletes_and_journals_who(
        tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    server = _start(tmp_path)
    shots = tmp_path / "screens"
    profile = _profile(server)
    try:
        with sync_playwright() as p:
            page = _paired_phone(p, server)
            # Nothing enrolled: the page says how to enrol, and that nothing leaves the device.
            page.get_by_role("link", name="Voice", exact=True).click()
            expect(page.locator("h2").first).to_have_text("Nothing is enrolled yet")
            expect(page.locator("main")).to_contain_text("learn my voice")
            expect(page.locator("main")).to_contain_text("appliance enroll --wake A.wav")
            expect(page.locator("main")).to_contain_text("These recordings never leave this device")
            _fits_and_passes(page, shots, "voice-empty")
            takes = _enrol(profile)
            # What was enrolled, the wake phrase first, each take in words.
            for size, (width, height) in SIZES.items():
                page.set_viewport_size({"width": width, "height": height})
                page.goto(server.url + "/voice")
                expect(page.locator("section.phrase h2")).to_have_text([
                    "\u201chey juniper\u201d (the wake phrase)", "\u201cclick send\u201d",
                    "\u201ctick urgent\u201d"])
                _fits_and_passes(page, shots, f"voice-{size}")
            sections = page.locator("section.phrase")
            expect(sections.nth(0).locator(".counts")).to_have_text("3 takes: 3 enrolled.")
            expect(sections.nth(1).locator(".counts")).to_have_text(
                "2 takes: 1 enrolled, 1 learned from a yes; 1 waiting for a second yes.")
            expect(sections.nth(2).locator(".counts")).to_have_text(
                "3 takes: 2 enrolled, 1 learned from a yes.")
            expect(sections.nth(1).locator("li.take.pending")).to_contain_text(
                "waiting for a second yes (not used yet)")
            expect(sections.nth(2).locator("li.take").nth(2)).to_contain_text(
                "Learned from a yes.")
            # Playing a take: the browser loads a WAV as long as the take.
            audio = page.get_by_label("Play take 2 of \u201chey juniper\u201d (the wake phrase)")
            assert abs(_duration(page, audio) - takes["wake1"].seconds) < 0.01
            src = audio.get_attribute("src")
            assert src == f"/voice/take/{takes['wake1'].id}/audio"
            got = page.request.get(server.url + src)
            assert got.status == 200 and got.headers["content-type"] == "audio/wav"
            assert got.headers["cache-control"] == "no-store"
            with wave.open(io.BytesIO(got.body())) as wav:
                assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (
                    1, 2, PIPELINE_RATE)
                assert wav.getnframes() == round(takes["wake1"].seconds * PIPELINE_RATE)
                assert wav.readframes(wav.getnframes()) == profile.audio(takes["wake1"].id)
            # A take waiting for a second yes, approved: used from now on.
            assert "click send" not in profile.template_set().phrases
            page.get_by_role("button", name="Approve take 2 of \u201cclick send\u201d").click()
            expect(page.get_by_role("status")).to_have_text("The take is used from now on.")
            assert not [t for t in profile.takes("click send") if t.pending]
            assert "click send" in profile.template_set().phrases
            expect(page.locator("section.phrase").nth(1)).not_to_contain_text("waiting")
            # One take deleted, asked first on a page of its own.
            page.get_by_role("link", name="Delete take 2 of \u201chey juniper\u201d").click()
            expect(page.locator("h1")).to_have_text("Delete this take?")
            expect(page.locator("main")).to_contain_text("Take 2 of \u201chey juniper\u201d")
            _fits_and_passes(page, shots, "voice-delete-take")
            page.get_by_role("link", name="No, keep it").click()
            assert len(profile.takes("hey juniper")) == 3
            page.get_by_role("link", name="Delete take 2 of \u201chey juniper\u201d").click()
            page.get_by_role("button", name="Yes, delete this take").click()
            expect(page).to_have_url(server.url + "/voice?done=take")
            expect(page.get_by_role("status")).to_have_text("The take was deleted.")
            assert [t.id for t in profile.takes("hey juniper")] == [
                takes["wake0"].id, takes["wake2"].id]
            assert page.request.get(server.url + src).status == 404
            # A whole phrase.
            page.get_by_role("link", name="Delete every take of \u201ctick urgent\u201d").click()
            expect(page.locator("h1")).to_have_text(
                "Delete every take of \u201ctick urgent\u201d?")
            _fits_and_passes(page, shots, "voice-delete-phrase")
            page.get_by_role("button", name="Yes, delete every take of it").click()
            expect(page.get_by_role("status")).to_have_text(
                "Every take of that phrase was deleted.")
            assert profile.takes("tick urgent") == [] and len(profile.takes()) == 4
            # Everything.
            page.get_by_role("link", name="Delete every recording of the person's voice").click()
            expect(page.locator("main")).to_contain_text("All 4 takes, of 2 phrases.")
            _fits_and_passes(page, shots, "voice-delete-all")
            page.get_by_role("button", name="Yes, delete every recording").click()
            expect(page.get_by_role("status")).to_contain_text("Every recording")
            expect(page.locator("h2").first).to_have_text("Nothing is enrolled yet")
            assert profile.takes() == []
            page.context.browser.close()
        removed = [(e["data"]["phrase"], e["data"]["takes"], e["data"]["by"])
                   for e in _events(server, "VoiceTakesRemoved")]
        assert removed == [("hey juniper", 1, "Carol"), ("tick urgent", 3, "Carol"),
                           ("", 4, "Carol")]
        added = [(e["data"]["phrase"], e["data"]["source"], e["data"]["by"])
                 for e in _events(server, "VoiceTakesAdded")]
        assert added == [("click send", "approved", "Carol")]
        # Playing, approving and deleting loaded no numpy: the web unit's system-call filter
        # kills a process that does (OpenBLAS calls mbind as it loads).
        loaded = Path(f"/proc/{server.proc.pid}/maps").read_text()
        assert "numpy" not in loaded and "openblas" not in loaded.casefold()
    finally:
        _stop(server)
    # No recording and no phrase reaches the server's log.
    said = server.proc.stderr.read() if server.proc.stderr else ""
    for words in ("juniper", "urgent", "click send", "RIFF"):
        assert words not in said, said


def test_a_caregiver_starts_learning_the_voice_at_the_kiosk_only_while_it_listens(
        tmp_path: Path) -> None:
    """The page hands the kiosk its request (the kiosk's side: test_voice_profile.py); with no
    kiosk listening it says so and hands nothing over, so that no request waits to surprise the
    person later."""
    from playwright.sync_api import expect, sync_playwright

    server = _start(tmp_path)
    request = server.runtime / "appliance" / "learn-voice"
    start = "Start learning the person's voice at the kiosk"
    try:
        with sync_playwright() as p:
            page = _paired_phone(p, server)
            page.goto(server.url + "/voice")
            page.get_by_role("button", name=start).click()
            expect(page.locator("h1")).to_have_text("The kiosk is not listening")
            expect(page.locator("main")).to_contain_text("Nothing was started.")
            _fits_and_passes(page, tmp_path / "screens", "voice-enrol-refused")
            assert not request.exists()
            # The kiosk's heartbeat, as a running kiosk writes it: listening now.
            now = time.time()
            write_beat(heartbeat_path(server.store.parent),
                       Beat(at=now, state="listening", since=now - 60, heard_at=now,
                            level_dbfs=-60.0, pid=os.getpid()))
            page.get_by_role("link", name="Back to the person's voice").click()
            page.get_by_role("button", name=start).click()
            expect(page).to_have_url(server.url + "/voice?done=asked")
            expect(page.get_by_role("status")).to_contain_text("The kiosk is asking the person now")
            _fits_and_passes(page, tmp_path / "screens", "voice-enrol-asked")
            page.context.browser.close()
        assert request.read_text() == "Carol\n"
        assert request.stat().st_mode & 0o777 == 0o600
    finally:
        _stop(server)


def _target(target_id: str, app: str, name: str, turn: str) -> TaughtTarget:
    return TaughtTarget(id=target_id, app=app, window=f"{app} main", name=name,
                        offset=(10, 10, 40, 20), text=name, fingerprint="0" * 16,
                        by=f"voice turn {turn}")


def test_taught_names_and_spots_are_listed_by_application_and_removed_by_a_caregiver(
        tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    server = _start(tmp_path)
    shots = tmp_path / "screens"
    try:
        journal = Journal(str(server.store))
        journal.teach_target(_target("aaaa11112222", "TkForm", "Save", "ab" * 16))
        journal.teach_target(_target("bbbb11112222", "Galculator", "Equals", "cd" * 16))
        journal.teach_target(_target("cccc11112222", "TkForm", "Print", "ef" * 16))
        for hit in (True, True, False):
            journal.target_used("aaaa11112222", hit)
        doctor = journal.teach_alias("Contacts", "Doctor Patel", "my doctor", by="voice",
                                     turn="12" * 16)
        journal.teach_alias("Contacts", "Anna Smith", "my daughter", by="text", turn="34" * 16)
        with sync_playwright() as p:
            page = _paired_phone(p, server)
            page.get_by_role("link", name="Taught names").click()
            expect(page.locator("main h2")).to_have_text(["Names for things on the screen",
                                                          "Named spots"])
            expect(page.locator("main h3")).to_have_text(["Contacts", "Galculator", "TkForm"])
            mine = page.locator("ul.taught li", has_text="\u201cmy doctor\u201d")
            expect(mine).to_contain_text("\u201cmy doctor\u201d means \u201cDoctor Patel\u201d")
            expect(mine).to_contain_text("by voice")
            expect(mine.get_by_role("link", name=re.compile("The command that taught it"))
                   ).to_have_attribute("href", "/turn/12121212")
            save = page.locator("ul.taught li", has_text="\u201cSave\u201d")
            expect(save).to_contain_text("in the window \u201cTkForm main\u201d")
            expect(save).to_contain_text("by voice")
            expect(save).to_contain_text("Worked twice; missed once since it last worked.")
            expect(save.get_by_role("link", name=re.compile("The command that taught it"))
                   ).to_have_attribute("href", "/turn/abababab")
            expect(page.locator("ul.taught li", has_text="\u201cPrint\u201d")).to_contain_text(
                "Not worked yet.")
            for size, (width, height) in SIZES.items():
                page.set_viewport_size({"width": width, "height": height})
                _fits_and_passes(page, shots, f"taught-{size}")
            save.get_by_role("link", name=re.compile("^Remove \u201cSave\u201d")).click()
            expect(page.locator("h1")).to_have_text("Remove \u201cSave\u201d?")
            _fits_and_passes(page, shots, "taught-remove")
            page.get_by_role("button", name="Yes, remove this name").click()
            expect(page.get_by_role("status")).to_contain_text("The name was removed")
            expect(page.locator("ul.taught li")).to_have_count(4)
            mine.get_by_role("link", name=re.compile("^Remove \u201cmy doctor\u201d")).click()
            expect(page.locator("h1")).to_have_text("Remove \u201cmy doctor\u201d?")
            expect(page.locator("main")).to_contain_text(
                "It means \u201cDoctor Patel\u201d in Contacts.")
            _fits_and_passes(page, shots, "taught-unname")
            page.get_by_role("button", name="Yes, remove this name").click()
            expect(page.get_by_role("status")).to_contain_text("The name was removed")
            expect(page.locator("ul.taught li")).to_have_count(3)
            expect(page.locator("ul.taught").first).not_to_contain_text("my doctor")
            page.context.browser.close()
        assert [a.name for a in Journal(str(server.store)).aliases()] == ["my daughter"]
        unnamed = [e["data"] for e in _events(server, "AliasForgotten")]
        assert [(d["alias"], d["by"]) for d in unnamed] == [(doctor.id, "Carol")]
        assert [t.id for t in Journal(str(server.store)).taught_targets()] == [
            "bbbb11112222", "cccc11112222"]
        forgotten = [e["data"] for e in _events(server, "TargetForgotten")]
        assert forgotten == [{"target": "aaaa11112222", "by": "Carol"}]
    finally:
        _stop(server)


def test_the_new_pages_refuse_without_a_session_and_forms_without_their_token(
        tmp_path: Path) -> None:
    server = _start(tmp_path)
    profile = _profile(server)
    take = profile.add("hey juniper", TakeKind.WAKE, espeak("hey juniper", 160))
    try:
        with httpx.Client(follow_redirects=False) as stranger:
            _pair(server, stranger)
            for path in NEW_PAGES:
                r = stranger.get(server.url + path)
                assert r.status_code == 303 and r.headers["location"] == "/login", path
            for path in NEW_FORMS:
                assert stranger.post(server.url + path, data={}).status_code == 403, path
            assert _login(server, stranger).status_code == 303
            assert stranger.get(server.url + "/voice/take/1/audio").status_code == 200
            for path in NEW_FORMS:  # a session, but no CSRF token: refused all the same
                assert stranger.post(server.url + path, data={"csrf": "x"}).status_code == 403
        assert profile.takes() == [take]
    finally:
        _stop(server)
