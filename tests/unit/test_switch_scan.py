"""The scanning engine on a virtual clock, and scan menus built from real sim snapshots.

No test sleeps: time is the `now` handed to the scanner.
"""

from __future__ import annotations

import pytest

from appliance.desktop.model import Node, Snapshot
from appliance.intents.model import Activate, Cancel, Focus, Select, SetValue, Undo
from appliance.panel.state import Bounds
from appliance.settings import Settings
from appliance.switch.menu import Menu, MenuItem, options_menu, scan_menu
from appliance.switch.scan import Offer, Scanner, ScanTiming, Stopped
from tests.scenes import messages, settings_panel, snapshot_of

ABC = Menu("test", (MenuItem("A"), MenuItem("B"), MenuItem("C")))


def labels(events: list[Offer | Stopped]) -> list[str]:
    return [e.item.label if isinstance(e, Offer) else "stop" for e in events]


# -- timing ------------------------------------------------------------------------------


def test_auto_scan_timing_follows_interval_pause_and_loops() -> None:
    scanner = Scanner(ScanTiming(interval_s=1.0, loops=2, pause_first_s=0.5))
    first = scanner.start(ABC, now=100.0)
    assert (first.item.label, first.due) == ("A", 100.0)
    assert scanner.due() == 101.5  # the first item gets the pause on top
    assert scanner.tick(101.49) == []
    got = scanner.tick(101.5)
    assert labels(got) == ["B"] and got[0].due == 101.5
    assert [e.due for e in scanner.tick(110.0)] == [102.5, 103.5, 105.0, 106.0, 107.0]
    # C, then loop two (A with its pause, B, C); the last dwell ends at 107.0 and it stops.
    assert not scanner.active and scanner.due() is None


def test_late_tick_reports_every_due_offer_on_schedule() -> None:
    """A tick that runs late does not push later offers back (no drift)."""
    scanner = Scanner(ScanTiming(interval_s=1.0, loops=5, pause_first_s=0.0))
    scanner.start(ABC, now=0.0)
    events = scanner.tick(2.7)
    assert labels(events) == ["B", "C"] and [e.due for e in events] == [1.0, 2.0]
    assert scanner.due() == 3.0


def test_loop_count_and_stop_event() -> None:
    scanner = Scanner(ScanTiming(interval_s=1.0, loops=1, pause_first_s=0.0))
    scanner.start(ABC, now=0.0)
    events = scanner.tick(100.0)
    assert labels(events) == ["B", "C", "stop"]
    assert isinstance(events[-1], Stopped) and events[-1].due == 3.0


def test_next_restarts_the_dwell_from_now() -> None:
    scanner = Scanner(ScanTiming(interval_s=1.0, loops=2, pause_first_s=1.0))
    scanner.start(ABC, now=0.0)
    offer = scanner.next(now=0.4)
    assert offer.item.label == "B" and scanner.due() == 1.4


def test_step_mode_has_no_timer_and_wraps() -> None:
    scanner = Scanner(ScanTiming(style="step"))
    scanner.start(ABC, now=0.0)
    assert scanner.due() is None and scanner.tick(1e9) == []
    assert [scanner.next(t).item.label for t in (1.0, 2.0, 3.0, 4.0)] == ["B", "C", "A", "B"]
    assert scanner.active and scanner.current is not None
    assert scanner.current.item.label == "B"


def test_hold_to_scan_moves_only_while_held() -> None:
    scanner = Scanner(ScanTiming(interval_s=1.0, pause_first_s=0.5, hold_to_scan=True))
    scanner.start(ABC, now=0.0)
    assert scanner.tick(50.0) == [] and scanner.due() is None
    scanner.hold(now=50.0)
    assert scanner.due() == 51.5
    assert labels(scanner.tick(52.6)) == ["B", "C"]
    chosen = scanner.release()
    assert chosen is not None and chosen.item.label == "C"
    assert scanner.tick(100.0) == [] and scanner.active  # never stops under the user's hand


def test_submenu_start_and_stop() -> None:
    scanner = Scanner(ScanTiming(interval_s=1.0, loops=2, pause_first_s=0.0))
    scanner.start(ABC, now=0.0)
    inner = Menu("inner", (MenuItem("X"), MenuItem("Y")))
    assert scanner.start(inner, now=0.5).item.label == "X"
    assert labels(scanner.tick(1.5)) == ["Y"]
    scanner.stop()
    assert not scanner.active and scanner.tick(10.0) == [] and scanner.current is None


def test_timing_from_settings() -> None:
    timing = ScanTiming.from_settings(
        Settings(scan_mode="step", scan_interval_s=2.0, scan_loops=3, scan_pause_first_s=0.0)
    )
    assert timing == ScanTiming(2.0, 3, 0.0, "step", False)
    assert ScanTiming.from_settings(Settings()) == ScanTiming(1.2, 2, 1.2, "auto", False)


def test_an_empty_menu_cannot_be_scanned() -> None:
    with pytest.raises(ValueError, match="at least one item"):
        Scanner(ScanTiming()).start(Menu("empty", ()), now=0.0)


# -- menus from snapshots ----------------------------------------------------------------


def test_messages_menu_groups_by_container_and_ends_with_fixed_items() -> None:
    menu = scan_menu(snapshot_of(messages()))
    assert [i.label for i in menu.items] == [
        "Message, Urgent and 3 more",
        "Contacts",
        "Speak a command",
        "Undo",
        "Cancel",
        "Learn my voice",
        "Stop scanning",
    ]
    window = menu.items[0].submenu
    assert window is not None
    # Call is insensitive and Status a label: neither is offered.
    assert [i.label for i in window.items] == [
        "Message, text field",
        "Urgent, ticked",
        "Send",
        "Delete conversation",
        "PIN, text field",
        "Back",
    ]
    message, urgent, send, delete, pin, back = window.items
    assert message.intent == Focus(target="Message", words="go to Message") and message.talk_after
    assert urgent.intent == SetValue(target="Urgent", value=False, words="untick Urgent")
    assert send.intent == Activate(target="Send", words="press Send")
    assert delete.intent == Activate(
        target="Delete conversation", words="press Delete conversation"
    )
    assert pin.intent == Focus(target="PIN", words="go to PIN")
    assert back.command == "back"
    contacts = menu.items[1].submenu
    assert contacts is not None
    assert [i.intent for i in contacts.items[:3]] == [
        Select(target=n, words=f"select {n}") for n in ("Grandma", "Doctor", "Radio 4")
    ]
    assert menu.items[3].intent == Undo(words="undo")
    assert menu.items[4].intent == Cancel(words="cancel")
    assert [i.command for i in menu.items[2:]] == ["talk", None, None, "learn_voice", "stop"]


def test_radio_menu_slider_and_combo_box_get_sub_menus() -> None:
    data = messages()
    data["applications"] = data.pop("launchable")[1:]  # Radio, running and active
    menu = scan_menu(snapshot_of(data))
    group = menu.items[0].submenu
    assert group is not None
    volume, station, play = group.items[:3]
    assert volume.label == "Volume, 30" and volume.submenu is not None
    assert [(i.label, i.intent) for i in volume.submenu.items[:2]] == [
        ("Higher, 40", SetValue(target="Volume", value=40.0, words="set Volume to 40")),
        ("Lower, 20", SetValue(target="Volume", value=20.0, words="set Volume to 20")),
    ]
    assert station.label == "Station, Radio 1" and station.submenu is not None
    assert [i.label for i in station.submenu.items] == ["Radio 1", "Radio 4", "Jazz FM", "Back"]
    assert station.submenu.items[2].intent == SetValue(
        target="Station", value="Jazz FM", words="set Station to Jazz FM"
    )
    # The combo box's own menu items are offered only through it.
    assert "Jazz FM" not in [i.label for i in group.items]
    assert play.intent == SetValue(target="Play", value=True, words="tick Play")


def test_slider_at_its_end_offers_only_the_way_back() -> None:
    data = settings_panel()
    window = data["applications"][0]["windows"][0]["children"]
    next(c for c in window if c["name"] == "Brightness")["value"] = 90
    group = scan_menu(snapshot_of(data)).items[0].submenu
    assert group is not None
    bright = next(i for i in group.items if i.label.startswith("Brightness"))
    assert bright.submenu is not None
    assert [i.label for i in bright.submenu.items] == ["Lower, 82", "Back"]  # a tenth of 10..90


def test_invisible_and_unnamed_controls_are_left_out() -> None:
    group = scan_menu(snapshot_of(settings_panel())).items[0].submenu
    assert group is not None
    names = [i.label for i in group.items]
    assert "Hidden thing" not in names and "Notice" not in names
    assert names.count("OK") == 2  # twins stay: the session asks which one


def test_a_single_control_is_offered_directly_and_order_follows_the_screen() -> None:
    def node(id: str, role: str, name: str, parent: str | None, **kw: object) -> Node:
        return Node(id=id, role=role, name=name, app="A", window="W", parent_id=parent,
                    **kw)  # type: ignore[arg-type]

    nodes = (
        node("w", "filler", "", None, child_ids=("p", "b")),
        node("p", "panel", "Tools", "w", child_ids=("p.1", "p.2")),
        node("p.1", "push button", "Right", "p", bounds=(200, 10, 50, 20)),
        node("p.2", "push button", "Left", "p", bounds=(10, 10, 50, 20)),
        node("b", "push button", "Top", "w", bounds=(0, 0, 30, 5)),
    )
    menu = scan_menu(Snapshot(nodes=nodes, active_app="A", active_window="W"))
    assert [i.label for i in menu.items[:2]] == ["Top", "Tools"]
    top, tools = menu.items[:2]
    assert top.intent == Activate(target="Top", words="press Top")
    assert top.bounds == Bounds(x=0, y=0, width=30, height=5)
    assert tools.bounds == Bounds(x=10, y=10, width=240, height=20)  # around both buttons
    assert tools.submenu is not None
    assert [i.label for i in tools.submenu.items] == ["Left", "Right", "Back"]


def test_secret_values_are_never_in_a_label() -> None:
    data = messages()
    pin = next(c for c in data["applications"][0]["windows"][0]["children"] if c["name"] == "PIN")
    pin["value"] = "4321"
    menu = scan_menu(snapshot_of(data))
    assert "4321" not in repr(menu)


def test_options_menu_answers_a_which_question() -> None:
    menu = options_menu("Radio 4 the contact or the station?", ["Contacts", "Station"])
    assert [i.label for i in menu.items] == ["Contacts", "Station", "Cancel"]
    assert menu.items[1].words == "Station"
