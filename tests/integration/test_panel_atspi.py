"""The panel next to a real GTK app on a real accessibility bus (Xvfb + D-Bus + at-spi2-core).

Checks that the panel never reaches a snapshot (with its AT bridge off, and on), that the
adapter's Node.bounds are the element's real place on screen (a real X click there hits it),
and that the panel's frame lands around the element the snapshot locates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from appliance.desktop.atspi import open_desktop
from appliance.desktop.atspi.adapter import AtspiDesktop
from appliance.desktop.atspi.bus import ACCESSIBLE, REGISTRY, ROOT_PATH
from appliance.desktop.atspi.gi_modules import GLib
from appliance.desktop.atspi.tree import COMPONENT
from appliance.panel.link import PanelLink
from appliance.panel.state import PANEL_APP_NAME, Bounds, PanelState
from appliance.panel.window import FRAME_COLOUR, FRAME_THICKNESS, frame_rects
from tests.apps.atspi_harness import RunningApp, find, headless_session, start_app, wait_for_app
from tests.integration.test_panel import near, screenshot

APP = "Juniper Test"
DEC = ("org.a11y.atspi.Registry", "/org/a11y/atspi/registry/deviceeventcontroller")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AtspiDesktop, RunningApp]]:
    tmp = tmp_path_factory.mktemp("panel-atspi")
    with headless_session():
        app = start_app(tmp)
        desktop = open_desktop(timeout=2.0)
        wait_for_app(desktop, APP)
        try:
            yield desktop, app
        finally:
            app.stop()


def registered_names(desktop: AtspiDesktop) -> list[str]:
    """Every application on the bus, read from the registry without the adapter's filtering."""
    reply = desktop.bus.call((REGISTRY, ROOT_PATH), ACCESSIBLE, "GetChildren")
    names = []
    for bus_name, _path in reply[0]:
        names.append(str(desktop.bus.get((str(bus_name), ROOT_PATH), ACCESSIBLE, "Name")))
    return names


@pytest.mark.parametrize("bridge", [False, True], ids=["no-at-bridge", "bridge-on"])
def test_the_panel_never_reaches_a_snapshot(
    world: tuple[AtspiDesktop, RunningApp], bridge: bool,
) -> None:
    desktop, _app = world
    link = PanelLink(acknowledge=True, bridge=bridge)
    try:
        link.show(PanelState(mode="speaking", transcript="open messages",
                             reply="Messages is open."))
        assert link.wait_shown()
        # With the bridge on the panel really is on the bus (so the adapter must skip it)...
        if bridge:
            assert wait_for(lambda: PANEL_APP_NAME in registered_names(desktop))
        else:
            assert PANEL_APP_NAME not in registered_names(desktop)
        desktop.screen.invalidate()
        snap = desktop.snapshot()
        # ...and still nothing of it is in the snapshot, while the app is there in full.
        assert APP in snap.applications and PANEL_APP_NAME not in snap.applications
        assert {n.app for n in snap.nodes} == {APP}
        assert find(snap, APP, "push button", "Send")
        assert not any("Messages is open" in n.name for n in snap.nodes)
        # The panel redrawing (events from it, when bridged) does not send the adapter back to
        # the registry for its list of applications.
        link.show(PanelState(mode="thinking", transcript="something else"))
        assert link.wait_shown()
        desktop.bus.pump()
        assert not desktop.screen._list_stale
        assert len(desktop.screen.hidden) == int(bridge)
    finally:
        link.close()


def wait_for(check: Callable[[], bool], tries: int = 100) -> bool:
    for _ in range(tries):
        if check():
            return True
        time.sleep(0.05)
    return False


def test_send_bounds_are_its_place_on_screen(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    desktop.screen.invalidate()
    before = find(desktop.snapshot(), APP, "push button", "Send")
    assert before.bounds is not None
    # Move the window away from (0, 0), so screen and window coordinates differ.
    view = next(v for v in desktop.screen.apps.values() if v.tree.name == APP)
    window_ref = view.tree.windows[0]
    desktop.bus.call(window_ref, COMPONENT, "SetPosition", GLib.Variant("(iiu)", (150, 100, 0)))
    # GTK says nothing about a moved window: `locate` reads the new place on demand.
    moved = wait_for(lambda: desktop.screen.locate(before.id) != before.bounds)
    assert moved, "the window did not move"
    located = desktop.screen.locate(before.id)
    desktop.screen.invalidate()
    snap = desktop.snapshot()
    send = find(snap, APP, "push button", "Send")
    assert send.bounds is not None and send.bounds == located
    x, y, w, h = send.bounds
    assert w > 0 and h > 0
    view = next(v for v in desktop.screen.apps.values() if v.tree.name == APP)
    window = view.tree.nodes[view.tree.windows[0]]
    assert window.bounds is not None
    wx, wy, ww, wh = window.bounds
    assert (wx, wy) == (150, 100)
    assert wx <= x and wy <= y and x + w <= wx + ww and y + h <= wy + wh
    assert (x - before.bounds[0], y - before.bounds[1]) == (150 - 0, 100 - 0)
    # Hidden elements are not measured: the Settings tab's page is not on screen.
    assert find(snap, APP, "label", "Settings page").bounds is None
    # A real pointer click (XTest, through the registry) at the centre presses Send.
    pressed = app.state().get("pressed", {}).get("Send", 0)
    desktop.bus.call(DEC, "org.a11y.atspi.DeviceEventController", "GenerateMouseEvent",
                     GLib.Variant("(iis)", (x + w // 2, y + h // 2, "b1c")))
    state = app.wait_state(lambda s: s.get("pressed", {}).get("Send", 0) > pressed)
    assert state.get("pressed", {}).get("Send", 0) == pressed + 1


def test_highlight_frames_the_element_the_snapshot_locates(
    world: tuple[AtspiDesktop, RunningApp], tmp_path: Path,
) -> None:
    desktop, app = world
    send = find(desktop.snapshot(), APP, "push button", "Send")
    assert send.bounds is not None
    x, y, w, h = send.bounds
    link = PanelLink(acknowledge=True)
    try:
        link.show(PanelState(mode="scanning", offer="Send",
                             highlight=Bounds(x=x, y=y, width=w, height=h)))
        assert link.wait_shown()
        shot = screenshot(tmp_path / "send.png")
        bars = frame_rects(Bounds(x=x, y=y, width=w, height=h), FRAME_THICKNESS, shot.size)
        for bx, by, bw, bh in bars:
            for point in [(bx + bw // 2, by + bh // 2), (bx, by), (bx + bw - 1, by + bh - 1)]:
                assert near(shot.getpixel(point), FRAME_COLOUR), f"no frame at {point}"
        # The button shows through (GTK draws its label there), and it still takes a click.
        t = FRAME_THICKNESS
        inside = [shot.getpixel((px, py)) for px in range(x + t + 1, x + w - t - 1, 3)
                  for py in range(y + t + 1, y + h - t - 1, 3)]
        assert not any(near(p, FRAME_COLOUR) for p in inside)
        assert len(set(inside)) > 2
        pressed = app.state().get("pressed", {}).get("Send", 0)
        desktop.bus.call(DEC, "org.a11y.atspi.DeviceEventController", "GenerateMouseEvent",
                         GLib.Variant("(iis)", (x + w // 2, y + h // 2, "b1c")))
        state = app.wait_state(lambda s: s.get("pressed", {}).get("Send", 0) > pressed)
        assert state.get("pressed", {}).get("Send", 0) == pressed + 1
    finally:
        link.close()
