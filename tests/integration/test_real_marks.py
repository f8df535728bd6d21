"""'Show numbers' and 'show grid' on a real application: yad's form dialog (GTK3) under Xvfb,
driven by `appliance say --desktop atspi`, judged by what yad itself prints when OK is pressed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from appliance.desktop.marks import Marks
from tests.apps.real_apps import Kiosk, run_yad_with


def _numbers(reply: dict[str, Any]) -> dict[str, int]:
    marks = Marks.model_validate(reply["marks"])
    assert marks.kind == "numbers"
    return {m.name: m.number for m in marks.numbers}


def test_a_number_ticks_a_box_on_a_real_form(real_session: Path, kiosk: Kiosk) -> None:
    def speak(k: Kiosk) -> list[str]:
        numbers = _numbers(k.say("show numbers"))
        assert {"Reminder", "OK", "Cancel"} <= set(numbers), numbers
        return [k.command(f"click {numbers['Reminder']}"), k.command("press ok")]

    decisions, printed = run_yad_with(speak, kiosk)
    assert decisions[0] == "executed", kiosk.replies
    assert printed is not None and printed["Reminder"] == "TRUE", (printed, kiosk.replies)
    assert printed["Name"] == "" and printed["Visit"] == "Checkup"  # nothing else changed


def _ok_box(kiosk: Kiosk) -> tuple[int, int, int, int]:
    """Where OK is, read from the numbers the appliance would draw."""
    marks = Marks.model_validate(kiosk.say("show numbers")["marks"])
    kiosk.say("hide numbers")
    return next(m.bounds for m in marks.numbers if m.name == "OK")


def test_the_grid_clicks_ok_with_the_pointer(real_session: Path, kiosk: Kiosk) -> None:
    """A real click at a point (the registry's synthetic mouse event; no uinput here)."""

    def speak(k: Kiosk) -> list[str]:
        k.command("type Grid into name")
        x, y, w, h = _ok_box(k)
        grid = Marks.model_validate(k.say("show grid")["marks"])
        for _ in range(6):
            cell = next(n for n, c in enumerate(grid.grid().cells(), start=1)
                        if c.x <= x + w // 2 < c.x + c.width and c.y <= y + h // 2 < c.y + c.height)
            cx, cy = grid.refined(cell).grid().centre()
            if x <= cx < x + w and y <= cy < y + h:
                return [k.command(f"click {cell}")]
            grid = Marks.model_validate(k.say(str(cell))["marks"])
        raise AssertionError(f"the grid never narrowed onto OK {(x, y, w, h)} {k.replies[-3:]}")

    decisions, printed = run_yad_with(speak, kiosk)
    assert decisions == ["executed"], kiosk.replies
    assert kiosk.replies[-1]["spoken"] == "Clicked OK.", kiosk.replies[-1]
    assert printed is not None and printed["Name"] == "Grid", (printed, kiosk.replies)
