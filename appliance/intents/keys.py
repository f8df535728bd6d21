"""Spoken key and modifier names -> X keysyms, for the press_key templates."""

from __future__ import annotations

from functools import cache
from string import ascii_lowercase

from appliance.intents.model import Modifier
from appliance.words.numbers import UNITS

MODIFIERS: dict[str, Modifier] = {
    "control": "ctrl", "ctrl": "ctrl", "ctl": "ctrl", "control key": "ctrl",
    "alt": "alt", "alt key": "alt", "alter": "alt", "option": "alt",
    "shift": "shift", "shift key": "shift",
    "super": "super", "windows": "super", "windows key": "super", "meta": "super",
    "command": "super", "super key": "super",
}

NAMED_KEYS: dict[str, str] = {
    "enter": "Return", "return": "Return", "escape": "Escape", "esc": "Escape",
    "tab": "Tab", "space": "space", "space bar": "space", "spacebar": "space",
    "backspace": "BackSpace", "back space": "BackSpace", "delete": "Delete", "del": "Delete",
    "insert": "Insert", "home": "Home", "end": "End",
    "page up": "Page_Up", "page down": "Page_Down",
    "up": "Up", "down": "Down", "left": "Left", "right": "Right",
    "up arrow": "Up", "down arrow": "Down", "left arrow": "Left", "right arrow": "Right",
    "arrow up": "Up", "arrow down": "Down", "arrow left": "Left", "arrow right": "Right",
    "print screen": "Print", "menu": "Menu", "caps lock": "Caps_Lock",
    "plus": "plus", "minus": "minus", "period": "period", "full stop": "period", "comma": "comma",
    "slash": "slash",
}

PHONETIC: dict[str, str] = {
    word: word[0] for word in (
        "alpha", "alfa", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
        "india", "juliet", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa",
        "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey", "x ray", "xray",
        "yankee", "zulu")
}
"""The spelling alphabet's words for letters ("control charlie"): no two sound alike, as "c"
and "z" do. Only after a modifier, since "Mike" or "Oscar" may be a name on the screen."""

LETTERS_ALIKE = ("bcdegptvz3", "ahjk8", "fsx", "lmn", "iy59", "quw2", "o0")
"""Letters and digits whose English names rhyme ("see", "zee", "three"; "a", "eight"): the ones
a recogniser confuses, as Whisper writes "press control a" as "press control 8"
(docs/measurements/voice-corpus.md)."""


def letters_alike(letter: str) -> str:
    """The other letters and digits whose names sound like `letter`'s ("bdegptvz3" for "c"),
    or none."""
    if len(letter) != 1:
        return ""
    return next((group.replace(letter, "") for group in LETTERS_ALIKE if letter in group), "")


@cache
def key_names() -> dict[str, str]:
    """Every spoken key name -> its keysym: named keys, F1..F12, letters and digits."""
    names = dict(NAMED_KEYS)
    digit_words = {v: k for k, v in UNITS.items() if v <= 12 and k != "nought"}
    for n in range(1, 13):
        for spoken in (f"f{n}", f"f {n}", f"f {digit_words[n]}", f"function {n}"):
            names[spoken] = f"F{n}"
    for letter in ascii_lowercase:
        names[letter] = letter
        names[f"letter {letter}"] = letter
    for d in range(10):
        names[str(d)] = str(d)
        names[digit_words[d]] = str(d)
    return names
