"""The uinput adapter for real, inside a throwaway QEMU guest (this kernel has no uinput).

scripts/build-vm.sh packs a Debian kernel with its uinput and evdev modules, busybox, Debian's
Python 3.11 and appliance/desktop/uinput into an initramfs (cached in .cache/uinput-vm); the guest
creates the virtual devices, emits a chord, a typed string and a click, reads them back through
evdev from /dev/input/eventN and prints them for these assertions.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.vm_boot import boot_guest

EV_KEY, EV_ABS = 1, 3
# linux/input-event-codes.h, written out here independently of the adapter's keymap.
CTRL, SHIFT, Z, H, KEY_I, T, E, R, SPACE, ONE, BTN_LEFT = (
    29, 42, 44, 35, 23, 20, 18, 19, 57, 2, 272)



def tap(code: int) -> list[list[int]]:
    return [[EV_KEY, code, 1], [EV_KEY, code, 0]]


def shifted(code: int) -> list[list[int]]:
    return [[EV_KEY, SHIFT, 1], *tap(code), [EV_KEY, SHIFT, 0]]


@pytest.fixture(scope="module")
def guest() -> dict[str, Any]:
    return boot_guest("uinput")


def test_chord_reads_back_as_ctrl_z(guest: dict[str, Any]) -> None:
    assert guest["keyboard_has_keys"]
    assert guest["chord"] == [[EV_KEY, CTRL, 1], *tap(Z), [EV_KEY, CTRL, 0]]


def test_typed_string_reads_back_key_by_key(guest: dict[str, Any]) -> None:
    expected = [*shifted(H), *tap(KEY_I), *tap(SPACE), *tap(T), *tap(H), *tap(E), *tap(R), *tap(E),
                *shifted(ONE)]
    assert guest["typed"] == expected  # "Hi there!"


def test_untypeable_character_is_an_error_and_types_nothing(guest: dict[str, Any]) -> None:
    assert guest["bad_char"] == "I can't type the character 'é' with this keyboard."
    assert guest["after_bad_char"] == []  # "ok " was not typed either


def test_pointer_click_at_a_point(guest: dict[str, Any]) -> None:
    assert guest["click"] == [[EV_ABS, 0, 100], [EV_ABS, 1, 200], *tap(BTN_LEFT)]
