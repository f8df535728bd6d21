"""The panel's GTK windows: the status box in a screen corner and the scan highlight frame.

Only the panel process imports this (it needs a display). The frame is four bars drawn just
outside the offered element, as override-redirect popups: with no compositor a translucent
overlay would hide the element, and bars leave it visible and clickable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import gi  # type: ignore[import-untyped,import-not-found,unused-ignore]

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import (  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: E402
    Gdk as _Gdk,
)
from gi.repository import (  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: E402
    Gtk as _Gtk,
)

from appliance.panel.grid import Grid  # noqa: E402
from appliance.panel.state import MODE_TEXT, Bounds, PanelState  # noqa: E402

Gdk: Any = _Gdk
Gtk: Any = _Gtk

Corner = Literal["top-left", "top-right", "bottom-left", "bottom-right"]

WIDTH, HEIGHT, MARGIN = 470, 300, 8
FRAME_THICKNESS = 8
FRAME_COLOUR = (255, 176, 0)
"""Amber: reads on light and dark windows alike, and is no theme's selection colour."""
BADGE_COLOUR = (255, 230, 0)
"""Yellow under black digits: the strongest contrast that still reads as a label, not a frame."""
BADGE_HEIGHT = 36
BADGE_DIGIT_WIDTH = 16
GRID_THICKNESS = 3

MODE_COLOUR = {
    "idle": "#ffffff",
    "listening": "#7cfc00",
    "thinking": "#87cefa",
    "speaking": "#ffffff",
    "confirming": "#ffd700",
    "scanning": "#ffb000",
}

CSS = b"""
.appliance-panel { background-color: #101010; border: 3px solid #707070; }
.appliance-panel label { color: #f5f5f5; font-family: "DejaVu Sans", sans-serif; }
.appliance-panel .mode { font-size: 40px; font-weight: bold; }
.appliance-panel .offer { font-size: 36px; font-weight: bold; color: #ffb000; }
.appliance-panel .said { font-size: 28px; }
.appliance-panel .journal { font-size: 16px; color: #c8c8c8; }
.appliance-frame { background-color: #%02x%02x%02x; }
.appliance-badge { background-color: #%02x%02x%02x; border: 2px solid #000000; }
.appliance-badge label { color: #000000; font-family: "DejaVu Sans", sans-serif;
                         font-size: 24px; font-weight: bold; }
""" % (*FRAME_COLOUR, *BADGE_COLOUR)


def _label(css_class: str, lines: int) -> Any:
    label = Gtk.Label(xalign=0.0)
    label.get_style_context().add_class(css_class)
    label.set_line_wrap(True)
    label.set_lines(lines)
    label.set_ellipsize(3)  # PANGO_ELLIPSIZE_END: a long reply ends in "…" instead of widening
    label.set_max_width_chars(1)  # take the window's width, not the text's
    label.set_hexpand(True)
    return label


def frame_rects(
    b: Bounds, thickness: int, screen: tuple[int, int],
) -> list[tuple[int, int, int, int]]:
    """(x, y, width, height) of the top, bottom, left and right bars, kept on the screen.

    Bars go just outside the element; at a screen edge a bar moves inside it instead (covering
    only its outer `thickness` pixels), since a bar off the screen shows nothing.
    """
    t = thickness
    wanted = [
        (b.x - t, b.y - t, b.width + 2 * t, t),
        (b.x - t, b.y + b.height, b.width + 2 * t, t),
        (b.x - t, b.y, t, b.height),
        (b.x + b.width, b.y, t, b.height),
    ]
    width, height = screen
    out = []
    for x, y, w, h in wanted:
        w, h = min(w, width), min(h, height)
        out.append((min(max(x, 0), width - w), min(max(y, 0), height - h), w, h))
    return out


class Frame:
    """Four amber bars around a rectangle, outside it so the element stays visible and clickable."""

    def __init__(self, thickness: int = FRAME_THICKNESS) -> None:
        self.thickness = thickness
        self.bars = []
        for _ in range(4):
            bar = Gtk.Window(type=Gtk.WindowType.POPUP)  # override-redirect: no WM, no focus
            bar.get_style_context().add_class("appliance-frame")
            bar.set_accept_focus(False)
            bar.set_app_paintable(False)
            self.bars.append(bar)
        self.shown: Bounds | None = None

    def show(self, bounds: Bounds | None) -> None:
        self.shown = bounds
        if bounds is None:
            for bar in self.bars:
                bar.hide()
            return
        root = Gdk.get_default_root_window()
        rects = frame_rects(bounds, self.thickness, (root.get_width(), root.get_height()))
        for bar, (x, y, w, h) in zip(self.bars, rects, strict=True):
            bar.set_size_request(max(1, w), max(1, h))
            bar.resize(max(1, w), max(1, h))
            bar.move(x, y)
            bar.show()
            bar.get_window().raise_()


def badge_rect(b: Bounds, digits: int, screen: tuple[int, int]) -> tuple[int, int, int, int]:
    """(x, y, width, height) of a badge: above the control's top-left corner, else left of it,
    else inside that corner; never over the control's middle, where a click lands."""
    w, h = BADGE_DIGIT_WIDTH * digits + 12, BADGE_HEIGHT
    if b.y - h >= 0:
        x, y = b.x, b.y - h
    elif b.x - w >= 0:
        x, y = b.x - w, b.y
    else:
        x, y = b.x, b.y
    width, height = screen
    return min(max(x, 0), width - w), min(max(y, 0), height - h), w, h


def grid_rects(area: Bounds, thickness: int) -> list[tuple[int, int, int, int]]:
    """(x, y, width, height) of the lines that cut `area` into the grid's cells: the outline
    and the inner lines, each centred on a cell edge."""
    grid = Grid(area.x, area.y, area.width, area.height)
    xs = sorted({c.x for c in grid.cells()} | {area.x + area.width})
    ys = sorted({c.y for c in grid.cells()} | {area.y + area.height})
    half = thickness // 2
    vertical = [(x - half, area.y, thickness, area.height) for x in xs]
    horizontal = [(area.x, y - half, area.width, thickness) for y in ys]
    return vertical + horizontal


def grid_labels(area: Bounds) -> list[tuple[int, int, int, int]]:
    """Where each cell's number goes, 1 to 9: inside its top-left corner, clear of the middle
    that a click on the cell lands in."""
    grid = Grid(area.x, area.y, area.width, area.height)
    return [
        (c.x + GRID_THICKNESS, c.y + GRID_THICKNESS, BADGE_DIGIT_WIDTH + 12, BADGE_HEIGHT)
        for c in grid.cells()
    ]


class Popups:
    """Override-redirect popups made on demand and kept for reuse: no WM places or focuses
    them, and the adapter leaves the panel's program out of every snapshot."""

    def __init__(self, css_class: str, labelled: bool) -> None:
        self.css_class, self.labelled = css_class, labelled
        self.windows: list[Any] = []
        self.labels: list[Any] = []

    def show(self, rects: list[tuple[int, int, int, int]], texts: list[str] | None = None) -> None:
        while len(self.windows) < len(rects):
            win = Gtk.Window(type=Gtk.WindowType.POPUP)
            win.get_style_context().add_class(self.css_class)
            win.set_accept_focus(False)
            label = Gtk.Label()
            if self.labelled:
                win.add(label)
            self.windows.append(win)
            self.labels.append(label)
        for i, win in enumerate(self.windows):
            if i >= len(rects):
                win.hide()
                continue
            x, y, w, h = rects[i]
            if texts is not None:
                self.labels[i].set_text(texts[i])
            win.set_size_request(max(1, w), max(1, h))
            win.resize(max(1, w), max(1, h))
            win.move(x, y)
            win.show_all()
            win.get_window().raise_()

    def shown(self) -> list[Any]:
        return [w for w in self.windows if w.get_visible()]


class PanelWindow:
    """The status box: mode, the offered item, what was heard and what was said back."""

    def __init__(self, corner: Corner = "bottom-right") -> None:
        provider = Gtk.CssProvider()
        provider.load_from_data(CSS)
        Gtk.StyleContext.add_provider_for_screen(
            Gdk.Screen.get_default(), provider, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION,
        )
        self.corner = corner
        win = Gtk.Window(title="Appliance status")
        win.get_style_context().add_class("appliance-panel")
        win.set_decorated(False)
        win.set_keep_above(True)
        win.set_skip_taskbar_hint(True)
        win.set_skip_pager_hint(True)
        win.set_accept_focus(False)
        win.set_focus_on_map(False)
        win.stick()
        # UTILITY: a small persistent window; WMs neither focus it nor list it among apps.
        win.set_type_hint(Gdk.WindowTypeHint.UTILITY)
        win.set_resizable(False)
        win.set_size_request(WIDTH, HEIGHT)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
        box.set_border_width(14)
        win.add(box)
        self.mode = _label("mode", 2)  # "Waiting for yes or no" needs two at 40 px
        self.offer = _label("offer", 1)
        self.transcript = _label("said", 2)
        self.reply = _label("said", 2)
        self.journal = _label("journal", 1)
        for label in (self.mode, self.offer, self.transcript, self.reply, self.journal):
            box.pack_start(label, False, False, 0)
        self.window = win
        self.frame = Frame()
        self.badges = Popups("appliance-badge", labelled=True)
        self.grid_lines = Popups("appliance-frame", labelled=False)
        self.state = PanelState()
        win.show_all()
        self._place()
        self.apply(self.state)

    def _place(self) -> None:
        display = Gdk.Display.get_default()
        monitor = display.get_primary_monitor() or display.get_monitor(0)
        area = monitor.get_workarea()
        x = area.x + MARGIN if self.corner.endswith("left") else (
            area.x + area.width - WIDTH - MARGIN)
        y = area.y + MARGIN if self.corner.startswith("top") else (
            area.y + area.height - HEIGHT - MARGIN)
        self.window.move(x, y)

    def apply(self, state: PanelState) -> None:
        """Show one full state: every label is set, so nothing stale survives."""
        self.state = state
        colour = MODE_COLOUR.get(state.mode, "#ffffff")
        self.mode.set_markup(
            f'<span foreground="{colour}">{_escape(MODE_TEXT[state.mode])}</span>')
        scanning = state.mode == "scanning" and bool(state.offer)
        self.offer.set_text(f"▶ {state.offer}" if scanning else "")
        self.offer.set_visible(scanning)
        self.transcript.set_text(f"Heard: {state.transcript}" if state.transcript else "")
        self.transcript.set_visible(bool(state.transcript))
        self.reply.set_text(f"Reply: {state.reply}" if state.reply else "")
        self.reply.set_visible(bool(state.reply))
        self.journal.set_text(state.journal)
        self.journal.set_visible(bool(state.journal))
        self.frame.show(state.highlight)
        self._show_numbers(state)
        gdk_window = self.window.get_window()
        if gdk_window is not None:
            gdk_window.raise_()  # keep_above needs a WM; without one, raising is what works

    def _show_numbers(self, state: PanelState) -> None:
        root = Gdk.get_default_root_window()
        screen = (root.get_width(), root.get_height())
        rects = [badge_rect(b.bounds, len(str(b.number)), screen) for b in state.badges]
        texts = [str(b.number) for b in state.badges]
        if state.grid is not None:
            cells = grid_labels(state.grid)
            rects += cells
            texts += [str(n) for n in range(1, len(cells) + 1)]
        self.badges.show(rects, texts)
        self.grid_lines.show(grid_rects(state.grid, GRID_THICKNESS) if state.grid else [])

    def windows(self) -> list[Any]:
        """The panel and the frame's bars, badges and grid lines that are on screen now."""
        bars = [bar for bar in self.frame.bars if bar.get_visible()]
        return [self.window, *bars, *self.badges.shown(), *self.grid_lines.shown()]


def when_painted(windows: list[Any], then: Callable[[], None]) -> None:
    """Call `then` once every window has painted a frame (each toplevel has its own clock)."""
    waiting = set(range(len(windows)))

    def painted(clock: Any, index: int, handler: list[int]) -> None:
        clock.disconnect(handler[0])
        waiting.discard(index)
        if not waiting:
            then()

    for i, window in enumerate(windows):
        clock = window.get_frame_clock()
        if clock is None:  # not realized: nothing to wait for
            waiting.discard(i)
            continue
        handler: list[int] = []
        handler.append(clock.connect("after-paint", painted, i, handler))
        window.queue_draw()
    if not waiting:
        then()


def _escape(text: str) -> str:
    from gi.repository import GLib  # type: ignore[import-untyped,import-not-found,unused-ignore]

    escaped: str = GLib.markup_escape_text(text, -1)
    return escaped
