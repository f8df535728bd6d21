"""Issue 46 on real Debian applications under Xvfb + openbox, through `appliance say`:
calculators' symbol keys by their spoken names only (galculator, GTK3), GTK4's doubled names
read once (GNOME Calculator), each judged by the calculator's own display read with libatspi;
searching, writing, replying and adding to a list on web pages in Chromium (judged by what the
page posts to a loopback server) and writing in FeatherPad (Qt 5, judged by the saved file),
all without a language model.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.apps.real_apps import (
    CHROMIUM_FLAGS,
    EDITORS,
    Kiosk,
    PageServer,
    editor_case,
    on_screen,
    start,
    stop,
    wait_for,
)

DISPLAY = """
import sys
import gi
gi.require_version("Atspi", "2.0")
from gi.repository import Atspi
desktop = Atspi.get_desktop(0)
for state in (Atspi.StateType.SHOWING, Atspi.StateType.EDITABLE):
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is None or app.get_name() != sys.argv[1]:
            continue
        stack = [app]
        while stack:
            node = stack.pop()
            if node.get_role() == Atspi.Role.TEXT and node.get_state_set().contains(state):
                print(Atspi.Text.get_text(node, 0, -1), end="")
                sys.exit(0)
            stack.extend(node.get_child_at_index(j) for j in range(node.get_child_count()))
sys.exit(3)
"""


def _display(app_name: str) -> str:
    """A calculator's display as libatspi reads it: its first showing text, or its editable
    one (GTK 4.8 never says `showing`). In a process of its own: libatspi keeps the first
    accessibility bus it met, and the next module's session has another."""
    got = subprocess.run([sys.executable, "-c", DISPLAY, app_name], capture_output=True,
                         text=True, timeout=20, check=False)
    assert got.returncode == 0, f"no display in {app_name}: {got.stderr[-300:]}"
    return got.stdout


def _shows(app_name: str, wanted: str) -> str:
    got = wait_for(lambda: _display(app_name).strip() == wanted and wanted, timeout=5)
    return str(got) if got else _display(app_name)


def test_minus_on_galculator_is_its_minus_never_the_backspace_arrow(
    real_session: Path, kiosk: Kiosk
) -> None:
    """galculator's erase key is named "<-": "minus" pressed it ("Pressed <-.") before."""
    proc = start(["galculator"])
    try:
        assert on_screen("="), "galculator never appeared"
        for said in ("press 9", "press 8", "click backspace"):
            assert kiosk.say(said)["decision"] == "executed", kiosk.replies[-1]
        assert _shows("galculator", "9") == "9"
        minus = kiosk.say("click minus")
        assert minus["decision"] == "executed" and minus["spoken"] == "Pressed -.", minus
        for said in ("press 3", "press equals"):
            assert kiosk.say(said)["decision"] == "executed", kiosk.replies[-1]
        assert _shows("galculator", "6") == "6"
        # Basic mode has no pi key: said to be missing, nothing near it pressed.
        missing = kiosk.say("click pi")
        assert missing["decision"] == "rejected", missing
        assert "can't find pi" in missing["spoken"], missing
        assert _display("galculator").strip() == "6"
    finally:
        stop(proc)


def test_gtk4_calculator_buttons_are_named_once(real_session: Path, kiosk: Kiosk) -> None:
    """GTK 4.8 names GNOME Calculator's keys by their label twice ("= ="): read once, as Orca
    does, "click 7" and "click plus" press them; an icon key is named by its tooltip."""
    proc = start(["gnome-calculator"])
    try:
        assert on_screen("="), "GNOME Calculator never appeared, or its names are doubled"
        for said, key in (("click 7", "7"), ("click plus", "+"), ("click 5", "5"),
                          ("click equals", "=")):
            out = kiosk.say(said)
            assert out["decision"] == "executed", out
            assert out["spoken"] == f"Pressed {key}.", out
        assert _shows("gnome-calculator", "12") == "12"
        out = kiosk.say("click clear display")
        assert out["decision"] == "executed", out
        assert _shows("gnome-calculator", "") == ""
    finally:
        stop(proc)


# -- web pages in Chromium: one search field, one message box, one list entry ------------------

PAGES = Path(__file__).resolve().parents[1] / "apps" / "pages"


@contextmanager
def web_page(home: Path, page: str, heading: str) -> Iterator[PageServer]:
    """Chromium showing one page, until it is read over AT-SPI."""
    server = PageServer(PAGES)
    proc = start(["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={home / ('chromium-' + page)}",
                  server.base + page], stdout=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: server.states, 60), f"{page} never loaded"
        assert on_screen(heading), f"{page} never appeared over AT-SPI"
        yield server
    finally:
        stop(proc)
        server.close()


def _page_says(server: PageServer, key: str, wanted: Any) -> Any:
    got = wait_for(lambda: server.last().get(key) == wanted, timeout=5)
    return wanted if got else server.last().get(key)


def test_search_on_a_web_page_fills_its_one_field_and_searches(
    real_session: Path, kiosk: Kiosk
) -> None:
    """The field is named by its placeholder, which does not say search: it is the page's
    only text field, so the words go there and its Search button is pressed."""
    with web_page(real_session, "library.html", "Town library") as page:
        out = kiosk.say("search for jane austen")
        assert out["decision"] == "executed", out
        assert _page_says(page, "searched", "jane austen") == "jane austen", (out, page.states)


def test_write_then_reply_in_a_web_chat(real_session: Path, kiosk: Kiosk) -> None:
    """"write ..." types into the one message box and sends nothing; "send" and "reply ..."
    ask first, then the page has sent both."""
    with web_page(real_session, "chat.html", "Chat with Grandma") as page:
        out = kiosk.say("write thank you for the flowers")
        assert out["decision"] == "executed", out
        assert _page_says(page, "msg", "thank you for the flowers") == "thank you for the flowers"
        assert page.last()["sent"] == []
        assert kiosk.command("send") == "executed"
        assert _page_says(page, "sent", ["thank you for the flowers"]) == [
            "thank you for the flowers"]
        out = kiosk.say("reply see you soon")
        assert out["decision"] == "needs_confirmation" and "see you soon" in out["spoken"], out
        assert kiosk.say("yes")["decision"] == "executed", kiosk.replies[-1]
        wanted = ["thank you for the flowers", "see you soon"]
        assert _page_says(page, "sent", wanted) == wanted


def test_add_to_a_web_shopping_list(real_session: Path, kiosk: Kiosk) -> None:
    with web_page(real_session, "shopping.html", "Shopping list") as page:
        out = kiosk.say("add milk to the list")
        assert out["decision"] == "executed", out
        wanted = ["Bread", "Eggs", "milk"]
        assert _page_says(page, "items", wanted) == wanted


def test_write_in_a_real_qt_editor(real_session: Path, kiosk: Kiosk) -> None:
    """FeatherPad's one text area, focused: "write ..." types there, "save" saves."""
    path = real_session / "dictated.txt"
    case = editor_case(EDITORS["featherpad"], path, kiosk, "write", (
        "write thank you for the flowers", "save"), {"contains": "thank you for the flowers"})
    assert case.kind == "right", case
