"""The US keymap and chord parser (pure), and uinput's absence on this kernel as a spoken error."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.desktop.model import DesktopError
from appliance.desktop.uinput.keymap import (
    KEY_CODES,
    US_LAYOUT,
    char_stroke,
    parse_chord,
    text_strokes,
)


def test_every_printable_ascii_character_is_mapped() -> None:
    for code in range(32, 127):
        stroke = char_stroke(chr(code))
        assert stroke.key in KEY_CODES
        assert stroke.keysym == code


@pytest.mark.parametrize(
    ("char", "key", "shift"),
    [("a", "KEY_A", False), ("A", "KEY_A", True), ("!", "KEY_1", True), ("?", "KEY_SLASH", True),
     ("\"", "KEY_APOSTROPHE", True), (" ", "KEY_SPACE", False), ("\n", "KEY_ENTER", False)],
)
def test_us_layout(char: str, key: str, shift: bool) -> None:
    assert US_LAYOUT[char] == (key, shift)


def test_chords() -> None:
    assert parse_chord("ctrl+z").modifiers == ("KEY_LEFTCTRL",)
    assert parse_chord("ctrl+z").key == "KEY_Z" and parse_chord("ctrl+z").mask == 4
    assert parse_chord("Return").key == "KEY_ENTER" and parse_chord("Return").keysym == 0xFF0D
    assert parse_chord("alt+F4").key == "KEY_F4"
    assert parse_chord("ctrl+shift+t").modifiers == ("KEY_LEFTCTRL", "KEY_LEFTSHIFT")
    assert parse_chord("Page_Down").key == "KEY_PAGEDOWN"


@pytest.mark.parametrize("bad", ["", "ctrl+", "hyper+x", "ctrl+banana", "+"])
def test_unknown_keys_are_spoken_errors(bad: str) -> None:
    with pytest.raises(DesktopError, match="know the key"):
        parse_chord(bad)


def test_untypeable_text_fails_before_any_key() -> None:
    with pytest.raises(DesktopError, match="can't type the character 'ü'"):
        text_strokes("Grüße")


@pytest.mark.skipif(Path("/dev/uinput").exists(), reason="this machine has uinput")
def test_missing_uinput_is_a_spoken_error() -> None:
    """Real python-uinput against this kernel, which has no /dev/uinput."""
    pytest.importorskip("uinput")
    from appliance.desktop.uinput.devices import VirtualKeyboard

    with pytest.raises(DesktopError, match="virtual keyboard is not available"):
        VirtualKeyboard()
