"""`appliance say --desktop atspi` end to end against the real GTK3 app under Xvfb + D-Bus.

Each call is a fresh `appliance say` (through the real entry point, in-process for speed) with a
cold AT-SPI cache, as on the kiosk; the app's own state file says what really happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from appliance.desktop.atspi import open_desktop
from tests.apps.atspi_harness import (
    RunningApp,
    calendar_allowlist,
    headless_session,
    start_app,
    wait_for_app,
)
from tests.cli_runner import run


class Kiosk:
    def __init__(self, tmp: Path, app: RunningApp) -> None:
        self.tmp, self.app = tmp, app
        self.store = str(tmp / "journal.sqlite")

    def say(self, text: str) -> dict[str, Any]:
        result = run("say", text, "--desktop", "atspi", "--store", self.store, "--json")
        assert result.code == 0, result.err
        data: dict[str, Any] = result.json()
        return data


@pytest.fixture(scope="module")
def kiosk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kiosk]:
    tmp = tmp_path_factory.mktemp("atspi-cli")
    apps = calendar_allowlist(tmp)
    with headless_session():
        os.environ["APPLIANCE_APPS"] = str(apps)
        app = start_app(tmp)
        wait_for_app(open_desktop(), "Juniper Test")
        try:
            yield Kiosk(tmp, app)
        finally:
            app.stop()
            cal = tmp / "calendar-state.json"
            if cal.exists():
                pid = json.loads(cal.read_text())["pid"]
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)


def test_type_then_read_back(kiosk: Kiosk) -> None:
    out = kiosk.say("type hello into message")
    assert out["decision"] == "executed"
    assert kiosk.app.wait_state(lambda s: s["message"] == "hello")["message"] == "hello"


def _shown(report: dict[str, object]) -> str:
    """A turn's report as printed, without its random id (whose hex may hold any digits)."""
    return json.dumps({k: v for k, v in report.items() if k != "turn_id"})


def test_password_typed_but_never_journaled_or_spoken(kiosk: Kiosk) -> None:
    out = kiosk.say("type 2468 into pin")
    assert out["decision"] == "executed"
    assert kiosk.app.wait_state(lambda s: s["pin"] == "2468")["pin"] == "2468"
    assert "2468" not in _shown(out)
    screen = kiosk.say("read the screen")
    assert screen["decision"] == "answered" and "2468" not in _shown(screen)
    audit = run("audit", "--store", kiosk.store, "--json")
    assert audit.code == 0 and "2468" not in audit.out


def test_confirmation_before_a_moderate_press(kiosk: Kiosk) -> None:
    asked = kiosk.say("press send")
    assert asked["decision"] == "needs_confirmation"
    # What Send would send is read back from the real entry (the PIN entry's never).
    assert "Message says hello." in asked["spoken"] and "2468" not in _shown(asked)
    assert "Send" not in kiosk.app.state()["pressed"]
    done = kiosk.say("yes")
    assert done["decision"] == "executed"
    state = kiosk.app.wait_state(lambda s: s["pressed"].get("Send") == 1)
    assert state["pressed"]["Send"] == 1 and state["status"] == "Sent: hello"


def test_disabled_target_is_refused(kiosk: Kiosk) -> None:
    out = kiosk.say("click delete")
    assert out["decision"] == "rejected"
    assert "Delete" not in kiosk.app.state()["pressed"]


def test_toggle_and_undo(kiosk: Kiosk) -> None:
    assert kiosk.say("check urgent")["decision"] == "executed"
    assert kiosk.app.wait_state(lambda s: s["urgent"])["urgent"] is True
    assert kiosk.say("undo")["decision"] == "undone"
    assert kiosk.app.wait_state(lambda s: not s["urgent"])["urgent"] is False


def test_slider_and_list(kiosk: Kiosk) -> None:
    assert kiosk.say("set volume to 75")["decision"] == "executed"
    assert kiosk.app.wait_state(lambda s: s["volume"] == 75)["volume"] == 75
    assert kiosk.say("select doctor")["decision"] == "executed"
    assert kiosk.app.wait_state(lambda s: s["contact"] == "Doctor")["contact"] == "Doctor"


def test_open_allowlisted_app_and_undo(kiosk: Kiosk) -> None:
    out = kiosk.say("open calendar")
    assert out["decision"] == "executed"
    state_file = kiosk.tmp / "calendar-state.json"
    assert state_file.exists()
    pid = json.loads(state_file.read_text())["pid"]
    assert kiosk.say("undo")["decision"] == "undone"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
