"""Applications with no accessibility tree, read from the screen (appliance/desktop/seeing/).

A Tk form (Tk has no AT-SPI bridge; tests/apps/tk_form.py writes what it was sent to a file on
Submit) and xcalc (Xaw), under Xvfb + openbox, driven by `appliance say --desktop atspi`. A
press is judged by the application's own word (the form's file) or by its own display's pixels,
never by the OCR that found the button. The "heldout" layout was not used while tuning.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.apps.real_apps import Kiosk, start, stop, wait_for

TK_FORM = Path(__file__).parent.parent / "apps" / "tk_form.py"


def _window_up(title: str) -> bool:
    from appliance.desktop.seeing.capture import X11Capture

    eyes = X11Capture()
    try:
        window = eyes.active_window()
        return window is not None and window.title == title
    finally:
        eyes.close()


@pytest.fixture()
def form(real_session: Path) -> Iterator[Any]:
    """Start the Tk form with a layout; yields a function that starts it and gives its file."""
    procs: list[subprocess.Popen[str]] = []

    def launch(layout: str) -> Path:
        for p in procs:
            stop(p)
        out = real_session / f"form-{layout}-{len(procs)}.json"
        procs.append(start([sys.executable, str(TK_FORM), str(out), layout]))
        title = "Library card" if layout == "heldout" else "Clinic form"
        assert wait_for(lambda: _window_up(title), 20), f"the {layout} form never showed"
        return out

    yield launch
    for p in procs:
        stop(p)


def _sent(out: Path) -> dict[str, Any] | None:
    return json.loads(out.read_text()) if out.exists() else None


def test_a_seen_button_is_pressed_after_a_yes(form: Any, kiosk: Kiosk) -> None:
    out = form("tuned")
    asked = kiosk.say("click submit")
    assert asked["decision"] == "needs_confirmation", asked
    assert asked["spoken"].startswith("I can see 'Submit' but the application doesn't say")
    assert _sent(out) is None  # nothing is clicked before the yes
    done = kiosk.say("yes")
    assert done["decision"] == "executed", done
    assert _sent(out) == {"name": "Ann", "town": "Leeds", "submitted": 1}


def test_no_means_no_click(form: Any, kiosk: Kiosk) -> None:
    out = form("tuned")
    assert kiosk.say("click clear")["decision"] == "needs_confirmation"
    assert kiosk.say("no")["decision"] == "cancelled"
    assert kiosk.say("click submit")["decision"] == "needs_confirmation"
    kiosk.say("yes")
    assert _sent(out) == {"name": "Ann", "town": "Leeds", "submitted": 1}  # not cleared


def test_the_screen_is_read_when_the_tree_has_nothing(form: Any, kiosk: Kiosk) -> None:
    form("tuned")
    spoken = kiosk.say("what's on the screen")["spoken"]
    assert "On the screen I can read:" in spoken and "Submit" in spoken, spoken


def _badge(reply: dict[str, Any], name: str) -> int:
    marks = reply["marks"]["numbers"]
    return next(int(m["number"]) for m in marks if m["name"] == name)


def test_a_taught_target_is_used_again_and_a_moved_one_is_not_clicked_blind(
    form: Any, kiosk: Kiosk
) -> None:
    out = form("tuned")
    shown = kiosk.say("show numbers")
    number = _badge(shown, "Submit")
    taught = kiosk.say(f"call {number} Save")
    assert taught["spoken"].startswith("I'll call that Save"), taught
    kiosk.say("hide numbers")
    used = kiosk.say("click save")  # nothing called Save in any tree: the taught spot
    assert used["decision"] == "executed", used
    assert _sent(out) == {"name": "Ann", "town": "Leeds", "submitted": 1}
    again = kiosk.say("click save")
    assert again["decision"] == "executed", again
    assert (_sent(out) or {}).get("submitted") == 2

    moved = form("moved")  # the same window, with Submit elsewhere: Save's spot looks different
    refused = kiosk.say("click save")
    assert refused["decision"] == "rejected", refused
    assert "doesn't look as it did" in refused["spoken"]
    assert _sent(moved) is None


def test_heldout_layout_seen_button(form: Any, kiosk: Kiosk) -> None:
    """Held out: a layout and button names never used while tuning the thresholds."""
    out = form("heldout")
    asked = kiosk.say("click apply")
    assert asked["decision"] == "needs_confirmation", asked
    assert "'Apply'" in asked["spoken"]
    assert kiosk.say("yes")["decision"] == "executed"
    assert _sent(out) == {"name": "Ann", "town": "Leeds", "submitted": 1}


def test_xcalc_seen_button(real_session: Path, kiosk: Kiosk) -> None:
    """xcalc's display is judged by its own pixels: it changes only if the press landed."""
    from appliance.desktop.seeing.capture import X11Capture

    proc = start(["xcalc"])
    try:
        assert wait_for(lambda: _window_up("Calculator"), 20)
        eyes = X11Capture()
        window = eyes.active_window()
        assert window is not None
        x, y, w, _h = window.bounds
        display = (x, y, w, 70)  # the number display across xcalc's top
        before = eyes.grab(display).tobytes()
        asked = kiosk.say("click log")
        assert asked["decision"] == "needs_confirmation", asked
        assert eyes.grab(display).tobytes() == before
        assert kiosk.say("yes")["decision"] == "executed"
        assert eyes.grab(display).tobytes() != before
        eyes.close()
    finally:
        stop(proc)
