"""The status panel process, drawn by real GTK 3 on Xvfb, read back by tesseract OCR and pixels.

`PanelLink` runs the real `python -m appliance.panel`; screenshots come from the X server's root
window (GdkPixbuf in a separate process), so what is checked is what a person would see.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image, ImageOps
from rapidfuzz.distance import Levenshtein

from appliance.panel.__main__ import Inbox
from appliance.panel.link import NullPanel, PanelLink
from appliance.panel.state import MODE_TEXT, Badge, Bounds, PanelState
from appliance.panel.window import (
    BADGE_COLOUR,
    FRAME_COLOUR,
    FRAME_THICKNESS,
    GRID_THICKNESS,
    badge_rect,
    frame_rects,
    grid_labels,
)
from tests.apps.atspi_harness import headless_session

assert shutil.which("tesseract"), "tesseract missing: run scripts/setup.sh"

CAPTURE = """
import sys, gi
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk
root = Gdk.get_default_root_window()
Gdk.pixbuf_get_from_window(root, 0, 0, root.get_width(), root.get_height()).savev(
    sys.argv[1], "png", [], [])
"""


def screenshot(path: Path) -> Image.Image:
    """The whole X screen as the server holds it, taken by another X client."""
    subprocess.run([sys.executable, "-c", CAPTURE, str(path)], check=True, timeout=30)
    return Image.open(path).convert("RGB")


def ocr(image: Image.Image, path: Path) -> str:
    """Tesseract's reading of the screen, light text made dark on light as it reads best."""
    ImageOps.invert(image.convert("L")).save(path)
    done = subprocess.run(["tesseract", str(path), "-", "--psm", "3"], capture_output=True,
                          text=True, check=True, timeout=60)
    return done.stdout


def words(text: str) -> list[str]:
    return ["".join(c for c in w if c.isalnum()).lower() for w in text.split()]


def read_word(word: str, text: str) -> bool:
    """`word` is among the OCR words, allowing one slip in a word of five letters or more."""
    slips = 1 if len(word) >= 5 else 0
    return any(Levenshtein.distance(word.lower(), w) <= slips for w in words(text))


def near(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 24) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=False))


@pytest.fixture(scope="module")
def panel() -> Iterator[PanelLink]:
    with headless_session():
        link = PanelLink(acknowledge=True)
        try:
            yield link
        finally:
            link.close()


CASES = [
    # An offer left over from scanning must not show in another mode.
    PanelState(mode="idle", offer="Grandma", transcript="open the garden pictures",
               reply="Pictures is open."),
    PanelState(mode="listening", transcript="call my daughter", reply="Calling Daughter."),
    PanelState(mode="thinking", transcript="turn the volume louder", reply=""),
    PanelState(mode="speaking", transcript="what time is it",
               reply="It is seven thirty in the evening."),
    PanelState(mode="confirming", transcript="delete the message",
               reply="Delete the message from Doctor?"),
    PanelState(mode="scanning", transcript="", reply="Choose with the switch.",
               offer="Grandma", highlight=Bounds(x=60, y=80, width=180, height=44)),
]


@pytest.mark.parametrize("state", CASES, ids=[s.mode for s in CASES])
def test_each_mode_is_readable_on_screen(
    panel: PanelLink, state: PanelState, tmp_path: Path,
) -> None:
    panel.show(state)
    assert panel.wait_shown(), "the panel did not acknowledge the state"
    text = ocr(screenshot(tmp_path / "screen.png"), tmp_path / "ocr.png")
    expected = [*state.transcript.split(), *state.reply.split(),
                *(state.offer.split() if state.mode == "scanning" else [])]
    # Every word of the mode, however short; of the rest, the words that carry meaning.
    keys = [*words(MODE_TEXT[state.mode]), *(w for w in words(" ".join(expected)) if len(w) >= 3)]
    missed = [w for w in keys if not read_word(w, text)]
    assert not missed, f"OCR did not read {missed} in {text!r}"
    if state.mode != "scanning":
        assert not read_word("grandma", text), "a scan offer showed outside scanning"
    # Nothing from another mode's state survives (every state is a whole picture).
    others = {w for s in CASES if s is not state for w in words(s.transcript) if len(w) >= 6}
    stale = [w for w in others - set(keys) if read_word(w, text)]
    assert not stale, f"stale words {stale} still on screen"


def test_the_journal_head_is_readable_on_screen(panel: PanelLink, tmp_path: Path) -> None:
    panel.show(PanelState(mode="idle", journal="Journal 4817:d1ca2a562d5fb191"))
    assert panel.wait_shown(), "the panel did not acknowledge the state"
    text = ocr(screenshot(tmp_path / "screen.png"), tmp_path / "ocr.png")
    assert read_word("journal", text) and "4817" in text, text
    panel.show(PanelState(mode="idle"))
    assert panel.wait_shown()
    assert not read_word("journal", ocr(screenshot(tmp_path / "s2.png"), tmp_path / "o2.png"))


def test_highlight_frame_is_where_the_bounds_say(panel: PanelLink, tmp_path: Path) -> None:
    box = Bounds(x=300, y=200, width=120, height=40)
    # A bigger element offered first, at the same place: its frame must shrink, not linger.
    panel.show(PanelState(mode="scanning", offer="Contacts",
                          highlight=Bounds(x=300, y=200, width=300, height=160)))
    assert panel.wait_shown()
    panel.show(PanelState(mode="scanning", offer="Send", highlight=box))
    assert panel.wait_shown()
    shot = screenshot(tmp_path / "frame.png")
    t, half = FRAME_THICKNESS, FRAME_THICKNESS // 2
    x0, y0, x1, y1 = box.x, box.y, box.x + box.width, box.y + box.height
    on_frame = [
        (x0 + box.width // 2, y0 - half), (x0 + box.width // 2, y1 + half),  # top, bottom
        (x0 - half, y0 + box.height // 2), (x1 + half, y0 + box.height // 2),  # left, right
        (x0 - t, y0 - t), (x1 + t - 1, y1 + t - 1),  # the outer corners
    ]
    for point in on_frame:
        assert near(shot.getpixel(point), FRAME_COLOUR), f"no frame at {point}"
    # The element itself is left uncovered, and the frame is no wider than it should be.
    off_frame = [(x0, y0), (x1 - 1, y1 - 1), (x0 + box.width // 2, y0 + box.height // 2),
                 (x0 - t - 1, y0 + box.height // 2), (x1 + t, y0 + box.height // 2),
                 (x0 + box.width // 2, y0 - t - 1), (x0 + box.width // 2, y1 + t),
                 (x1 + t + 4, y0 - half), (x0 + 300, y0 + 80), (x0 + 150, y0 + 160 + half)]
    for point in off_frame:
        assert not near(shot.getpixel(point), FRAME_COLOUR), f"frame paint at {point}"
    panel.show(PanelState(mode="idle"))
    assert panel.wait_shown()
    cleared = screenshot(tmp_path / "cleared.png")
    assert not any(near(cleared.getpixel(p), FRAME_COLOUR) for p in on_frame)


def test_numbers_are_drawn_beside_their_controls_and_read_back(
    panel: PanelLink, tmp_path: Path,
) -> None:
    boxes = [Bounds(x=100, y=120, width=120, height=40), Bounds(x=400, y=120, width=60, height=40),
             Bounds(x=0, y=0, width=80, height=30)]  # at the screen's corner: inside it
    badges = tuple(Badge(number=n, bounds=b) for n, b in zip((7, 12, 3), boxes, strict=True))
    panel.show(PanelState(mode="idle", badges=badges))
    assert panel.wait_shown()
    shot = screenshot(tmp_path / "numbers.png")
    for badge in badges:
        x, y, w, h = badge_rect(badge.bounds, len(str(badge.number)), shot.size)
        assert near(shot.getpixel((x + 3, y + h // 2)), BADGE_COLOUR), f"no badge {badge.number}"
        b = badge.bounds  # the middle of the control, where a click lands, stays uncovered
        assert not near(shot.getpixel((b.x + b.width // 2, b.y + b.height // 2)), BADGE_COLOUR)
        digits = shot.crop((x, y, x + w, y + h)).resize((w * 4, h * 4))
        assert str(badge.number) in ocr_digits(digits, tmp_path / f"b{badge.number}.png")
    panel.show(PanelState(mode="idle"))
    assert panel.wait_shown()
    cleared = screenshot(tmp_path / "no-numbers.png")
    x, y, _w, h = badge_rect(boxes[0], 1, cleared.size)
    assert not near(cleared.getpixel((x + 3, y + h // 2)), BADGE_COLOUR)


def test_the_grid_divides_the_area_and_numbers_its_cells(
    panel: PanelLink, tmp_path: Path,
) -> None:
    area = Bounds(x=90, y=60, width=600, height=450)
    panel.show(PanelState(mode="idle", grid=area))
    assert panel.wait_shown()
    shot = screenshot(tmp_path / "grid.png")
    for x in (90, 290, 490):  # the left edge and the two inner vertical lines
        assert near(shot.getpixel((x, 60 + 75)), FRAME_COLOUR), f"no line at x={x}"
    for y in (210, 360):
        assert near(shot.getpixel((90 + 100, y)), FRAME_COLOUR), f"no line at y={y}"
    assert not near(shot.getpixel((90 + 100 + GRID_THICKNESS * 3, 60 + 75)), FRAME_COLOUR)
    for number, (x, y, w, h) in enumerate(grid_labels(area), start=1):
        digits = shot.crop((x, y, x + w, y + h)).resize((w * 4, h * 4))
        assert str(number) in ocr_digits(digits, tmp_path / f"g{number}.png")
    panel.show(PanelState(mode="idle"))
    assert panel.wait_shown()
    assert not near(screenshot(tmp_path / "no-grid.png").getpixel((290, 135)), FRAME_COLOUR)


def ocr_digits(image: Image.Image, path: Path) -> str:
    """Tesseract's reading of one badge, as a single line of digits: dark digits on yellow made
    black on white, with a white margin, as it reads best."""
    pixels, (w, h) = image.load(), image.size
    badge = Image.new("L", image.size)
    badge.putdata([255 if near(pixels[x, y], BADGE_COLOUR, 60) else 0
                   for y in range(h) for x in range(w)])
    box = badge.getbbox()
    assert box is not None, "no badge in the crop"
    ImageOps.expand(badge.crop(box), border=20, fill=255).save(path)
    done = subprocess.run(
        ["tesseract", str(path), "-", "--psm", "8", "-c", "tessedit_char_whitelist=0123456789"],
        capture_output=True, text=True, check=True, timeout=60,
    )
    return done.stdout.strip()


def test_frame_bars_hug_the_element_and_stay_on_screen() -> None:
    t = 8
    top, bottom, left, right = frame_rects(Bounds(x=100, y=50, width=40, height=20), t,
                                           (1024, 768))
    assert top == (92, 42, 56, 8) and bottom == (92, 70, 56, 8)
    assert left == (92, 50, 8, 20) and right == (140, 50, 8, 20)
    # An element in the top-left corner: the bars that would leave the screen move inside it.
    top, _bottom, left, _right = frame_rects(Bounds(x=0, y=0, width=40, height=20), t,
                                             (1024, 768))
    assert top == (0, 0, 56, 8) and left == (0, 0, 8, 20)
    # A window bigger than the screen: the bars are cut to the screen.
    top, bottom, left, right = frame_rects(Bounds(x=-5, y=-5, width=2000, height=900), t,
                                           (1024, 768))
    assert top == (0, 0, 1024, 8) and bottom == (0, 760, 1024, 8)
    assert left == (0, 0, 8, 768) and right == (1016, 0, 8, 768)


def test_panel_sits_in_a_corner_in_large_light_on_dark_text(
    panel: PanelLink, tmp_path: Path,
) -> None:
    panel.show(PanelState(mode="listening", transcript="hello"))
    assert panel.wait_shown()
    shot = screenshot(tmp_path / "corner.png")
    width, height = shot.size
    # The dark panel box reaches the bottom-right corner (within its margin); the rest is bare.
    assert near(shot.getpixel((width - 40, height - 40)), (16, 16, 16), tolerance=6)
    assert shot.getpixel((40, 40)) == (0, 0, 0)
    # Large text: the tallest run of text pixels in the mode line is at least 28 px.
    region = shot.crop((width // 2, height // 2, width, height)).convert("L")
    rows = [y for y in range(region.height)
            if any(region.getpixel((x, y)) > 128 for x in range(0, region.width, 2))]
    runs, start = [], rows[0]
    for a, b in itertools.pairwise(rows):
        if b != a + 1:
            runs.append(a - start + 1)
            start = b
    runs.append(rows[-1] - start + 1)
    assert max(runs) >= 28, f"text lines are only {runs} px tall"


# -- the link ----------------------------------------------------------------------------------


def test_bad_lines_are_skipped_and_the_next_state_is_shown(tmp_path: Path) -> None:
    with headless_session():
        proc = subprocess.Popen([sys.executable, "-m", "appliance.panel"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "NO_AT_BRIDGE": "1"})
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(b'{"mode": "dancing"}\nnot json\n')
        proc.stdin.write(PanelState(mode="speaking", reply="fine").model_dump_json().encode())
        proc.stdin.write(b"\n")
        proc.stdin.flush()
        assert proc.stdout.readline().split() == [b"shown", b"3"]
        proc.stdin.close()  # end of input: the panel quits by itself
        assert proc.wait(timeout=10) == 0
        assert proc.stderr.read().count(b"ignored a bad state") == 2
        proc.stdout.close()
        proc.stderr.close()


def test_a_dead_panel_is_restarted_once_then_states_are_dropped() -> None:
    now = [100.0]
    with headless_session():
        link = PanelLink(acknowledge=True, restart_every=5.0, clock=lambda: now[0])
        try:
            link.show(PanelState(mode="idle"))
            assert link.wait_shown() and link.starts == 1
            first = link.proc
            assert first is not None
            first.send_signal(signal.SIGKILL)
            first.wait()
            now[0] += 1  # too soon after the start: dropped, no restart
            link.show(PanelState(mode="listening"))
            assert link.starts == 1 and not link.alive()
            now[0] += 5
            link.show(PanelState(mode="thinking", transcript="still here"))
            assert link.starts == 2 and link.alive()
            assert link.wait_shown() and link.shown == 1  # the new panel got the newest state
            # It died young, so the next restart waits twice as long.
            assert link.proc is not None
            link.proc.send_signal(signal.SIGKILL)
            link.proc.wait()
            now[0] += 6
            link.show(PanelState(mode="idle"))
            assert link.starts == 2 and not link.alive()
            now[0] += 4
            link.show(PanelState(mode="idle"))
            assert link.starts == 3 and link.alive() and link.wait_shown()
        finally:
            link.close()
        assert link.proc is None


def test_show_never_blocks_on_a_panel_that_does_not_read() -> None:
    """A hung panel (here: a process that never reads stdin) must not stall the kiosk."""
    link = PanelLink(command=[sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        big = "word " * 2000  # 10 kB a state: the 64 kB pipe fills within a few
        for i in range(500):
            link.show(PanelState(mode="speaking", reply=f"{i} {big}"))
        assert link.alive()
        # Only the newest state waits; older ones were replaced, not queued without bound.
        assert link._pending.startswith(b'{"mode":"speaking"') and b'"499 ' in link._pending
    finally:
        link.close()  # it never reads to the end of input: terminated
    assert link.proc is None


def test_show_never_raises_when_the_panel_cannot_start() -> None:
    link = PanelLink(command=["/nonexistent/appliance-panel"], restart_every=0.0)
    link.show(PanelState(mode="idle"))
    link.show(PanelState(mode="listening"))
    assert not link.alive()
    link.close()
    null = NullPanel()
    null.show(PanelState(mode="scanning", offer="Undo"))
    assert null.last is not None and null.last.offer == "Undo"
    null.close()


def test_inbox_keeps_only_the_newest_state() -> None:
    inbox = Inbox()
    assert inbox.put(PanelState(mode="idle"), 1) is True  # wake the GTK side once...
    assert inbox.put(PanelState(mode="thinking"), 2) is False  # ...not again while it is due
    state, count = inbox.take()
    assert state is not None and state.mode == "thinking" and count == 2
    assert inbox.take() == (None, 2)
    assert inbox.put(PanelState(mode="speaking"), 3) is True
