"""A small fingerprint of a patch of screen: an 8x8 grey average hash, 64 bits as 16 hex
digits. Two patches that look alike (the same button, lit up by the pointer or not) differ in
a few bits; another button or an empty spot in many."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image

SIDE = 8
SAME_WITHIN = 10
"""Bits of 64 two looks at one spot may differ by and still be the same thing there: a hover
highlight flips a few, another label or a moved button about half (docs/desktop.md)."""
BLANK = "0" * (SIDE * SIDE // 4)
"""The hash of a blank patch."""
MIN_CONTRAST = 6
"""A patch whose greys all lie within this of their mean is blank: its bits are noise, so a
blank spot never matches a taught one."""


def average_hash(patch: Image) -> str:
    """The patch's 64-bit average hash, as hex; all zeros for a blank patch."""
    grey = patch.convert("L").resize((SIDE, SIDE))
    pixels = list(grey.tobytes())  # one byte a pixel in mode L
    mean = sum(pixels) / len(pixels)
    if max(abs(p - mean) for p in pixels) < MIN_CONTRAST:
        return BLANK
    bits = 0
    for p in pixels:
        bits = (bits << 1) | (p > mean)
    return f"{bits:0{SIDE * SIDE // 4}x}"


def distance(a: str, b: str) -> int:
    """How many of the 64 bits differ; the most when either is blank or unreadable."""
    try:
        if BLANK in (a, b):
            return SIDE * SIDE
        return (int(a, 16) ^ int(b, 16)).bit_count()
    except ValueError:
        return SIDE * SIDE


def same(a: str, b: str) -> bool:
    return distance(a, b) <= SAME_WITHIN
