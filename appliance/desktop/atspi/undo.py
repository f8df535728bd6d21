"""Undo: putting elements and applications back the way an action's result recorded them."""

from __future__ import annotations

from appliance.desktop.atspi.applications import close_app, open_app, running
from appliance.desktop.atspi.ax_action import do_preferred_action
from appliance.desktop.atspi.ax_component import grab_focus
from appliance.desktop.atspi.ax_selection import choose, deselect, select
from appliance.desktop.atspi.ax_text import set_text_contents
from appliance.desktop.atspi.ax_value import set_current_value
from appliance.desktop.atspi.launcher import Launcher
from appliance.desktop.atspi.readback import ReadBack, Target, action_result
from appliance.desktop.model import REDACTED, ActionResult, DesktopError, ElementState
from appliance.desktop.roles import SECRET_ROLES

RESTORABLE = frozenset({"checked", "selected"})
"""The states undo puts back and then checks (focus is put back but not checked)."""


def restore(
    rb: ReadBack, launcher: Launcher, wanted: dict[str, ElementState], *, open_timeout: float,
) -> ActionResult:
    """Put each element (or `app:` application) back to its wanted state and read it back."""
    before: dict[str, ElementState] = {}
    after: dict[str, ElementState] = {}
    for key, state in wanted.items():
        if key.startswith("app:"):
            name = key[4:]
            was_running = running(rb.screen, name)
            before[key] = ElementState(running=was_running)
            if state.running is False and was_running:
                close_app(rb.screen, launcher, name, timeout=open_timeout)
            elif state.running and not was_running:
                open_app(rb.screen, launcher, name, timeout=open_timeout)
            after[key] = ElementState(running=running(rb.screen, name))
            continue
        t = rb.target(key, enabled=False)
        with rb.answering(t.app):
            before[key] = rb.states(t.view, [key])[key]
            put_back(rb, t, before[key], state)
            after[key] = rb.states(t.view, [key])[key]
    ok = all(_same(after[k], v, k) for k, v in wanted.items())
    mismatch = [k for k, v in wanted.items() if not _same(after[k], v, k)]
    detail = "restored" if ok else "could not restore " + ", ".join(mismatch)
    return action_result(before, after, ok, detail)


def put_back(rb: ReadBack, t: Target, now: ElementState, want: ElementState) -> None:
    """Undo what differs between the element's state now and the wanted one."""
    raw = t.raw
    if raw.role in SECRET_ROLES:
        if want.value == REDACTED:
            raise DesktopError("I can't put back a secret I never read.")
        if now.value != want.value:
            set_text_contents(rb.bus, t.ref, "")
    elif now.value != want.value:
        if "Value" in raw.interfaces and isinstance(want.value, float):
            set_current_value(rb.bus, t.ref, want.value)
        elif raw.role == "combo box" and want.value is not None:
            choose(rb, t, str(want.value))
        elif "EditableText" in raw.interfaces:
            set_text_contents(rb.bus, t.ref, str(want.value or ""))
    if ("checked" in now.states) != ("checked" in want.states) and raw.actions:
        do_preferred_action(rb.bus, t.ref, raw.actions)
    if "selected" in want.states and "selected" not in now.states:
        select(rb, t)
    elif "selected" in now.states and "selected" not in want.states:
        deselect(rb, t)
    if "focused" in want.states and "focused" not in now.states:
        grab_focus(rb.bus, t.ref)


def _same(got: ElementState, want: ElementState, key: str) -> bool:
    if key.startswith("app:"):
        return got.running == want.running
    return got.value == want.value and (got.states & RESTORABLE) == (want.states & RESTORABLE)
