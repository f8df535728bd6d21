"""End to end: one switch drives the real GTK test app over AT-SPI under Xvfb.

Auto-scan runs on a virtual monotonic clock the test advances; the desktop, the journal (SQLite),
the session, the policy and the application are all real. The app's own state (written from its
widgets) shows whether Send was clicked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest

from appliance.desktop.atspi import open_desktop
from appliance.desktop.atspi.adapter import AtspiDesktop
from appliance.desktop.model import Desktop
from appliance.intents.grammar import GrammarPlanner
from appliance.journal.application import Journal
from appliance.panel.state import Bounds, PanelState
from appliance.switch.controller import YES_HINT, SwitchController
from appliance.switch.model import Press
from tests.apps.atspi_harness import RunningApp, find, headless_session, start_app, wait_for_app

APP = "Juniper Test"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AtspiDesktop, RunningApp]]:
    tmp = tmp_path_factory.mktemp("switch-e2e")
    with headless_session():
        app = start_app(tmp)
        desktop = open_desktop([], timeout=2.0, open_timeout=20.0)
        wait_for_app(desktop, APP)
        try:
            yield desktop, app
        finally:
            app.stop()


def test_scan_reaches_send_a_press_selects_a_press_confirms(
    world: tuple[AtspiDesktop, RunningApp], tmp_path: Path
) -> None:
    desktop, app = world
    journal = Journal(str(tmp_path / "journal.sqlite"))
    journal.change_setting("scan_mode", "auto", by="test")
    said: list[str] = []
    panel: list[PanelState] = []

    def screen() -> AbstractContextManager[Desktop]:
        return nullcontext(desktop)

    controller = SwitchController(
        journal, screen, GrammarPlanner(), speak=said.append, show=panel.append, device="e2e"
    )
    now = 0.0

    def tap() -> str:
        return controller.handle(Press(1, "tap", now, 0.15))

    def scan_until(wanted: str) -> None:
        """Advance virtual time in 50 ms ticks until an offer leads to `wanted`."""
        nonlocal now
        while True:
            offer = controller.scanner.current
            assert offer is not None, f"scanning stopped; said {said[-6:]}"
            sub = offer.item.submenu
            if offer.item.label == wanted or (sub and any(i.label == wanted for i in sub.items)):
                return
            assert now < 60, f"{wanted} never offered; said {said}"
            now = round(now + 0.05, 6)
            controller.tick(now)

    send = find(desktop.snapshot(), APP, "push button", "Send")
    assert app.state()["pressed"].get("Send", 0) == 0

    assert tap() == "scan_start"
    scan_until("Send")
    if controller.scanner.current and controller.scanner.current.item.label != "Send":
        assert tap().startswith("scan_select")  # into Send's group
        scan_until("Send")
    offered = panel[-1]
    assert (offered.mode, offered.offer) == ("scanning", "Send")
    assert send.bounds is not None
    x, y, w, h = send.bounds
    assert offered.highlight == Bounds(x=x, y=y, width=w, height=h)

    assert tap() == "scan_select"
    assert said[-1] == f"Send needs a yes. Say yes to send, or no. {YES_HINT}"
    assert panel[-1].mode == "confirming"
    assert app.state()["pressed"].get("Send", 0) == 0  # asked first: moderate risk

    now += 1.0
    assert tap() == "yes"
    state = app.wait_state(lambda s: s["pressed"].get("Send") == 1)
    assert state["pressed"]["Send"] == 1 and state["status"].startswith("Sent")
    assert "Pressed Send." in said

    presses = [
        (e.switch, e.gesture, e.meaning)
        for _id, e in journal.domain_events()
        if type(e).__qualname__ == "Device.SwitchPressed"
    ]
    assert presses[0] == (1, "tap", "scan_start")
    assert presses[-2:] == [(1, "tap", "scan_select: Send"), (1, "tap", "yes")]
    turn = journal.recent_turns()[0]
    assert (turn.trigger, turn.confirmed_by, turn.outcome) == ("switch", "switch", "executed")
    assert turn.steps[0].via == "atspi" and turn.steps[0].target == "Send"
    assert journal.verify() == []


def test_step_scanning_operates_each_kind_of_control(
    world: tuple[AtspiDesktop, RunningApp], tmp_path: Path
) -> None:
    """Two switches (next / select) tick a check box, move a slider, pick in a combo box, select
    a list item and a page tab: each through its intent, the session and AT-SPI."""
    desktop, app = world
    journal = Journal(str(tmp_path / "journal.sqlite"))
    journal.change_setting("scan_mode", "step", by="test")
    said: list[str] = []

    def screen() -> AbstractContextManager[Desktop]:
        return nullcontext(desktop)

    controller = SwitchController(
        journal, screen, GrammarPlanner(), speak=said.append, show=lambda _s: None
    )
    now = 0.0

    def tap(switch: int = 1) -> str:
        nonlocal now
        now += 0.5
        return controller.handle(Press(switch, "tap", now, 0.15))

    def choose(*path: str) -> None:
        """From the top of the scan, step to each label in turn and select it."""
        if not controller.scanner.active:
            tap()
        for wanted in path:
            for _ in range(30):
                offer = controller.scanner.current
                assert offer is not None, said[-4:]
                if offer.item.label.startswith(wanted):
                    break
                tap(2)
            else:
                raise AssertionError(f"{wanted} not offered; said {said[-10:]}")
            tap()

    start = app.state()
    group = "Message, PIN and 5 more"
    choose(group, "Urgent, not ticked")
    assert app.wait_state(lambda s: s["urgent"] is True)["urgent"] is True
    choose(group, "Volume, 50", "Higher, 60")
    assert app.wait_state(lambda s: s["volume"] == 60.0)["volume"] == 60.0
    choose(group, "Priority, Normal", "High")
    assert app.wait_state(lambda s: s["priority"] == "High")["priority"] == "High"
    choose("Contacts", "Doctor")
    assert app.wait_state(lambda s: s["contact"] == "Doctor")["contact"] == "Doctor"
    choose("Inbox and Settings", "Settings")
    assert app.wait_state(lambda s: s["tab"] == 1)["tab"] == 1
    assert app.state()["pressed"] == start["pressed"]  # nothing else was pressed
    outcomes = [t.outcome for t in reversed(journal.recent_turns())]
    assert outcomes == ["executed"] * 5, said
