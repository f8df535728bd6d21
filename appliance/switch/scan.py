"""The scanning engine: which menu item is offered when. Pure; time only from the `now` given.

Auto-scan offers each item for `interval_s` (the first item of a menu `pause_first_s` longer),
`loops` times round, then stops. Step scanning moves only on `next`. Hold-to-scan moves only
while the switch is held. Offers are scheduled from the previous due time, not from when a
tick happened to run, so a late tick does not push every later offer back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from appliance.settings import Settings
from appliance.switch.menu import Menu, MenuItem


@dataclass(frozen=True)
class ScanTiming:
    interval_s: float = 1.2
    loops: int = 2
    pause_first_s: float = 1.2
    style: Literal["auto", "step"] = "auto"
    hold_to_scan: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> ScanTiming:
        return cls(
            interval_s=settings.scan_interval_s,
            loops=settings.scan_loops,
            pause_first_s=settings.scan_pause_first_s,
            style="step" if settings.scan_mode == "step" else "auto",
            hold_to_scan=settings.scan_hold_to_scan,
        )


@dataclass(frozen=True)
class Offer:
    """`item` is offered from `due` (its scheduled time) on."""

    item: MenuItem
    index: int
    menu: Menu
    due: float


@dataclass(frozen=True)
class Stopped:
    """Auto-scan went round `loops` times with no selection."""

    due: float
    reason: str = "no selection"


class Scanner:
    """One menu at a time; `start` a new one (a group's items) to go down a level."""

    def __init__(self, timing: ScanTiming) -> None:
        self.timing = timing
        self.menu: Menu | None = None
        self.index = 0
        self._offered = 0  # offers made in this menu, for counting loops
        self._due: float | None = None  # when the next offer (or the stop) is scheduled
        self._since = 0.0
        self._held = False

    @property
    def active(self) -> bool:
        return self.menu is not None

    @property
    def current(self) -> Offer | None:
        if self.menu is None:
            return None
        return Offer(self.menu.items[self.index], self.index, self.menu, self._since)

    def due(self) -> float | None:
        """When `tick` next has something to do (None: nothing timed is pending)."""
        return self._due if self.menu is not None else None

    def start(self, menu: Menu, now: float) -> Offer:
        if not menu.items:
            raise ValueError("a scan menu needs at least one item")
        self.menu, self.index, self._offered = menu, 0, 0
        return self._offer(0, now)

    def stop(self) -> None:
        self.menu, self._due, self._held = None, None, False

    def next(self, now: float) -> Offer:
        """Step on at once (switch 2, or step scanning); an auto timer restarts from here."""
        assert self.menu is not None, "not scanning"
        return self._offer((self.index + 1) % len(self.menu.items), now)

    def hold(self, now: float) -> None:
        """Hold-to-scan: the switch went down; move on every interval until it is released."""
        if self.menu is not None:
            self._held = True
            self._due = now + self._dwell(self.index)

    def release(self) -> Offer | None:
        """Hold-to-scan: the switch came up; what is offered now is the selection."""
        self._held = False
        self._due = None
        return self.current

    def tick(self, now: float) -> list[Offer | Stopped]:
        """Every offer (and the stop) that fell due by `now`, oldest first."""
        out: list[Offer | Stopped] = []
        while self.menu is not None and self._due is not None and self._due <= now:
            due = self._due
            if self._loops_done():
                self.stop()
                out.append(Stopped(due))
                break
            out.append(self._offer((self.index + 1) % len(self.menu.items), due))
        return out

    # -- inside ------------------------------------------------------------------------

    def _moving(self) -> bool:
        if self.timing.hold_to_scan:
            return self._held
        return self.timing.style == "auto"

    def _loops_done(self) -> bool:
        assert self.menu is not None
        if self.timing.hold_to_scan or self.timing.style != "auto":
            return False  # the user moves it: never stop under their hand
        return self._offered >= self.timing.loops * len(self.menu.items)

    def _dwell(self, index: int) -> float:
        return self.timing.interval_s + (self.timing.pause_first_s if index == 0 else 0.0)

    def _offer(self, index: int, at: float) -> Offer:
        assert self.menu is not None
        self.index, self._since = index, at
        self._offered += 1
        self._due = at + self._dwell(index) if self._moving() else None
        return Offer(self.menu.items[index], index, self.menu, at)
