"""From raw switch edges to deliberate presses: debounce, ignore-repeat, tap, hold, long hold.

Pure: the only clock is the edges' `t` and the `now` given to `tick`, so tests run on a virtual
clock and the kiosk on `time.monotonic()`.

Rules, per switch:
- Debounce: an edge within `switch_debounce_ms` of the previous accepted edge is a bounce and
  dropped. If the dropped edges leave the switch at a different level than the last accepted one
  (a real release inside the window), that level is accepted when the window closes, at
  `last accepted + debounce`, so a switch is never left stuck down.
- Ignore repeat: a down within `switch_ignore_repeat_ms` of the last accepted release is dropped,
  and so is the whole press it starts (its release too), however long it is held.
- Tap: released before `switch_hold_s`; reported at the release.
- Hold: still down when `switch_hold_s` passes; reported then (t = down + hold_s), not at release.
- Long hold: still down when `switch_long_hold_s` passes. A long hold is first a hold: the hold is
  reported at hold_s and the long_hold later, so hold-to-talk starts at once and a long hold can
  then cancel it. Neither is followed by a tap at release. If `switch_long_hold_s` is not after
  `switch_hold_s`, the press becomes a long_hold at hold_s with no separate hold.
"""

from __future__ import annotations

from dataclasses import dataclass

from appliance.settings import Settings
from appliance.switch.model import Edge, Press

Event = Edge | Press


@dataclass
class _Switch:
    """What one switch is doing, as far as accepted edges tell."""

    down: bool = False
    raw_down: bool = False  # the level of the last edge seen, accepted or not
    down_t: float = 0.0
    last_edge_t: float | None = None  # last accepted edge
    released_t: float | None = None  # last accepted release
    ignoring: bool = False  # inside a press dropped by ignore-repeat
    held: bool = False  # hold reported for the current press
    long_held: bool = False  # long_hold reported for the current press


class Gestures:
    """Feed it edges (and tick it while a switch is down); it returns accepted edges and presses."""

    def __init__(self, settings: Settings) -> None:
        self.debounce_s = settings.switch_debounce_ms / 1000.0
        self.ignore_repeat_s = settings.switch_ignore_repeat_ms / 1000.0
        self.hold_s = settings.switch_hold_s
        self.long_hold_s = max(settings.switch_long_hold_s, settings.switch_hold_s)
        self._switches: dict[int, _Switch] = {}

    def feed(self, edge: Edge) -> list[Event]:
        """Everything known by `edge.t`: timers that passed before it, then the edge itself."""
        out = self._advance(edge.t)
        sw = self._switch(edge.switch)
        sw.raw_down = edge.down
        if sw.ignoring:
            if not edge.down:
                sw.ignoring = False
            return out
        if edge.down == sw.down:
            return out  # a repeat of the level we are at (a bounce pair, or a lost event)
        if sw.last_edge_t is not None and edge.t - sw.last_edge_t < self.debounce_s:
            return out  # a bounce; `raw_down` remembers where it left the switch
        out += self._accept(edge.switch, sw, edge.down, edge.t)
        return out

    def tick(self, now: float) -> list[Event]:
        """Holds and long holds that have come due, and levels settled after a bounce."""
        return self._advance(now)

    def abandon(self, t: float) -> list[Event]:
        """The device went away: every switch is up, and a press in progress counts for nothing
        (an unplugged cable must not answer a question with a tap, nor run on into a long hold).
        """
        out: list[Event] = self._advance(t)
        for n, sw in self._switches.items():
            if sw.down:
                out.append(Edge(n, False, t))
                sw.down, sw.last_edge_t, sw.released_t = False, t, t
            sw.raw_down = sw.ignoring = False
        return out

    def is_down(self, switch: int) -> bool:
        return self._switch(switch).down

    def next_due(self) -> float | None:
        """When `tick` next has something to report, so a loop can sleep until exactly then."""
        due = [t for _, t, _ in self._timers()]
        return min(due) if due else None

    # -- internals --------------------------------------------------------------------------

    def _switch(self, switch: int) -> _Switch:
        return self._switches.setdefault(switch, _Switch())

    def _timers(self) -> list[tuple[int, float, str]]:
        """(switch, when, what) for everything pending: settle, hold, long_hold."""
        timers: list[tuple[int, float, str]] = []
        for n, sw in self._switches.items():
            if not sw.ignoring and sw.raw_down != sw.down and sw.last_edge_t is not None:
                timers.append((n, sw.last_edge_t + self.debounce_s, "settle"))
            if sw.down and not sw.long_held:
                if not sw.held and self.hold_s < self.long_hold_s:
                    timers.append((n, sw.down_t + self.hold_s, "hold"))
                else:
                    timers.append((n, sw.down_t + self.long_hold_s, "long_hold"))
        return timers

    def _advance(self, now: float) -> list[Event]:
        out: list[Event] = []
        while True:
            due = [timer for timer in self._timers() if timer[1] <= now]
            if not due:
                return out
            n, when, what = min(due, key=lambda timer: timer[1])
            sw = self._switches[n]
            if what == "settle":
                out += self._accept(n, sw, sw.raw_down, when)
            elif what == "hold":
                sw.held = True
                out.append(Press(n, "hold", when, self.hold_s))
            else:
                sw.held = sw.long_held = True
                out.append(Press(n, "long_hold", when, self.long_hold_s))

    def _accept(self, n: int, sw: _Switch, down: bool, t: float) -> list[Event]:
        if down:
            if sw.released_t is not None and t - sw.released_t < self.ignore_repeat_s:
                sw.ignoring = True
                return []
            sw.down, sw.down_t, sw.last_edge_t = True, t, t
            sw.held = sw.long_held = False
            return [Edge(n, True, t)]
        sw.down, sw.last_edge_t, sw.released_t = False, t, t
        out: list[Event] = [Edge(n, False, t)]
        if not sw.held:
            out.append(Press(n, "tap", t, t - sw.down_t))
        return out
