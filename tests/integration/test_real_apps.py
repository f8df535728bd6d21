"""Real Debian applications driven by spoken commands through `appliance say --desktop atspi`.

Chromium on a local form, yad's form dialog (GTK3), FeatherPad (Qt 5) and GTK4's print editor,
under Xvfb + openbox; each judged by what the application itself reports. The held-out cases
(tests/integration/test_real_apps_heldout.py) are run the same way but were never tuned on.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.apps.real_apps import (
    EDITORS,
    YAD_FORM,
    Browser,
    Kiosk,
    Outcome,
    browser_case,
    editor_case,
    on_screen,
    run_yad,
    start,
    stop,
    wait_for,
    yad_case,
)
from tests.real_app_cases import BROWSER_TUNED, EDITOR_TUNED, YAD_TUNED, Case


def _check(outcome: Outcome) -> None:
    assert outcome.kind == "right", f"{outcome.case}: {outcome.kind} {outcome.detail}"


@pytest.mark.parametrize("case", BROWSER_TUNED, ids=lambda c: c.name)
def test_browser_form(real_browser: Browser, kiosk: Kiosk, case: Case) -> None:
    _check(browser_case(real_browser, kiosk, case.name, case.commands, dict(case.wanted)))


@pytest.mark.parametrize("case", YAD_TUNED, ids=lambda c: c.name)
def test_yad_form(real_session: Path, kiosk: Kiosk, case: Case) -> None:
    _check(yad_case(kiosk, case.name, case.commands, dict(case.wanted)))


def test_an_ok_that_closes_its_dialog_is_said_as_done(real_session: Path, kiosk: Kiosk) -> None:
    """yad exits when OK is pressed, so the button cannot be read back: the press worked."""
    decisions, printed = run_yad(["type Ann into name", "press OK"], kiosk)
    assert printed is not None and printed["Name"] == "Ann"  # what yad itself says
    assert decisions == ["executed", "executed"]
    assert kiosk.replies[-1]["spoken"] == "Pressed OK."


@pytest.mark.parametrize("editor", sorted(EDITORS))
@pytest.mark.parametrize("case", EDITOR_TUNED, ids=lambda c: c.name)
def test_editor_saves(real_session: Path, kiosk: Kiosk, editor: str, case: Case) -> None:
    path = real_session / f"{editor}-{len(kiosk.replies)}.txt"
    _check(editor_case(EDITORS[editor], path, kiosk, case.name, case.commands,
                       dict(case.wanted)))


SNAPSHOTS = 50
APPS = {
    "FeatherPad (Qt 5)": ["featherpad"],
    "print editor (GTK4)": ["gtk4-print-editor"],
    "galculator (GTK3)": ["galculator"],
    "yad form (GTK3)": YAD_FORM,
}


def _answers(bus_name: str) -> bool:
    from appliance.desktop.atspi.bus import ACCESSIBLE, ROOT_PATH, A11yBus

    bus = A11yBus(timeout=2.0)
    try:
        return bool(bus.get((bus_name, ROOT_PATH), ACCESSIBLE, "Name") is not None)
    finally:
        bus.close()


def _snapshot_hard(app_name: str | None, pid: int) -> None:
    """Cold-read every window SNAPSHOTS times; the app must live and still answer."""
    from appliance.desktop.atspi import open_desktop
    from appliance.desktop.atspi.launcher import bus_pid

    desktop = open_desktop(timeout=2.0)
    def joined() -> list[str]:
        desktop.screen.invalidate()
        desktop.snapshot()
        return [b for b in desktop.screen.apps if bus_pid(desktop.bus, b) == pid]

    mine = wait_for(joined, 60)
    assert mine, f"{app_name} never joined the accessibility bus"
    for _ in range(SNAPSHOTS):
        desktop.screen.invalidate()
        desktop.snapshot()
    assert desktop.problems() == []
    assert _answers(mine[0]), f"{app_name} stopped answering"


def test_snapshots_never_crash_chromium(real_browser: Browser) -> None:
    _snapshot_hard("Chromium", real_browser.proc.pid)
    assert real_browser.proc.poll() is None, "Chromium died"


@pytest.mark.parametrize("name", sorted(APPS))
def test_snapshots_never_crash_the_app(real_session: Path, name: str) -> None:
    proc = start([*APPS[name], *([str(real_session / "crash.txt")] if "editor" in name
                                 or "Qt" in name else [])], stdout=subprocess.DEVNULL)
    try:
        _snapshot_hard(name, proc.pid)
        assert proc.poll() is None, f"{name} died"
    finally:
        stop(proc)


def test_an_app_that_leaves_is_said_to_have_closed(real_session: Path) -> None:
    from appliance.desktop.atspi import open_desktop
    from appliance.desktop.model import Action, DesktopError

    proc = start(YAD_FORM, stdout=subprocess.DEVNULL)
    try:
        assert on_screen("Reminder")
        desktop = open_desktop()
        ok = next(n for n in desktop.snapshot().nodes if n.name == "OK" and n.app == "yad")
        proc.kill()
        proc.wait()
        with pytest.raises(DesktopError, match="yad has closed"):
            wait_for(lambda: desktop.screen.invalidate() or "yad" not in
                     desktop.snapshot().applications, 10)
            desktop.perform(Action(kind="activate", target=ok.id))
    finally:
        stop(proc)


def _display(app_name: str) -> str:
    """A calculator's display as libatspi itself reads it (not the appliance's own reader)."""
    import gi

    gi.require_version("Atspi", "2.0")
    from gi.repository import Atspi  # type: ignore[import-not-found,import-untyped,unused-ignore]

    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is None or app.get_name() != app_name:
            continue
        stack = [app]
        while stack:
            node = stack.pop()
            showing = node.get_state_set().contains(Atspi.StateType.SHOWING)
            if node.get_role() == Atspi.Role.TEXT and showing:
                return str(Atspi.Text.get_text(node, 0, -1))
            stack.extend(node.get_child_at_index(j) for j in range(node.get_child_count()))
    raise AssertionError(f"no display in {app_name}")


def test_a_calculator_says_its_result(real_session: Path, kiosk: Kiosk) -> None:
    """Symbol buttons by their spoken names, then the display read back as the result."""
    proc = start(["galculator"])
    try:
        assert on_screen("="), "galculator never appeared"
        for said in ("press 1", "press 2", "press plus", "press 3", "press 0", "press equals"):
            assert kiosk.say(said)["decision"] == "executed", kiosk.replies[-1]
        shown = wait_for(lambda: _display("galculator").strip() == "42" and "42", timeout=5)
        assert shown == "42", _display("galculator")
        for question in ("what is the result", "read the display"):
            answer = kiosk.say(question)
            assert answer["decision"] == "answered" and answer["spoken"] == "42", answer
    finally:
        stop(proc)
