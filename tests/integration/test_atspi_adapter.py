"""The AT-SPI adapter against a real GTK3 application under Xvfb and a private D-Bus session.

Every action kind is performed through AT-SPI and then checked against the application's own
state (which it writes as JSON from its widgets), not only against what AT-SPI reports.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from appliance.desktop.atspi import open_desktop
from appliance.desktop.atspi.adapter import AtspiDesktop
from appliance.desktop.model import REDACTED, Action, ActionKind, DesktopError, ElementState
from appliance.intents.grammar import GrammarPlanner
from appliance.voice.sink import screen_names_of
from appliance.wiring import new_session, open_journal
from tests.apps.atspi_harness import (
    RunningApp,
    calendar_allowlist,
    find,
    headless_session,
    start_app,
    wait_for_app,
)

APP = "Juniper Test"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AtspiDesktop, RunningApp]]:
    tmp = tmp_path_factory.mktemp("atspi")
    apps = calendar_allowlist(tmp)
    with headless_session():
        app = start_app(tmp)
        desktop = open_desktop([apps], timeout=2.0, open_timeout=20.0)
        wait_for_app(desktop, APP)
        try:
            yield desktop, app
        finally:
            desktop.launcher.close("Calendar")
            app.stop()


def node_id(desktop: AtspiDesktop, role: str, name: str) -> str:
    return find(desktop.snapshot(), APP, role, name).id


def test_snapshot_names_roles_states_values(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, _app = world
    snap = desktop.snapshot()
    assert APP in snap.applications and snap.active_window == "Test Form"
    # The entries have no accessible name of their own: named through their labels.
    assert find(snap, APP, "text", "Message").value == ""
    assert find(snap, APP, "password text", "PIN").value in (None, "", REDACTED)
    assert "insensitive" in find(snap, APP, "push button", "Delete").states
    assert "insensitive" not in find(snap, APP, "push button", "Send").states
    volume = find(snap, APP, "slider", "Volume")
    assert (volume.value, volume.minimum, volume.maximum) == (50.0, 0.0, 100.0)
    assert find(snap, APP, "combo box", "Priority").value == "Normal"
    assert find(snap, APP, "list item", "Doctor").parent_id == find(
        snap, APP, "list box", "Contacts").id
    assert "selected" in find(snap, APP, "page tab", "Inbox").states
    assert "click" in find(snap, APP, "check box", "Urgent").actions
    assert {"Send", "Urgent", "Grandma", "Settings"} <= set(snap.names())


def test_warm_snapshot_is_the_cached_one(world: tuple[AtspiDesktop, RunningApp]) -> None:
    """With no events in between, nothing is re-read: once the app's own start-up events have
    stopped arriving (late on a busy machine), the next snapshot is the one before."""
    desktop, _app = world
    deadline = time.monotonic() + 60
    first = desktop.snapshot()
    while (again := desktop.snapshot()) is not first:
        assert time.monotonic() < deadline, "every snapshot was read afresh"
        first = again


def test_type_text_appends_and_verifies(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    target = node_id(desktop, "text", "Message")
    result = desktop.perform(Action(kind="type_text", target=target, text="hello"))
    assert result.verified and result.via == "atspi"
    assert result.before[target].value == "" and result.after[target].value == "hello"
    desktop.perform(Action(kind="type_text", target=target, text="grandma"))
    assert app.wait_state(lambda s: s["message"] == "hello grandma")["message"] == "hello grandma"
    # The event-driven cache saw the change without being told.
    assert find(desktop.snapshot(), APP, "text", "Message").value == "hello grandma"


def test_typing_key_by_key_arrives_and_is_read_back(
    world: tuple[AtspiDesktop, RunningApp],
) -> None:
    """The path for fields without EditableText (most web fields): focus, then keys through
    uinput or, with no uinput here, the AT-SPI registry's synthetic keys; then read back."""
    desktop, app = world
    target = node_id(desktop, "text", "Message")
    desktop.perform(Action(kind="type_text", target=target, text="hi"))
    result = desktop._type_by_keys(desktop._target(target), "there")
    assert result.verified and result.via in {"atspi", "uinput"}
    assert result.detail.startswith("typed by keys")
    assert app.wait_state(lambda s: s["message"].endswith("hi there"))["message"].endswith(
        "hi there")
    with pytest.raises(DesktopError, match="can't type the character"):
        desktop._type_by_keys(desktop._target(target), "snow ☃")
    assert app.wait_state(lambda s: True)["message"].endswith("hi there")  # nothing half-typed


def test_undo_restores_the_recorded_before_state(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    target = node_id(desktop, "text", "Message")
    typed = desktop.perform(Action(kind="type_text", target=target, text="oops"))
    undone = desktop.perform(Action(kind="restore", restore=typed.before))
    assert undone.verified
    want = typed.before[target].value
    assert app.wait_state(lambda s: s["message"] == want)["message"] == want


def test_password_is_typed_but_never_read(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    target = node_id(desktop, "password text", "PIN")
    result = desktop.perform(Action(kind="type_text", target=target, text="4321"))
    assert result.verified
    assert app.wait_state(lambda s: s["pin"] == "4321")["pin"] == "4321"
    assert "4321" not in result.model_dump_json()
    assert result.after[target].value == REDACTED
    assert "4321" not in desktop.snapshot().model_dump_json()
    with pytest.raises(DesktopError, match="secret"):
        desktop.perform(Action(kind="restore", restore={target: result.after[target]}))
    cleared = desktop.perform(Action(kind="restore", restore=result.before))
    assert cleared.verified and app.wait_state(lambda s: s["pin"] == "")["pin"] == ""


def test_mismatch_is_reported_not_hidden(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    target = node_id(desktop, "text", "Code")  # the app allows 4 characters
    result = desktop.perform(Action(kind="type_text", target=target, text="123456"))
    assert not result.verified
    assert "1234" in result.detail
    assert app.wait_state(lambda s: s["code"] == "1234")["code"] == "1234"


def test_activate_runs_the_button_handler(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    result = desktop.perform(Action(kind="activate", target=node_id(desktop, "push button",
                                                                     "Send")))
    assert result.verified and result.via == "atspi"
    state = app.wait_state(lambda s: s["pressed"].get("Send") == 1)
    assert state["pressed"]["Send"] == 1 and state["status"].startswith("Sent:")


def test_disabled_button_is_refused(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    with pytest.raises(DesktopError, match="Delete is disabled"):
        desktop.perform(Action(kind="activate", target=node_id(desktop, "push button", "Delete")))
    assert "Delete" not in app.state()["pressed"]


def test_toggle_check_box(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    target = node_id(desktop, "check box", "Urgent")
    on = desktop.perform(Action(kind="set_value", target=target, value=True))
    assert on.verified and "checked" in on.after[target].states
    assert app.wait_state(lambda s: s["urgent"])["urgent"] is True
    undo = desktop.perform(Action(kind="restore", restore=on.before))
    assert undo.verified and app.wait_state(lambda s: not s["urgent"])["urgent"] is False


def test_slider_value_and_range(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    target = node_id(desktop, "slider", "Volume")
    result = desktop.perform(Action(kind="set_value", target=target, value=75))
    assert result.verified and result.after[target].value == 75.0
    assert app.wait_state(lambda s: s["volume"] == 75)["volume"] == 75
    with pytest.raises(DesktopError, match="goes from 0 to 100"):
        desktop.perform(Action(kind="set_value", target=target, value=150))


def test_combo_box_choice(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    target = node_id(desktop, "combo box", "Priority")
    result = desktop.perform(Action(kind="set_value", target=target, value="high"))
    assert result.verified and result.after[target].value == "High"
    assert app.wait_state(lambda s: s["priority"] == "High")["priority"] == "High"
    with pytest.raises(DesktopError, match="no choice"):
        desktop.perform(Action(kind="set_value", target=target, value="Urgent"))


def _leaves_state(world: tuple[AtspiDesktop, RunningApp], kind: ActionKind, role: str, name: str,
                  state: str, field: str, value: str) -> None:
    """`kind` done to the element `name` of `role` is verified, leaves the element `state`
    over AT-SPI, and the application's `field` at `value`."""
    desktop, app = world
    target = node_id(desktop, role, name)
    result = desktop.perform(Action(kind=kind, target=target))
    assert result.verified and state in result.after[target].states
    assert app.wait_state(lambda s: s[field] == value)[field] == value


def test_select_list_item_and_tab(world: tuple[AtspiDesktop, RunningApp]) -> None:
    _leaves_state(world, "select", "list item", "Doctor", "selected", "contact", "Doctor")
    desktop, app = world
    tab = node_id(desktop, "page tab", "Settings")
    result = desktop.perform(Action(kind="select", target=tab))
    assert result.verified and len(result.before) == 2  # the tab and its sibling
    assert app.wait_state(lambda s: s["tab"] == 1)["tab"] == 1


def test_focus(world: tuple[AtspiDesktop, RunningApp]) -> None:
    _leaves_state(world, "focus", "check box", "Urgent", "focused", "focus", "urgent")


def test_scroll(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, app = world
    pane = node_id(desktop, "scroll pane", "History")
    result = desktop.perform(Action(kind="scroll", target=pane, direction="down"))
    assert result.verified
    assert app.wait_state(lambda s: s["scroll"] > 0)["scroll"] > 0


def test_with_one_scroll_pane_scrolling_by_any_name_scrolls_it(
        world: tuple[AtspiDesktop, RunningApp]) -> None:
    """The form has one pane, History: the closed set hears "scroll down in urgent" as "scroll
    down", for both move its bar."""
    desktop, app = world
    assert screen_names_of(desktop.snapshot()).panes == 1
    for target in (None, node_id(desktop, "check box", "Urgent")):
        was = app.state()["scroll"]
        result = desktop.perform(Action(kind="scroll", target=target, direction="down"))
        assert result.verified, target
        assert app.wait_state(lambda s, was=was: s["scroll"] > was)["scroll"] > was, target


def test_press_key_chord(world: tuple[AtspiDesktop, RunningApp]) -> None:
    """No uinput on this kernel: keys go through the AT-SPI registry (XTest under Xvfb)."""
    desktop, app = world
    desktop.perform(Action(kind="focus", target=node_id(desktop, "text", "Message")))
    result = desktop.perform(Action(kind="press_key", key="ctrl+z"))
    assert result.verified and result.via in {"atspi", "uinput"}
    assert "ctrl+z" in app.wait_state(lambda s: "ctrl+z" in s["keys"])["keys"]
    with pytest.raises(DesktopError, match="know the key"):
        desktop.perform(Action(kind="press_key", key="ctrl+banana"))


def test_open_app_from_allowlist_and_undo(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, _app = world
    assert "Calendar" in desktop.snapshot().launchable
    result = desktop.perform(Action(kind="open_app", target="Calendar"))
    assert result.verified and result.after["app:Calendar"] == ElementState(running=True)
    snap = desktop.snapshot()
    assert "Calendar" in snap.applications and "Calendar" not in snap.launchable
    assert any(n.app == "Calendar" for n in snap.nodes)
    closed = desktop.perform(Action(kind="restore", restore=result.before))
    assert closed.verified and "Calendar" not in desktop.snapshot().applications


def test_open_app_not_allowlisted(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, _app = world
    with pytest.raises(DesktopError, match="not on the list"):
        desktop.perform(Action(kind="open_app", target="Terminal"))


def test_gone_element_is_a_spoken_error(world: tuple[AtspiDesktop, RunningApp]) -> None:
    desktop, _app = world
    with pytest.raises(DesktopError, match="no longer on the screen"):
        desktop.perform(Action(kind="activate", target="9.9.9"))


def test_reading_back_the_field_being_written(
    world: tuple[AtspiDesktop, RunningApp], tmp_path: Path,
) -> None:
    """"what does it say" reads the focused field's text, as the app itself holds it; "what is
    the result" in the same session reads what the last action changed (the same field)."""
    desktop, app = world
    session = new_session(open_journal(str(tmp_path / "j.sqlite")), desktop, GrammarPlanner())
    session.say("type see you soon into message")
    message = app.wait_state(lambda s: s["message"].endswith("see you soon"))["message"]
    assert session.say("what is the result").spoken == f"{message}."
    session.say("go to message")
    assert session.say("what does it say").spoken == message
