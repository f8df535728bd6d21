"""`python -m appliance.panel`: show each PanelState JSON line read on stdin; quit at end of input.

Each state is a full picture, so when lines arrive faster than GTK draws, only the newest is
shown. After drawing, it writes `shown N` (N = lines read so far) to stdout for whoever waits.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from typing import Any, get_args

from pydantic import ValidationError

from appliance.panel.state import PANEL_APP_NAME, PanelState


class Inbox:
    """The newest state read by the stdin thread, handed to the GTK thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latest: PanelState | None = None
        self.count = 0
        self.scheduled = False

    def put(self, state: PanelState, count: int) -> bool:
        """Store the state; True if the GTK side must be woken to show it."""
        with self.lock:
            self.latest, self.count = state, count
            wake = not self.scheduled
            self.scheduled = True
            return wake

    def take(self) -> tuple[PanelState | None, int]:
        with self.lock:
            state, self.latest, self.scheduled = self.latest, None, False
            return state, self.count


def read_states(stream: Any, inbox: Inbox, wake: Any, done: Any) -> None:
    """The stdin thread: parse lines (a bad one is reported and skipped), hand over the newest."""
    count = 0
    for line in stream:
        count += 1
        if not line.strip():
            continue
        try:
            state = PanelState.model_validate_json(line)
        except ValidationError as exc:
            print(f"appliance-status: ignored a bad state: {exc.errors()[0]['msg']}",
                  file=sys.stderr, flush=True)
            continue
        if inbox.put(state, count):
            wake()
    done()


def main(argv: list[str] | None = None) -> None:
    from appliance.panel.window import Corner

    parser = argparse.ArgumentParser(prog="appliance.panel")
    parser.add_argument("--corner", choices=get_args(Corner), default="bottom-right")
    args = parser.parse_args(argv)

    from gi.repository import GLib  # type: ignore[import-untyped,import-not-found,unused-ignore]

    # The AT-SPI adapter leaves out an application of this name, should the bridge be on.
    GLib.set_prgname(PANEL_APP_NAME)
    GLib.set_application_name(PANEL_APP_NAME)

    from appliance.panel.window import Gdk, Gtk, PanelWindow, when_painted

    if Gdk.Display.get_default() is None:
        sys.exit("appliance-status: no display to show the status panel on")
    panel = PanelWindow(corner=args.corner)
    inbox = Inbox()

    def show() -> bool:
        state, count = inbox.take()
        if state is not None:
            panel.apply(state)
            when_painted(panel.windows(), lambda: acknowledge(count))
        return False

    def acknowledge(count: int) -> None:
        Gdk.Display.get_default().sync()  # the X server has drawn what GTK sent
        with contextlib.suppress(BrokenPipeError, ValueError):  # nobody listens any more
            print(f"shown {count}", flush=True)

    def wake() -> None:
        GLib.idle_add(show)

    def done() -> None:
        GLib.idle_add(lambda: Gtk.main_quit() or False)

    reader = threading.Thread(target=read_states, args=(sys.stdin, inbox, wake, done),
                              daemon=True, name="panel-stdin")
    reader.start()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: Gtk.main_quit() or False)
    Gtk.main()


if __name__ == "__main__":
    main()
