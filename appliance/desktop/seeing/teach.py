""""call 7 Save": the spot a badge or the grid shows, remembered by name for this window."""

from __future__ import annotations

from appliance.desktop.marks import Marks
from appliance.desktop.model import Desktop, DesktopError
from appliance.desktop.seeing.desktop import SeeingDesktop


def teach_spot(desktop: Desktop, marks: Marks, number: int | None, name: str, by: str) -> str:
    """Teach the spot badge (or grid cell) `number` shows, or the grid as it is for None, as
    `name`; returns what to say."""
    if not isinstance(desktop, SeeingDesktop):
        return "I can only learn a place on a screen I can see."
    if marks.kind == "numbers":
        mark = next((m for m in marks.numbers if m.number == number), None)
        if mark is None:
            return f"There is no number {number} on the screen."
        box = mark.bounds
    else:
        area = marks.refined(number).grid() if number else marks.grid()
        box = (area.x, area.y, area.width, area.height)
    try:
        target = desktop.teach(name, box, by)
    except DesktopError as e:
        return str(e)
    read = f" It reads {target.text}." if target.text and target.text != name else ""
    return f"I'll call that {name} in {target.window}.{read}"
