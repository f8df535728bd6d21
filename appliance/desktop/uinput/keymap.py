"""An explicit US keyboard map: characters and key names to evdev key codes and X keysyms.

A character the map cannot type is an error the user hears, never a wrong key.
"""

from __future__ import annotations

from dataclasses import dataclass

from appliance.desktop.model import DesktopError

# evdev key codes (linux/input-event-codes.h), so the map needs no library to be imported.
KEY_CODES: dict[str, int] = {
    "KEY_ESC": 1, "KEY_1": 2, "KEY_2": 3, "KEY_3": 4, "KEY_4": 5, "KEY_5": 6, "KEY_6": 7,
    "KEY_7": 8, "KEY_8": 9, "KEY_9": 10, "KEY_0": 11, "KEY_MINUS": 12, "KEY_EQUAL": 13,
    "KEY_BACKSPACE": 14, "KEY_TAB": 15, "KEY_Q": 16, "KEY_W": 17, "KEY_E": 18, "KEY_R": 19,
    "KEY_T": 20, "KEY_Y": 21, "KEY_U": 22, "KEY_I": 23, "KEY_O": 24, "KEY_P": 25,
    "KEY_LEFTBRACE": 26, "KEY_RIGHTBRACE": 27, "KEY_ENTER": 28, "KEY_LEFTCTRL": 29, "KEY_A": 30,
    "KEY_S": 31, "KEY_D": 32, "KEY_F": 33, "KEY_G": 34, "KEY_H": 35, "KEY_J": 36, "KEY_K": 37,
    "KEY_L": 38, "KEY_SEMICOLON": 39, "KEY_APOSTROPHE": 40, "KEY_GRAVE": 41, "KEY_LEFTSHIFT": 42,
    "KEY_BACKSLASH": 43, "KEY_Z": 44, "KEY_X": 45, "KEY_C": 46, "KEY_V": 47, "KEY_B": 48,
    "KEY_N": 49, "KEY_M": 50, "KEY_COMMA": 51, "KEY_DOT": 52, "KEY_SLASH": 53, "KEY_LEFTALT": 56,
    "KEY_SPACE": 57, "KEY_F1": 59, "KEY_F2": 60, "KEY_F3": 61, "KEY_F4": 62, "KEY_F5": 63,
    "KEY_F6": 64, "KEY_F7": 65, "KEY_F8": 66, "KEY_F9": 67, "KEY_F10": 68, "KEY_F11": 87,
    "KEY_F12": 88, "KEY_HOME": 102, "KEY_UP": 103, "KEY_PAGEUP": 104, "KEY_LEFT": 105,
    "KEY_RIGHT": 106, "KEY_END": 107, "KEY_DOWN": 108, "KEY_PAGEDOWN": 109, "KEY_INSERT": 110,
    "KEY_DELETE": 111, "KEY_LEFTMETA": 125,
}

_UNSHIFTED = "abcdefghijklmnopqrstuvwxyz1234567890-=[];'`\\,./ \t\n"
_UNSHIFTED_KEYS = (
    [f"KEY_{c.upper()}" for c in "abcdefghijklmnopqrstuvwxyz1234567890"]
    + ["KEY_MINUS", "KEY_EQUAL", "KEY_LEFTBRACE", "KEY_RIGHTBRACE", "KEY_SEMICOLON",
       "KEY_APOSTROPHE", "KEY_GRAVE", "KEY_BACKSLASH", "KEY_COMMA", "KEY_DOT", "KEY_SLASH",
       "KEY_SPACE", "KEY_TAB", "KEY_ENTER"]
)
_SHIFTED = "ABCDEFGHIJKLMNOPQRSTUVWXYZ!@#$%^&*()_+{}:\"~|<>?"
_SHIFTED_KEYS = (
    [f"KEY_{c}" for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    + ["KEY_1", "KEY_2", "KEY_3", "KEY_4", "KEY_5", "KEY_6", "KEY_7", "KEY_8", "KEY_9", "KEY_0",
       "KEY_MINUS", "KEY_EQUAL", "KEY_LEFTBRACE", "KEY_RIGHTBRACE", "KEY_SEMICOLON",
       "KEY_APOSTROPHE", "KEY_GRAVE", "KEY_BACKSLASH", "KEY_COMMA", "KEY_DOT", "KEY_SLASH"]
)
US_LAYOUT: dict[str, tuple[str, bool]] = {
    **{c: (k, False) for c, k in zip(_UNSHIFTED, _UNSHIFTED_KEYS, strict=True)},
    **{c: (k, True) for c, k in zip(_SHIFTED, _SHIFTED_KEYS, strict=True)},
}

# Key names as docs/architecture.md writes them (X keysyms), with their evdev key and keysym.
NAMED_KEYS: dict[str, tuple[str, int]] = {
    "return": ("KEY_ENTER", 0xFF0D), "enter": ("KEY_ENTER", 0xFF0D),
    "tab": ("KEY_TAB", 0xFF09), "escape": ("KEY_ESC", 0xFF1B), "esc": ("KEY_ESC", 0xFF1B),
    "backspace": ("KEY_BACKSPACE", 0xFF08), "delete": ("KEY_DELETE", 0xFFFF),
    "insert": ("KEY_INSERT", 0xFF63), "home": ("KEY_HOME", 0xFF50), "end": ("KEY_END", 0xFF57),
    "left": ("KEY_LEFT", 0xFF51), "up": ("KEY_UP", 0xFF52), "right": ("KEY_RIGHT", 0xFF53),
    "down": ("KEY_DOWN", 0xFF54), "page_up": ("KEY_PAGEUP", 0xFF55),
    "page_down": ("KEY_PAGEDOWN", 0xFF56), "space": ("KEY_SPACE", 0x20),
    **{f"f{i}": (f"KEY_F{i}", 0xFFBE + i - 1) for i in range(1, 13)},
}
PUNCTUATION_KEYSYMS: dict[str, str] = {
    "plus": "+", "minus": "-", "equal": "=", "asterisk": "*", "slash": "/", "period": ".",
    "comma": ",", "percent": "%", "semicolon": ";", "colon": ":", "apostrophe": "'",
    "question": "?", "exclam": "!", "at": "@", "numbersign": "#", "underscore": "_",
}
"""X keysym names of the characters a spoken key name may mean ("press plus")."""

MODIFIERS: dict[str, tuple[str, int]] = {
    # name -> (evdev key, X modifier mask)
    "ctrl": ("KEY_LEFTCTRL", 1 << 2), "control": ("KEY_LEFTCTRL", 1 << 2),
    "shift": ("KEY_LEFTSHIFT", 1 << 0), "alt": ("KEY_LEFTALT", 1 << 3),
    "super": ("KEY_LEFTMETA", 1 << 6), "meta": ("KEY_LEFTMETA", 1 << 6),
}


@dataclass(frozen=True)
class Stroke:
    """One key press: evdev key, the modifiers held, and the X keysym for the same key."""

    key: str
    modifiers: tuple[str, ...]  # evdev modifier keys, e.g. ("KEY_LEFTCTRL",)
    keysym: int
    mask: int  # X modifier mask of `modifiers`


def char_stroke(char: str) -> Stroke:
    """How to type one character on a US keyboard."""
    found = US_LAYOUT.get(char)
    if found is None:
        raise DesktopError(f"I can't type the character {char!r} with this keyboard.")
    key, shift = found
    keysym = 0xFF0D if char == "\n" else 0xFF09 if char == "\t" else ord(char)
    return Stroke(key, ("KEY_LEFTSHIFT",) if shift else (), keysym, 1 if shift else 0)


def text_strokes(text: str) -> list[Stroke]:
    """Every character checked before any key is pressed, so a bad one types nothing."""
    return [char_stroke(c) for c in text]


def parse_chord(chord: str) -> Stroke:
    """'ctrl+z', 'Return', 'alt+F4', 'ctrl+shift+t' as one stroke."""
    parts = [p.strip() for p in chord.split("+")]
    if not chord.strip() or any(not p for p in parts):
        raise DesktopError(f"I don't know the key {chord}.")
    *mods, last = parts
    modifiers: list[str] = []
    mask = 0
    for mod in mods:
        found = MODIFIERS.get(mod.lower())
        if found is None:
            raise DesktopError(f"I don't know the key {mod}.")
        modifiers.append(found[0])
        mask |= found[1]
    named = NAMED_KEYS.get(last.lower())
    if named is not None:
        return Stroke(named[0], tuple(modifiers), named[1], mask)
    last = PUNCTUATION_KEYSYMS.get(last.lower(), last)
    if len(last) == 1:
        base = char_stroke(last.lower() if last.isalpha() else last)
        extra = [m for m in base.modifiers if m not in modifiers]
        return Stroke(base.key, (*modifiers, *extra), base.keysym, mask | base.mask)
    raise DesktopError(f"I don't know the key {last}.")
