"""A 5,000-node tree and an application that stops answering, on real GTK3 apps under Xvfb.

The hung application is a real one frozen with SIGSTOP: its D-Bus calls go unanswered, exactly
as when a toolkit's main loop is stuck.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from appliance.desktop.atspi import open_desktop
from appliance.desktop.model import Action, DesktopError
from tests.apps.atspi_harness import (
    RunningApp,
    find,
    headless_session,
    start_app,
    wait_for_app,
)


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningApp, RunningApp]]:
    tmp = tmp_path_factory.mktemp("stress")
    with headless_session():
        big = start_app(tmp, "--nodes", "5200", "--app-name", "Big Tree", "--title", "Big",
                        tag="big")
        form = start_app(tmp, "--app-name", "Form", tag="form")
        try:
            yield big, form
        finally:
            for app in (big, form):
                os.kill(app.proc.pid, signal.SIGCONT)
                app.stop()


def test_five_thousand_nodes_read_as_far_as_they_show_and_capped(
    apps: tuple[RunningApp, RunningApp],
) -> None:
    """5,200 labels in a scroller: what shows is read whole, what is scrolled away is not
    walked (nothing there can be acted on), and the caps hold on what is walked."""
    desktop = open_desktop(timeout=5.0)
    snap = wait_for_app(desktop, "Big Tree")
    wait_for_app(desktop, "Form")
    snap = desktop.snapshot()
    big = [n for n in snap.nodes if n.app == "Big Tree"]
    shown = [n for n in big if n.role == "label" and n.visible]
    assert find(snap, "Big Tree", "label", "Item 0") and len(shown) >= 10
    assert [n.name for n in shown] == [f"Item {i}" for i in range(len(shown))]  # none skipped
    assert not any(n.name == "Item 4999" for n in big)  # scrolled away: never walked
    assert len(big) < 1000

    capped = open_desktop(timeout=5.0, max_nodes=12, max_depth=4)
    wait_for_app(capped, "Form")
    snap = capped.snapshot()
    assert 0 < len([n for n in snap.nodes if n.app == "Big Tree"]) <= 12
    assert max(n.id.count(".") for n in snap.nodes if n.app == "Big Tree") <= 6
    # The cap on one application does not cost the others their elements.
    assert find(snap, "Form", "push button", "Send")


def test_hung_application_is_reported_and_others_still_work(
    apps: tuple[RunningApp, RunningApp],
) -> None:
    big, form = apps
    desktop = open_desktop(timeout=0.5)
    wait_for_app(desktop, "Form")
    send = find(desktop.snapshot(), "Form", "push button", "Send").id
    urgent = find(desktop.snapshot(), "Form", "check box", "Urgent").id
    os.kill(form.proc.pid, signal.SIGSTOP)
    try:
        desktop.screen.invalidate()
        snap = desktop.snapshot()  # returns: every call has a timeout
        assert not any(n.app == "Form" for n in snap.nodes)
        assert any(n.app == "Big Tree" for n in snap.nodes)
        assert desktop.problems() == ["Form is not responding."]
        with pytest.raises(DesktopError, match="Form is not responding"):
            desktop.perform(Action(kind="activate", target=send))
    finally:
        os.kill(form.proc.pid, signal.SIGCONT)
    snap = wait_for_app(desktop, "Form")
    assert desktop.problems() == []
    result = desktop.perform(Action(kind="set_value", target=urgent, value=True))
    assert result.verified
    assert form.wait_state(lambda s: s.get("urgent") is True)["urgent"] is True
    del big


def test_hung_application_during_an_action(apps: tuple[RunningApp, RunningApp]) -> None:
    """The app freezes between the snapshot and the action: a spoken error, not a hang."""
    _big, form = apps
    desktop = open_desktop(timeout=0.5)
    wait_for_app(desktop, "Form")
    target = find(desktop.snapshot(), "Form", "text", "Message").id
    os.kill(form.proc.pid, signal.SIGSTOP)
    try:
        with pytest.raises(DesktopError, match="not responding"):
            desktop.perform(Action(kind="type_text", target=target, text="hi"))
    finally:
        os.kill(form.proc.pid, signal.SIGCONT)
