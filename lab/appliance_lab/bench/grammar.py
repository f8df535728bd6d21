"""`appliance bench core`'s grammar figures: plan latency on a big Messages-like screen."""

from __future__ import annotations

import statistics
import time
from typing import Any

from appliance.desktop.model import Snapshot
from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner

BENCH_COMMANDS = (
    "click the send button",
    "press send",
    "type hello grandma into the message box",
    "tick urgent",
    "set volume to seventy",
    "select item 250",
    "open calendar",
    "press control c",
    "scroll down",
    "what does the status say",
    "yes",
    "click the fan button",
    "type I'll be late and then press enter",
    "hey juniper could you select radio four please",
)


def bench_scene(n_elements: int = 500) -> Snapshot:
    """A Messages-like screen padded to `n_elements` named elements."""
    children: list[dict[str, Any]] = [
        {"role": "text", "name": "Message", "value": ""},
        {"role": "check box", "name": "Urgent"},
        {"role": "push button", "name": "Send"},
        {"role": "label", "name": "Status", "value": "Draft"},
        {"role": "slider", "name": "Volume", "value": 30, "min": 0, "max": 100},
        {"role": "list item", "name": "Radio 4"},
    ]
    roles = ("push button", "list item", "check box", "label", "menu item")
    children += [
        {"role": roles[i % len(roles)], "name": f"Item {i}"}
        for i in range(max(0, n_elements - len(children)))
    ]
    scene = Scene.model_validate({
        "applications": [
            {"name": "Messages", "windows": [{"title": "Messages", "children": children}]}
        ],
        "launchable": [{"name": "Calendar", "windows": [{"title": "Calendar"}]}],
    })
    return SimDesktop(scene).snapshot()


def bench_grammar(n_elements: int = 500, runs: int = 200) -> dict[str, float]:
    """Plan latency in ms on an `n_elements` scene over `runs` plans (BENCH_COMMANDS in turn).

    `p50_ms`/`p95_ms`: wall clock, one snapshot; `cpu_p95_ms`: this thread's CPU time (what the
    planner costs when other processes share the cores); `cold_*`: a fresh snapshot each plan,
    so the name index is rebuilt (a new screen each turn).
    """
    planner = GrammarPlanner()
    snapshot = bench_scene(n_elements)
    planner.plan("click send", snapshot)  # load templates and key tables once

    def timed(fresh: bool) -> tuple[list[float], list[float]]:
        snaps = [snapshot.model_copy() if fresh else snapshot for _ in range(runs)]
        wall, cpu = [], []
        for i, snap in enumerate(snaps):
            c0 = time.thread_time()
            wall.append(planner.plan(BENCH_COMMANDS[i % len(BENCH_COMMANDS)], snap).latency_ms)
            cpu.append((time.thread_time() - c0) * 1000)
        return wall, cpu

    def q(xs: list[float], at: int) -> float:
        return statistics.quantiles(xs, n=100, method="inclusive")[at - 1]

    warm, warm_cpu = timed(fresh=False)
    cold, cold_cpu = timed(fresh=True)
    return {
        "elements": float(len(snapshot.nodes)), "runs": float(runs),
        "p50_ms": q(warm, 50), "p95_ms": q(warm, 95), "max_ms": max(warm),
        "cpu_p50_ms": q(warm_cpu, 50), "cpu_p95_ms": q(warm_cpu, 95),
        "cold_p50_ms": q(cold, 50), "cold_p95_ms": q(cold, 95), "cold_cpu_p95_ms": q(cold_cpu, 95),
    }


if __name__ == "__main__":  # pragma: no cover
    print(bench_grammar())
