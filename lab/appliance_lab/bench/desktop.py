"""`appliance bench desktop`: snapshot cold and warm of a 500-widget window, action + verify."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from appliance.desktop.model import Action, DesktopError
from appliance_lab import REPO

TEST_APP = REPO / "tests" / "apps" / "gtk_test_app.py"
GOALS_MS = {"snapshot_cold": 300.0, "snapshot_warm": 5.0, "action_verify_p95": 50.0}


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _action_arg() -> Any:
    from appliance.desktop.atspi.gi_modules import GLib

    return GLib.Variant("(i)", (0,))


def bench_desktop(widgets: int = 500, rounds: int = 40) -> dict[str, Any]:
    """Run the GTK test app with `widgets` buttons in a private Xvfb session and time it."""
    if not TEST_APP.exists():
        raise DesktopError("The desktop benchmark needs the repository's tests/apps folder.")
    from appliance.desktop.atspi import open_desktop
    from appliance.desktop.atspi.headless import HeadlessSession

    saved = dict(os.environ)
    session = HeadlessSession.start()
    session.apply()
    app: subprocess.Popen[bytes] | None = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            app = subprocess.Popen(
                ["/usr/bin/python3", str(TEST_APP), "--widgets", str(widgets), "--app-name",
                 "Bench", "--state", str(Path(tmp) / "state.json")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            desktop = open_desktop(timeout=5.0)
            deadline = time.monotonic() + 30
            while sum(1 for n in desktop.snapshot().nodes if n.role == "push button") < widgets:
                if time.monotonic() > deadline:
                    raise DesktopError("The benchmark window did not appear.")
                time.sleep(0.1)
                desktop.screen.invalidate()
            cold = []
            for _ in range(5):
                fresh = open_desktop(timeout=5.0)  # an empty cache: everything read again
                start = time.perf_counter()
                snap = fresh.snapshot()
                cold.append(time.perf_counter() - start)
            nodes = len(snap.nodes)
            desktop.snapshot()
            warm = []
            for _ in range(200):
                start = time.perf_counter()
                desktop.snapshot()
                warm.append(time.perf_counter() - start)
            check = next(n for n in desktop.snapshot().nodes if n.name == "Urgent")
            acted = []
            failures = 0
            for i in range(rounds):
                start = time.perf_counter()
                result = desktop.perform(
                    Action(kind="set_value", target=check.id, value=i % 2 == 0))
                acted.append(time.perf_counter() - start)
                failures += not result.verified
            changed = []
            for _ in range(rounds):
                # Another program changes one element; the next snapshot re-reads only it.
                desktop.bus.call(desktop.screen.resolve(check.id)[1], "org.a11y.atspi.Action",
                                 "DoAction", _action_arg())
                time.sleep(0.01)
                start = time.perf_counter()
                desktop.snapshot()
                changed.append(time.perf_counter() - start)
    finally:
        if app is not None:
            app.terminate()
            app.wait(timeout=5)
        session.stop()
        os.environ.clear()
        os.environ.update(saved)
    return {
        "widgets": widgets,
        "nodes": nodes,
        "snapshot_cold_ms": {"median": _ms(statistics.median(cold)), "max": _ms(max(cold))},
        "snapshot_warm_ms": {"median": _ms(statistics.median(warm)), "p95": _ms(_p95(warm))},
        "snapshot_after_one_change_ms": {"median": _ms(statistics.median(changed)),
                                         "p95": _ms(_p95(changed))},
        "action_verify_ms": {"p50": _ms(statistics.median(acted)), "p95": _ms(_p95(acted)),
                             "rounds": rounds, "unverified": failures},
        "goals_ms": GOALS_MS,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(bench_desktop(), indent=2))
