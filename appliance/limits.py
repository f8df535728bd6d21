"""How much text the appliance reads, speaks, journals and plans, in one place.

A screen, a scene file or a command line can hold megabytes; a person can only listen to a
sentence or two, and the journal must not grow by the size of a field on every turn. Text over
a limit is cut and says so, and control characters never reach a field, a table or the journal.
"""

from __future__ import annotations

import unicodedata

MAX_NAME_CHARS = 200
"""An element's name as read from a snapshot (sim, AT-SPI: every adapter)."""

MAX_VALUE_CHARS = 2000
"""An element's text value as read from a snapshot, and as journaled in before/after states."""

MAX_SPOKEN_CHARS = 600
"""One spoken reply (read-outs of the screen or of an element included): about 40 seconds."""

MAX_JOURNAL_TEXT_CHARS = 2000
"""A transcript, a reason or any other free text put into the journal."""

MAX_UTTERANCE_CHARS = 1000
"""What a person says or types in one go; longer is refused before any planner runs."""

MAX_SCREEN_NAMES_SPOKEN = 8
"""How many control names "what is on the screen" lists before saying how many more."""

MAX_SETTING_CHARS = 200
"""A text setting (wake phrase, device name, model name) or a caregiver's name."""

MAX_SCENE_BYTES = 16 * 1024 * 1024
"""A sim scene file: one screen is kilobytes, so more is the wrong file (or /dev/zero)."""

CUT = " ... (cut: the rest is too long)"
"""Appended wherever text was cut, so a listener or a reader knows there was more."""


def clip(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its start and the CUT mark (within limit)."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(CUT))].rstrip() + CUT


def was_cut(value: object) -> bool:
    """Did `clip` shorten this value (so it is not the whole of what was there)?"""
    return isinstance(value, str) and value.endswith(CUT)


def _is_control(char: str) -> bool:
    # Cc: C0/C1 controls (escape sequences start here); Cf holds the bidi overrides that make
    # text display in another order than it is stored; Cs, lone surrogates, stand for stored
    # bytes that are not UTF-8 and cannot be printed.
    return unicodedata.category(char) in ("Cc", "Cf", "Cs") and char not in "\u200c\u200d"


def control_characters(text: str) -> list[str]:
    """The control characters in `text`, each once, in order."""
    return list(dict.fromkeys(c for c in text if _is_control(c)))


def escape_controls(text: str) -> str:
    """`text` with every control character shown as an escape (\\x1b, \\u202e) for display."""
    if not any(_is_control(c) for c in text):
        return text
    return "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") if _is_control(c) else c
        for c in text
    )


def without_controls(text: str) -> str:
    """Whitespace controls (tab, newline) become spaces; every other control character goes."""
    spaced = "".join(" " if c in "\t\n\r\v\f" else c for c in text)
    return "".join(c for c in spaced if not _is_control(c))
