"""`appliance bench` (core): grammar planning, turn overhead, journal append and replay rates."""

from __future__ import annotations

import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop
from appliance.journal.application import Journal
from appliance.turn import Turn
from appliance.wiring import journal_planner, new_session, open_journal
from appliance_lab.bench.grammar import bench_grammar
from appliance_lab.bench.stats import percentiles


def big_scene(n_elements: int = 500) -> Scene:
    """One window with n actionable elements of mixed roles, plus a launchable app."""
    children: list[dict[str, Any]] = [
        {"role": "push button", "name": "Send", "risk": "moderate"},
        {"role": "slider", "name": "Volume", "value": 30, "min": 0, "max": 100},
    ]
    items = []
    for i in range(n_elements - 3):
        kind = i % 4
        if kind == 0:
            children.append({"role": "push button", "name": f"Button {i}"})
        elif kind == 1:
            children.append({"role": "check box", "name": f"Option {i}"})
        elif kind == 2:
            children.append({"role": "text", "name": f"Field {i}", "value": ""})
        else:
            items.append({"role": "list item", "name": f"Item {i}"})
    children.append({"role": "list", "name": "Items", "children": items})
    return Scene.model_validate(
        {
            "applications": [
                {
                    "name": "Big",
                    "windows": [{"title": "Big", "states": ["active"], "children": children}],
                }
            ],
            "launchable": [{"name": "Calendar", "windows": [{"title": "Calendar"}]}],
        }
    )


def bench_turn(store: str, runs: int = 200) -> dict[str, Any]:
    journal = open_journal(store)
    # Raise the rate limit so every turn runs the full act path instead of asking for a yes.
    journal.change_setting("max_unconfirmed_per_minute", 600, by="bench")
    desktop = SimDesktop(big_scene(500))
    session = new_session(journal, desktop, journal_planner(journal))
    lines = ("tick option 1", "untick option 1", "type hi into field 2", "select item 3")
    assert {"Option 1", "Field 2", "Item 3"} <= set(desktop.snapshot().names())
    samples: list[float] = []
    outcomes: dict[str, int] = {}
    for i in range(runs):
        t0 = time.perf_counter()
        report = session.say(lines[i % len(lines)])
        samples.append((time.perf_counter() - t0) * 1000)
        outcomes[report.decision] = outcomes.get(report.decision, 0) + 1
    return {**percentiles(samples[10:]), "outcomes": outcomes}


def _fill(journal: Journal, n_events: int) -> float:
    """Append n_events as realistic turns (about 10 events, two saves each); returns events/s."""
    written = 0
    t0 = time.perf_counter()
    while written < n_events:
        turn = Turn(trigger="bench")
        turn.heard("tick urgent", "text", None, {})
        turn.planned({"intent": "set_value", "target": "Urgent", "value": True}, "grammar", "", 1.0)
        turn.validated("execute", "harmless", [])
        turn.start_action(0, {"kind": "set_value", "target": "0.0.1", "value": True}, "Urgent", {})
        journal.record(turn)
        state: dict[str, Any] = {
            "0.0.1": {"value": None, "states": [], "activations": 0, "running": None}
        }
        turn.action_succeeded(state, state, True, "sim")
        turn.spoke(text="Ticked Urgent.", timings={})
        turn.end("executed")
        journal.record(turn)
        written += 8
    return written / (time.perf_counter() - t0)


def bench_journal(store: str, n_append: int = 20_000, n_replay: int = 100_000) -> dict[str, Any]:
    journal = open_journal(store)
    rate = _fill(journal, n_append)
    have = journal.recorder.max_notification_id() or 0
    if have < n_replay:
        _fill(journal, n_replay - have)
    t0 = time.perf_counter()
    count, turns = 0, {}
    for _nid, event in journal.domain_events():
        count += 1
        turns[event.originator_id] = type(event).__name__  # a fold: last event per aggregate
    replay_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    breaks = journal.verify()
    verify_s = time.perf_counter() - t1
    return {
        "appends_per_s": round(rate),
        "replay_events": count,
        "replay_s": round(replay_s, 3),
        "verify_s": round(verify_s, 3),
        "chain_intact": not breaks,
    }


def bench_open_turn(store: str, runs: int = 30) -> dict[str, Any]:
    """Opening the journal at `store` and taking one turn, as each `appliance say` does: the
    live path's check reads only what was added since the device's witness."""
    journal = open_journal(store)
    journal.change_setting("max_unconfirmed_per_minute", 600, by="bench")
    planner = journal_planner(journal)  # loaded once: the journal's cost is what is measured
    desktop = SimDesktop(big_scene(500))
    events = journal.recorder.max_notification_id() or 0
    lines = ("tick option 1", "untick option 1")
    samples: list[float] = []
    for i in range(runs):
        t0 = time.perf_counter()
        session = new_session(open_journal(store), desktop, planner)
        report = session.say(lines[i % len(lines)])
        samples.append((time.perf_counter() - t0) * 1000)
        assert report.decision == "executed", report
    return {"events": events, **percentiles(samples)}


def bench_core(store: str | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        report: dict[str, Any] = {
            "grammar_500_elements": bench_grammar(500, 400),
            "turn_overhead_sqlite": bench_turn(str(Path(tmp) / "turn.sqlite")),
            "journal_sqlite": bench_journal(str(Path(tmp) / "journal.sqlite")),
            "open_and_turn_sqlite": bench_open_turn(str(Path(tmp) / "journal.sqlite")),
        }
        if store and "://" in store:
            report["turn_overhead_postgres"] = bench_turn(store)
            report["journal_postgres"] = bench_journal(store)
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return report
