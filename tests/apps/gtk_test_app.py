#!/usr/bin/python3
"""A real GTK3 application for the AT-SPI adapter's tests and benchmark (Debian python3-gi).

It writes its own state (read from the widgets, not from AT-SPI) as JSON to --state after every
change, so tests can check what an action really did to the application.
Modes: the default form; --widgets N adds N push buttons; --nodes N builds a deep tree of about
N accessible nodes (nested boxes of labels).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402


class TestApp:
    """The form: entry, password, check box, buttons, list, combo, slider, tabs, scroller."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.state_path: Path | None = Path(args.state) if args.state else None
        self.slow: float = args.slow
        self.keys: list[str] = []
        self.sent: list[str] = []
        self.pressed: dict[str, int] = {}
        self.window = Gtk.Window(title=args.title)
        self.window.set_default_size(640, 480)
        self.window.connect("destroy", Gtk.main_quit)
        self.window.connect("key-press-event", self.on_key)
        outer = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
        self.window.add(outer)
        self.widgets: dict[str, Any] = {}
        if args.nodes:
            outer.pack_start(self.deep_tree(args.nodes), True, True, 0)
        else:
            self.form(outer)
            if args.widgets:
                outer.pack_start(self.many_buttons(args.widgets), True, True, 0)
        self.window.show_all()
        self.window.present()
        GLib.idle_add(self.write_state)

    # -- building ----------------------------------------------------------------------------

    def form(self, outer: Gtk.Box) -> None:
        grid = Gtk.Grid(column_spacing=6, row_spacing=4)
        outer.pack_start(grid, False, False, 0)
        # Named only through a label's mnemonic (labelled-by), as most real forms are.
        label = Gtk.Label.new_with_mnemonic("_Message")
        message = Gtk.Entry()
        label.set_mnemonic_widget(message)
        grid.attach(label, 0, 0, 1, 1)
        grid.attach(message, 1, 0, 1, 1)
        pin_label = Gtk.Label.new_with_mnemonic("_PIN")
        pin = Gtk.Entry(visibility=False)
        pin_label.set_mnemonic_widget(pin)
        grid.attach(pin_label, 0, 1, 1, 1)
        grid.attach(pin, 1, 1, 1, 1)
        code_label = Gtk.Label.new_with_mnemonic("_Code")
        code = Gtk.Entry(max_length=4)  # refuses long text: a real verification mismatch
        code_label.set_mnemonic_widget(code)
        grid.attach(code_label, 0, 8, 1, 1)
        grid.attach(code, 1, 8, 1, 1)
        urgent = Gtk.CheckButton(label="Urgent")
        grid.attach(urgent, 0, 2, 2, 1)
        send = Gtk.Button(label="Send")
        send.connect("clicked", self.on_send)
        grid.attach(send, 0, 3, 1, 1)
        delete = Gtk.Button(label="Delete")
        delete.set_sensitive(False)
        delete.connect("clicked", lambda _b: self.count("Delete"))
        grid.attach(delete, 1, 3, 1, 1)
        status = Gtk.Label(label="Not sent")
        status.get_accessible().set_name("Status")
        grid.attach(status, 0, 4, 2, 1)
        priority = Gtk.ComboBoxText()
        for choice in ("Low", "Normal", "High"):
            priority.append_text(choice)
        priority.set_active(1)
        priority.get_accessible().set_name("Priority")
        grid.attach(priority, 0, 5, 2, 1)
        volume = Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 100, 1)
        volume.set_value(50)
        volume.get_accessible().set_name("Volume")
        grid.attach(volume, 0, 6, 2, 1)
        contacts = Gtk.ListBox()
        contacts.set_selection_mode(Gtk.SelectionMode.SINGLE)
        contacts.get_accessible().set_name("Contacts")
        for who in ("Grandma", "Doctor", "Neighbour"):
            row = Gtk.ListBoxRow()
            row.add(Gtk.Label(label=who))
            contacts.add(row)
        grid.attach(contacts, 0, 7, 2, 1)
        tabs = Gtk.Notebook()
        for tab in ("Inbox", "Settings"):
            tabs.append_page(Gtk.Label(label=f"{tab} page"), Gtk.Label(label=tab))
        grid.attach(tabs, 2, 0, 1, 8)
        history = Gtk.ScrolledWindow()
        history.set_size_request(200, 80)
        history.set_policy(Gtk.PolicyType.NEVER, Gtk.PolicyType.ALWAYS)
        lines = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
        for i in range(60):
            lines.pack_start(Gtk.Label(label=f"History line {i}"), False, False, 0)
        history.add(lines)
        history.get_accessible().set_name("History")
        outer.pack_start(history, False, False, 0)
        if self.slow:  # a slow application: its Refresh button holds the main loop for a while
            refresh = Gtk.Button(label="Refresh")
            refresh.connect("clicked", self.on_refresh)
            grid.attach(refresh, 1, 2, 1, 1)
        self.widgets = {
            "message": message, "pin": pin, "urgent": urgent, "status": status,
            "priority": priority, "volume": volume, "contacts": contacts, "tabs": tabs,
            "history": history, "delete": delete, "code": code,
        }
        message.connect("changed", self.write_state)
        pin.connect("changed", self.write_state)
        code.connect("changed", self.write_state)
        urgent.connect("toggled", self.write_state)
        priority.connect("changed", self.write_state)
        volume.connect("value-changed", self.write_state)
        contacts.connect("selected-rows-changed", self.write_state)
        tabs.connect("switch-page", lambda *_a: GLib.idle_add(self.write_state))
        history.get_vadjustment().connect("value-changed", self.write_state)
        self.window.connect("set-focus", lambda *_a: GLib.idle_add(self.write_state))

    def many_buttons(self, count: int) -> Gtk.Widget:
        scroller = Gtk.ScrolledWindow()
        grid = Gtk.Grid()
        for i in range(count):
            button = Gtk.Button(label=f"Button {i}")
            button.connect("clicked", lambda _b, n=f"Button {i}": self.count(n))
            grid.attach(button, i % 20, i // 20, 1, 1)
        scroller.add(grid)
        return scroller

    def deep_tree(self, count: int) -> Gtk.Widget:
        """About `count` nodes: 10 sections of 10 groups of labels, inside a scroller."""
        scroller = Gtk.ScrolledWindow()
        root = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
        per_group = max(1, (count - 110) // 100)
        made = 0
        for _section in range(10):
            section = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
            root.pack_start(section, False, False, 0)
            for _group in range(10):
                group = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
                section.pack_start(group, False, False, 0)
                for _ in range(per_group):
                    group.pack_start(Gtk.Label(label=f"Item {made}"), False, False, 0)
                    made += 1
        scroller.add(root)
        return scroller

    # -- behaviour ---------------------------------------------------------------------------

    def count(self, name: str) -> None:
        self.pressed[name] = self.pressed.get(name, 0) + 1
        self.write_state()

    def on_refresh(self, _button: Gtk.Button) -> None:
        time.sleep(self.slow)
        self.count("Refresh")

    def on_send(self, _button: Gtk.Button) -> None:
        text = self.widgets["message"].get_text()
        self.sent.append(text)
        self.widgets["status"].set_text(f"Sent: {text}")
        self.count("Send")

    def on_key(self, _window: Gtk.Window, event: Gdk.EventKey) -> bool:
        mods = []
        if event.state & Gdk.ModifierType.CONTROL_MASK:
            mods.append("ctrl")
        if event.state & Gdk.ModifierType.MOD1_MASK:
            mods.append("alt")
        name = Gdk.keyval_name(event.keyval) or str(event.keyval)
        if name not in {"Control_L", "Control_R", "Alt_L", "Alt_R", "Shift_L", "Shift_R"}:
            self.keys.append("+".join([*mods, name]))
            GLib.idle_add(self.write_state)
        return False

    def write_state(self, *_args: object) -> bool:
        if self.state_path is None:
            return False
        state: dict[str, Any] = {"pid": os.getpid(), "keys": self.keys, "pressed": self.pressed}
        w = self.widgets
        if w:
            row = w["contacts"].get_selected_row()
            focus = self.window.get_focus()
            state.update(
                message=w["message"].get_text(),
                pin=w["pin"].get_text(),
                code=w["code"].get_text(),
                urgent=w["urgent"].get_active(),
                status=w["status"].get_text(),
                priority=w["priority"].get_active_text(),
                volume=w["volume"].get_value(),
                contact=row.get_child().get_text() if row is not None else None,
                tab=w["tabs"].get_current_page(),
                scroll=w["history"].get_vadjustment().get_value(),
                sent=self.sent,
                focus=next((k for k, v in w.items() if v is focus), None),
            )
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(self.state_path)
        return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--title", default="Test Form")
    parser.add_argument("--app-name", default="Juniper Test", help="application name over AT-SPI")
    parser.add_argument("--state", help="write the app's state as JSON here")
    parser.add_argument("--widgets", type=int, default=0)
    parser.add_argument("--nodes", type=int, default=0)
    parser.add_argument("--slow", type=float, default=0.0,
                        help="add a Refresh button whose click takes this many seconds")
    parser.add_argument("--start-delay", type=float, default=0.0,
                        help="a slow-starting application: no window for this many seconds")
    args = parser.parse_args()
    time.sleep(args.start_delay)
    GLib.set_prgname(args.app_name)
    GLib.set_application_name(args.app_name)
    TestApp(args)
    signal.signal(signal.SIGTERM, lambda *_a: Gtk.main_quit())
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: Gtk.main_quit() or False)
    Gtk.main()
    sys.exit(0)


if __name__ == "__main__":
    main()
