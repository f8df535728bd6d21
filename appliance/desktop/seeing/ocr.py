"""Words and lines read from an image by Debian's tesseract (through pytesseract), with where
each is and how sure tesseract was; what is read is data, never instructions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from appliance.desktop.model import DesktopError

if TYPE_CHECKING:
    from PIL.Image import Image

Box = tuple[int, int, int, int]

SCALE = 2
"""Tesseract reads text about 20-30 px high best; a window's 10-13 px labels are doubled
first (xcalc's single digits are missed at 1x; docs/measurements: OCR)."""
MIN_WORD_CONF = 40
"""Below this tesseract is guessing (borders read as "|", icons as letters)."""
GAP_FACTOR = 1.2
"""Words on a line further apart than this many word-heights are separate controls (two
buttons side by side), not one phrase: a space between words is about a third of a height."""
TIMEOUT_S = 10.0
# PSM 11 finds sparse text in any order, as a window's labels are; one thread, since OpenMP's
# start-up costs more than it saves on a window-sized image (measured: about half the time).
CONFIG = "--psm 11 --oem 1"
_SECRET = r"\b(?:pass ?word|passcode|pin(?: code)?|secret|security code|cvv|cvc)\b"
_SECRET_LABEL = re.compile(rf"^.*{_SECRET}\s*:?$", re.IGNORECASE)
_SECRET_AND_VALUE = re.compile(rf"^(.*{_SECRET}\s*:)\s*\S", re.IGNORECASE)
_EDGES = "|[]{}_‘’'\"`~"
_ALNUM = re.compile(r"\w")
_SYMBOLS = frozenset("+-×÷*/=%().")


@dataclass(frozen=True)
class Word:
    """One word: its text, box (in the image read, unscaled), confidence 0..1, and line key."""

    text: str
    box: Box
    confidence: float
    line: tuple[int, int, int]  # tesseract's block, paragraph and line numbers


@dataclass(frozen=True)
class Phrase:
    """Words read together on one line with no wide gap: one label or button's text."""

    text: str
    box: Box
    confidence: float
    words: tuple[Word, ...]


@dataclass(frozen=True)
class Reading:
    """What tesseract read in one image: its words, and the phrases they make, in reading
    order (rows top to bottom, each left to right)."""

    words: tuple[Word, ...]
    phrases: tuple[Phrase, ...]

    def texts(self) -> list[str]:
        return [p.text for p in self.phrases]


def read_image(image: Image, scale: int = SCALE) -> Reading:
    """Words and phrases in `image`, boxes in its own pixels."""
    try:
        import pytesseract
    except ImportError:
        raise DesktopError("Reading the screen needs pytesseract.") from None
    grey = image.convert("L")
    if scale > 1:
        grey = grey.resize((grey.width * scale, grey.height * scale))
    # No OMP_THREAD_LIMIT here: set in this process, every child inherits it, and an
    # `appliance run` started from a process that had read the screen heard nothing.
    try:
        data = pytesseract.image_to_data(grey, config=CONFIG, timeout=TIMEOUT_S,
                                         output_type=pytesseract.Output.DICT)
    except (pytesseract.TesseractNotFoundError, pytesseract.TesseractError, RuntimeError):
        raise DesktopError("I couldn't read the screen: tesseract did not answer.") from None
    shown = without_secrets(phrases(tuple(_words(data, scale))))
    return Reading(tuple(w for p in shown for w in p.words), shown)


def _words(data: dict[str, list[Any]], scale: int) -> list[Word]:
    out = []
    for i, raw in enumerate(data["text"]):
        text = clean(str(raw))
        conf = float(data["conf"][i])
        if not text or conf < MIN_WORD_CONF:
            continue
        box = (int(data["left"][i]) // scale, int(data["top"][i]) // scale,
               max(1, int(data["width"][i]) // scale), max(1, int(data["height"][i]) // scale))
        line = (int(data["block_num"][i]), int(data["par_num"][i]), int(data["line_num"][i]))
        out.append(Word(text, box, conf / 100.0, line))
    return out


def clean(text: str) -> str:
    """A word without the edge marks a button's border leaves ("|DRG|"); empty when nothing
    but marks is left. A calculator's symbols ("+", "+/-") are words."""
    stripped = text.strip().strip(_EDGES)
    if _ALNUM.search(stripped):
        return stripped
    return stripped if stripped and all(c in _SYMBOLS for c in stripped) else ""


def phrases(words: tuple[Word, ...]) -> tuple[Phrase, ...]:
    """Words grouped by tesseract's line and split at wide gaps, in reading order."""
    by_line: dict[tuple[int, int, int], list[Word]] = {}
    for w in words:
        by_line.setdefault(w.line, []).append(w)
    out: list[Phrase] = []
    for line in by_line.values():
        line.sort(key=lambda w: w.box[0])
        group = [line[0]]
        for w in line[1:]:
            prev = group[-1]
            height = max(prev.box[3], w.box[3])
            if w.box[0] - (prev.box[0] + prev.box[2]) > GAP_FACTOR * height:
                out.append(_phrase(group))
                group = []
            group.append(w)
        out.append(_phrase(group))
    return tuple(reading_order(out))


def _phrase(words: list[Word]) -> Phrase:
    left = min(w.box[0] for w in words)
    top = min(w.box[1] for w in words)
    right = max(w.box[0] + w.box[2] for w in words)
    bottom = max(w.box[1] + w.box[3] for w in words)
    return Phrase(" ".join(w.text for w in words), (left, top, right - left, bottom - top),
                  min(w.confidence for w in words), tuple(words))


def reading_order(items: list[Phrase]) -> list[Phrase]:
    """Rows top to bottom (a phrase joins a row when its middle is within the row's first
    phrase's height), each left to right: the order numbers are given in."""
    rows: list[list[Phrase]] = []
    for p in sorted(items, key=lambda p: p.box[1] + p.box[3] / 2):
        first = rows[-1][0].box if rows else None
        middle = p.box[1] + p.box[3] / 2
        if first is not None and first[1] <= middle < first[1] + first[3]:
            rows[-1].append(p)
        else:
            rows.append([p])
    return [p for row in rows for p in sorted(row, key=lambda p: p.box[0])]


def without_secrets(read: tuple[Phrase, ...]) -> tuple[Phrase, ...]:
    """What a password's label shows beside or under it is never read. A window with no tree
    cannot say which field is secret, so the label's nearest neighbour to the right on its row,
    and the nearest below it, are taken for one ("Password: hunter2" keeps "Password:")."""
    hidden: set[int] = set()
    kept = list(read)
    for i, p in enumerate(read):
        cut = _SECRET_AND_VALUE.match(p.text)
        if cut is not None:
            kept[i] = _phrase(list(p.words[: len(cut.group(1).split())]))
            continue
        if not _SECRET_LABEL.match(p.text):
            continue
        x, y, w, h = p.box
        middle = y + h / 2
        beside = [j for j, q in enumerate(read) if q.box[0] >= x + w
                  and q.box[1] <= middle < q.box[1] + q.box[3]]
        under = [j for j, q in enumerate(read) if y + h <= q.box[1] <= y + h + 3 * h
                 and q.box[0] < x + w and x < q.box[0] + q.box[2]]
        for near in (beside, under):
            if near:
                hidden.add(min(near, key=lambda j: abs(read[j].box[0] - x)
                               + abs(read[j].box[1] - y)))
    return tuple(p for i, p in enumerate(kept) if i not in hidden)
