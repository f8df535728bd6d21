"""What every verified action shares: the element it addresses (`Target`), and reading that
element back from its application afterwards (`ReadBack`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from appliance.desktop.atspi.bus import A11yBus, BusError, Ref
from appliance.desktop.atspi.launcher import deadline_after
from appliance.desktop.atspi.screen import AppView, Screen
from appliance.desktop.atspi.tree import RawNode
from appliance.desktop.atspi.vocabulary import state_names
from appliance.desktop.model import ActionResult, DesktopError, ElementState

StateCheck = Callable[[dict[str, ElementState]], bool]
"""Whether read-back states (node id -> state) show an action as applied."""


@dataclass
class Target:
    """One element an action addresses: its node id, its application's view, its object."""

    node_id: str
    view: AppView
    ref: Ref
    raw: RawNode

    @property
    def app(self) -> str:
        return self.view.tree.name


class ReadBack:
    """Resolves the elements actions address and reads their states back to verify them."""

    def __init__(self, screen: Screen, *, settle_timeout: float = 0.5) -> None:
        self.screen = screen
        self.settle_timeout = settle_timeout

    @property
    def bus(self) -> A11yBus:
        return self.screen.bus

    def target(self, node_id: str, *, enabled: bool = True) -> Target:
        """The element of a snapshot's node id; a spoken error if it is gone or disabled."""
        try:
            view, ref, raw = self.screen.resolve(node_id)
        except KeyError:
            hung = ", ".join(self.screen.not_answering.values())
            if hung:
                raise DesktopError(f"{hung} is not responding.") from None
            gone = ", ".join(self.screen.gone.values())
            if gone:
                raise DesktopError(f"{gone} has closed.") from None
            raise DesktopError("That element is no longer on the screen.") from None
        if enabled and "insensitive" in state_names(raw.states):
            raise DesktopError(f"{raw.name or 'That element'} is disabled.")
        return Target(node_id, view, ref, raw)

    @contextmanager
    def answering(self, app: str) -> Iterator[None]:
        """Turn bus failures into short spoken errors."""
        try:
            yield
        except BusError as exc:
            if exc.timed_out:
                self.screen.invalidate()
                raise DesktopError(f"{app} is not responding.") from None
            if exc.gone:
                self.screen.invalidate()
                raise DesktopError(f"{app} has closed.") from None
            raise DesktopError(f"{app} did not accept that.") from None

    def states(self, view: AppView, ids: list[str]) -> dict[str, ElementState]:
        """The elements' states read now from their application, by node id."""
        raws = [view.tree.nodes[view.ref_of[i]] for i in ids]
        by_ref = self.screen.read_state(view, raws)
        return {i: by_ref[view.ref_of[i]] for i in ids}

    def settle(self, view: AppView, ids: list[str], check: StateCheck) -> dict[str, ElementState]:
        """Read back until `check` holds or the settle deadline passes (toolkits apply some
        changes on their next main-loop turn)."""
        deadline = deadline_after(self.settle_timeout)
        states = self.states(view, ids)
        while not check(states) and time.monotonic() < deadline:
            time.sleep(0.02)
            states = self.states(view, ids)
        return states


def action_result(
    before: dict[str, ElementState], after: dict[str, ElementState], ok: bool, detail: str,
    via: str = "atspi",
) -> ActionResult:
    return ActionResult(before=before, after=after, verified=ok, via=via, detail=detail)


def observed(state: ElementState) -> str:
    """What an element showed instead, for a result that did not verify."""
    shown = ", ".join(sorted(state.states)) or "no states"
    return f"observed value {state.value!r}, states {shown}"
