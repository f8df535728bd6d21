"""Switch input for real, inside the throwaway QEMU guest (this kernel has no uinput or evdev).

scripts/build-vm.sh packs appliance/switch with the guest; the guest (tests/vm/guest_switch.py)
makes a "Test Switch Interface" with uinput, and the appliance's SwitchSource (python-evdev on
/dev/input/eventN, grabbed) and Gestures read it: taps, holds with autorepeat, long holds,
contact bounce, ignore-repeat, the second switch, and an unplug and replug of the device while
the source keeps running. hardware/70-appliance.rules is run by the real udevadm (from the
host's `udev` package) on the guest's devices. One boot for the module. The choice rules and
key names are also checked on the host, on plain Candidates (no devices needed).
"""

from __future__ import annotations

from typing import Any

import pytest

from appliance.settings import Settings
from appliance.switch.devices import Candidate, SwitchError, key_codes, pick
from tests.vm_boot import boot_guest

DOWN, UP = {"edge": "down", "switch": 1}, {"edge": "up", "switch": 1}


@pytest.fixture(scope="module")
def guest() -> dict[str, Any]:
    return boot_guest("switch")


def presses(events: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(e["switch"], e["press"]) for e in events if "press" in e]


def test_the_switch_is_chosen_by_capability_over_a_keyboard(guest: dict[str, Any]) -> None:
    assert guest["chosen"] == "Test Switch Interface" and guest["chosen_path_matches"]
    chosen = [c for c in guest["probe"] if c["chosen"]]
    assert [c["name"] for c in chosen] == ["Test Switch Interface"]
    assert chosen[0]["keys"] == ["KEY_SPACE", "KEY_ENTER"] and chosen[0]["key_count"] == 2
    # The guest's PS/2 keyboard has both keys too, and was listed but passed over.
    keyboards = [c for c in guest["probe"] if c["key_count"] > 50]
    assert keyboards and not any(c["chosen"] for c in keyboards)
    assert all(c["keys"] == ["KEY_SPACE", "KEY_ENTER"] for c in keyboards)


def test_a_missing_named_switch_is_a_short_message(guest: dict[str, Any]) -> None:
    assert guest["missing"] == "No switch named 'Big Red Button' is plugged in."


def test_a_tap_and_the_grab_keeps_it_from_other_readers(guest: dict[str, Any]) -> None:
    assert guest["tap"] == [DOWN, UP, {"press": "tap", "switch": 1,
                                      "held_s": guest["tap"][2]["held_s"]}]
    assert 0.05 < guest["tap"][2]["held_s"] < 0.5
    assert guest["other_reader_events"] == 0


def test_a_hold_with_autorepeat_is_one_hold(guest: dict[str, Any]) -> None:
    assert [e for e in guest["hold"] if "edge" in e] == [DOWN, UP]  # autorepeat is no edge
    assert presses(guest["hold"]) == [(1, "hold")]


def test_a_long_hold_is_a_hold_then_a_long_hold_and_no_tap(guest: dict[str, Any]) -> None:
    assert presses(guest["long_hold"]) == [(1, "hold"), (1, "long_hold")]


def test_bounces_are_dropped(guest: dict[str, Any]) -> None:
    assert [e for e in guest["bounce"] if "edge" in e] == [DOWN, UP]
    assert presses(guest["bounce"]) == [(1, "tap")]


def test_a_second_press_straight_after_a_release_is_ignored(guest: dict[str, Any]) -> None:
    assert presses(guest["repeat"]) == [(1, "tap")]


def test_the_second_switch(guest: dict[str, Any]) -> None:
    assert presses(guest["second_switch"]) == [(2, "tap")]


def test_unplug_and_replug_without_restarting(guest: dict[str, Any]) -> None:
    unplug = guest["unplug"]
    # Held when unplugged: released at once and abandoned, neither a tap (which could answer
    # "yes") nor a hold running on into a long hold.
    assert [e for e in unplug if "edge" in e] == [DOWN, UP]
    assert presses(unplug) == []
    assert unplug[-1] == {"fault": "The switch 'Test Switch Interface' was unplugged; "
                                   "waiting for it to come back."}
    assert guest["connected_while_gone"] is False
    assert guest["replug"] == [{"fault": "The switch 'Test Switch Interface' is back."}]
    assert guest["connected_again"] is True
    assert presses(guest["after_replug"]) == [(1, "tap")]
    assert len(guest["faults"]) == 2  # reported once each way, however long it was gone


def test_the_udev_rule_gives_the_group_uinput_and_leaves_other_input_alone(
    guest: dict[str, Any],
) -> None:
    udev = guest["udev"]
    assert "error" not in udev, udev.get("error")
    uinput = udev["uinput"]
    assert (uinput["gid"], uinput["mode"], uinput["rc"]) == (990, "0o660", 0)  # appliance
    assert [ln.split(": ", 1)[1] for ln in uinput["rule_lines"][1:]] == [
        "/etc/udev/rules.d/70-appliance.rules:6 GROUP 990",
        "/etc/udev/rules.d/70-appliance.rules:6 MODE 0660",
    ]
    # A keyboard, and a switch interface not (yet) listed by vendor:product, stay root's; the
    # rules file parsed without a complaint (udevadm names the file and line of any).
    for other in ("keyboard", "switch"):
        assert udev[other]["gid"] == 0 and udev[other]["rc"] == 0
        assert udev[other]["rule_lines"] == [
            "Reading rules file: /etc/udev/rules.d/70-appliance.rules"
        ]


def test_a_switch_plugged_in_after_the_start_is_found(guest: dict[str, Any]) -> None:
    assert guest["late_before"] == [{"fault": "No switch named 'Late Switch' is plugged in."}]
    assert guest["late_plugged"] == [{"fault": "The switch 'Late Switch' is connected."}]
    assert presses(guest["late_tap"]) == [(1, "tap")]


# -- on the host: key names and the choice rules ----------------------------------------------


def test_key_names_map_to_codes_and_switches() -> None:
    codes = key_codes(Settings(switch_keys=("KEY_SPACE", "btn_0"),
                               switch_second_keys=("KEY_ENTER",)))
    assert codes == {57: 1, 256: 1, 28: 2}
    both = key_codes(Settings(switch_keys=("KEY_SPACE",), switch_second_keys=("KEY_SPACE",)))
    assert both == {57: 1}  # a key in both lists is switch 1's


@pytest.mark.parametrize("bad", ["KEY_SPACEBAR", "EV_KEY", "57"])
def test_an_unknown_key_name_is_a_short_message(bad: str) -> None:
    with pytest.raises(SwitchError, match=f"Unknown switch key '{bad}'"):
        key_codes(Settings(switch_keys=(bad,)))


def test_no_keys_at_all_is_a_short_message() -> None:
    with pytest.raises(SwitchError, match="No switch keys are set"):
        key_codes(Settings(switch_keys=(), switch_second_keys=()))


KEYBOARD = Candidate("/dev/input/event2", "USB Keyboard", ("KEY_SPACE", "KEY_ENTER"), 120)
OWN = Candidate("/dev/input/event4", "appliance virtual keyboard", ("KEY_SPACE",), 100)
BUTTON = Candidate("/dev/input/event7", "button@17", ("KEY_SPACE",), 1)
MOUSE = Candidate("/dev/input/event3", "USB Mouse", (), 5)


def test_capability_prefers_the_smallest_device_and_never_our_own() -> None:
    assert pick([KEYBOARD, OWN, BUTTON, MOUSE], "") is BUTTON
    assert pick([KEYBOARD, OWN, MOUSE], "") is KEYBOARD  # a keyboard only if nothing else


def test_by_name_part_or_path() -> None:
    assert pick([KEYBOARD, BUTTON], "usb key") is KEYBOARD
    assert pick([KEYBOARD, BUTTON], "/dev/input/event2") is KEYBOARD


def test_choice_errors_are_short_messages() -> None:
    cases = [
        ([OWN, MOUSE], "", "No switch found: plug one in or set switch_device."),
        ([KEYBOARD, MOUSE], "mouse", "The switch 'mouse' has none of the switch keys."),
        ([KEYBOARD, MOUSE], "jelly bean", "No switch named 'jelly bean' is plugged in."),
    ]
    for found, device, message in cases:
        with pytest.raises(SwitchError) as error:
            pick(found, device)
        assert str(error.value) == message
