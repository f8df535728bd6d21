"""`appliance bench switch`: press -> action latency on the sim desktop, and scan step jitter.

Latency runs the whole controller (journal the press, session, policy, act, journal the
outcome) on the bundled messages scene with a real SQLite journal in a temporary folder.
Jitter runs auto-scan on the real monotonic clock, driven the way the kiosk drives it: sleep
until `next_due()`, then `tick(now)`; it is the gap between an offer's scheduled time and the
moment the panel is told about it.
"""

from __future__ import annotations

import resource
import tempfile
import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from appliance.desktop.model import Desktop
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.journal.application import Journal
from appliance.panel.state import PanelState
from appliance.scenes import bundled_scene
from appliance.switch.controller import SwitchController
from appliance.switch.model import Press
from appliance_lab.bench.stats import percentiles

SCENE = bundled_scene()
GOALS_MS = {"press_to_action_p95": 50.0, "scan_jitter_p95": 20.0}


class _TimedJournal(Journal):
    """Notes when each save is on disk, so latency ends when the outcome is journaled."""

    saved_at = 0.0

    def record(self, *aggregates: Any) -> None:
        super().record(*aggregates)
        self.saved_at = time.monotonic()


class _Rig:
    def __init__(self, folder: Path, **settings: Any) -> None:
        self.journal = _TimedJournal(str(folder / "journal.sqlite"))
        for key, value in settings.items():
            self.journal.change_setting(key, value, by="bench")
        self.desktop = SimDesktop.from_file(SCENE)
        self.shown_at: list[tuple[float, PanelState]] = []
        self.controller = SwitchController(
            self.journal,
            self.screen,
            GrammarPlanner(),
            speak=lambda _text: None,
            show=self.show,
            device="bench switch",
        )

    def screen(self) -> AbstractContextManager[Desktop]:
        return nullcontext(self.desktop)

    def show(self, state: PanelState) -> None:
        self.shown_at.append((time.monotonic(), state))

    def tap(self, switch: int = 1) -> tuple[str, float]:
        """Press now; returns the meaning and when the press happened."""
        t = time.monotonic()
        return self.controller.handle(Press(switch, "tap", t, 0.1)), t

    def offered(self) -> str:
        offer = self.controller.scanner.current
        return offer.item.label if offer else ""

    def step_to(self, label: str) -> None:
        for _ in range(20):
            if self.offered() == label:
                return
            self.tap(2)
        raise RuntimeError(f"{label} is not in the scan menu")


def _ms(seconds: float) -> float:
    return seconds * 1000.0


def press_latency(rounds: int = 100) -> dict[str, Any]:
    """Press -> outcome journaled, for a harmless select (tick Urgent) and a yes (Send)."""
    select_ms, select_return_ms, yes_ms, next_ms = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        rig = _Rig(Path(tmp), scan_mode="step", max_unconfirmed_per_minute=600)
        rig.tap()  # start scanning
        for _ in range(rounds):
            rig.tap()  # into the window's controls
            t0 = time.monotonic()
            rig.tap(2)
            next_ms.append(_ms(rig.shown_at[-1][0] - t0))
            rig.step_to("Urgent, ticked" if _urgent(rig) else "Urgent, not ticked")
            meaning, t = rig.tap()
            returned = time.monotonic()
            _check(rig, meaning, "scan_select")
            select_ms.append(_ms(rig.journal.saved_at - t))
            select_return_ms.append(_ms(returned - t))
            rig.tap()
            rig.step_to("Send")
            rig.tap()  # asks first: Send is moderate
            meaning, t = rig.tap()
            _check(rig, meaning, "yes")
            yes_ms.append(_ms(rig.journal.saved_at - t))
        presses = sum(1 for n in rig.journal.notifications() if "SwitchPressed" in n.topic)
    return {
        "select_to_action_journaled": percentiles(select_ms),
        "select_to_controller_return": percentiles(select_return_ms),
        "yes_to_action_journaled": percentiles(yes_ms),
        "next_to_offer_shown": percentiles(next_ms),
        "presses_journaled": presses,
    }


def _check(rig: _Rig, meaning: str, expected: str) -> None:
    """A benchmark that timed the wrong thing is worse than none."""
    outcome = rig.journal.recent_turns()[0].outcome
    if meaning != expected or outcome != "executed":
        raise RuntimeError(f"bench press meant {meaning} ({outcome}), expected {expected}")


def _urgent(rig: _Rig) -> bool:
    node = next(n for n in rig.desktop.snapshot().nodes if n.name == "Urgent")
    return "checked" in node.states


def scan_jitter(steps: int = 60, interval_s: float = 0.3) -> dict[str, Any]:
    """Auto-scan on the real clock: |shown - scheduled| per step."""
    with tempfile.TemporaryDirectory() as tmp:
        rig = _Rig(
            Path(tmp),
            scan_mode="auto",
            scan_interval_s=interval_s,
            scan_pause_first_s=0.0,
            scan_loops=10,
        )
        rig.tap()
        controller = rig.controller
        late_ms: list[float] = []
        while len(late_ms) < steps:
            due = controller.next_due()
            if due is None:
                rig.tap()  # the loops ran out: start again
                continue
            time.sleep(max(0.0, due - time.monotonic()))
            before = len(rig.shown_at)
            controller.tick(time.monotonic())
            if len(rig.shown_at) > before and rig.shown_at[-1][1].mode == "scanning":
                late_ms.append(abs(_ms(rig.shown_at[-1][0] - due)))
    return {"interval_s": interval_s, **percentiles(late_ms)}


def bench_switch(rounds: int = 100, steps: int = 60, interval_s: float = 0.3) -> dict[str, Any]:
    """The `appliance bench switch` report (JSON-ready)."""
    latency = press_latency(rounds)
    jitter = scan_jitter(steps, interval_s)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    p95 = latency["select_to_action_journaled"]["p95_ms"]
    return {
        "press_to_action": latency,
        "scan_step_jitter": jitter,
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "goals_ms": GOALS_MS,
        "meets_goals": {
            "press_to_action_p95": p95 <= GOALS_MS["press_to_action_p95"]
            and latency["yes_to_action_journaled"]["p95_ms"] <= GOALS_MS["press_to_action_p95"],
            "scan_jitter_p95": jitter["p95_ms"] <= GOALS_MS["scan_jitter_p95"],
        },
    }


if __name__ == "__main__":  # pragma: no cover - `appliance bench switch` is the way in
    import json

    print(json.dumps(bench_switch(), indent=2))
