"""`appliance bench desktop`, on applications nobody here wrote: a Chromium page of about 500
elements and a GTK4 window (Debian's gtk4-print-editor), each in its own Xvfb + openbox session.

Cold is a fresh adapter reading everything; warm is the cached snapshot; action + verify ticks a
check box (Chromium) or types a word into the text view (GTK4) and reads it back.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from appliance.desktop.model import Action, DesktopError, Snapshot

CHROMIUM_FLAGS = (
    "--no-sandbox", "--disable-gpu", "--no-first-run", "--test-type",
    "--force-renderer-accessibility", "--disable-background-networking",
    "--disable-component-update", "--disable-features=Translate,MediaRouter",
    "--window-position=0,0", "--window-size=1000,740", "--password-store=basic",
)
GOALS_MS = {"snapshot_cold": 300.0, "snapshot_warm": 5.0, "action_verify_p95": 80.0}


def _page(elements: int) -> str:
    """A long form: a check box, a labelled text field, a button and a link per row."""
    rows = []
    for i in range(elements // 4):
        rows.append(
            f'<div><label><input type="checkbox" id="c{i}"> Option {i}</label> '
            f'<label for="t{i}">Note {i}</label><input id="t{i}"> '
            f'<button id="b{i}">Save {i}</button> <a href="#r{i}">Row {i}</a></div>'
        )
    return "<!doctype html><title>Bench form</title><main>" + "".join(rows) + "</main>"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


@contextmanager
def app_session() -> Iterator[Path]:
    """A headless session (Xvfb, a11y bus, openbox) with a fresh HOME, for real applications."""
    from appliance.desktop.atspi.headless import HeadlessSession

    saved = dict(os.environ)
    session = HeadlessSession.start()
    session.apply()
    os.environ.update(GSK_RENDERER="cairo", QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1")
    wm = subprocess.Popen(["openbox"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # A browser's helper processes may still be writing its profile as it goes.
        with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
            os.environ["HOME"] = tmp
            yield Path(tmp)
    finally:
        wm.terminate()
        wm.wait(timeout=5)
        session.stop()
        os.environ.clear()
        os.environ.update(saved)


def _measure(
    app: list[str], ready: Callable[[Snapshot], bool], act: Callable[[Snapshot], Action],
    rounds: int, progress: Callable[[str], None],
) -> dict[str, Any]:
    from appliance.desktop.atspi import open_desktop
    from appliance.desktop.atspi.headless import stop_process

    proc = subprocess.Popen(app, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        desktop = open_desktop(timeout=5.0)
        deadline = time.monotonic() + 90
        while not ready(desktop.snapshot()):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise DesktopError(f"{app[0]} did not show its window.")
            time.sleep(0.5)
            desktop.screen.invalidate()
        progress(f"{app[0]}: cold snapshots")
        cold = []
        for _ in range(5):
            fresh = open_desktop(timeout=5.0)
            start = time.perf_counter()
            snap = fresh.snapshot()
            cold.append(time.perf_counter() - start)
        warm = []
        desktop.snapshot()
        for _ in range(200):
            start = time.perf_counter()
            desktop.snapshot()
            warm.append(time.perf_counter() - start)
        progress(f"{app[0]}: {rounds} actions")
        acted, unverified = [], 0
        for _ in range(rounds):
            action = act(desktop.snapshot())
            start = time.perf_counter()
            result = desktop.perform(action)
            acted.append(time.perf_counter() - start)
            unverified += not result.verified
        alive = proc.poll() is None
    finally:
        stop_process(proc, grace=10)
    return {
        "nodes": len(snap.nodes),
        "snapshot_cold_ms": {"median": _ms(statistics.median(cold)), "max": _ms(max(cold))},
        "snapshot_warm_ms": {"median": _ms(statistics.median(warm)), "p95": _ms(_p95(warm))},
        "action_verify_ms": {"p50": _ms(statistics.median(acted)), "p95": _ms(_p95(acted)),
                             "rounds": rounds, "unverified": unverified},
        "app_alive_after": alive,
    }


def _node(snap: Snapshot, role: str, name: str) -> str:
    for node in snap.nodes:
        if node.role == role and node.name == name:
            return node.id
    raise DesktopError(f"No {role} called {name} on the benchmark screen.")


def bench_real_apps(
    elements: int = 500, rounds: int = 40, progress: Callable[[str], None] = lambda _l: None,
) -> dict[str, Any]:
    """Cold and warm snapshots and action + verify on Chromium and a GTK4 window."""
    for tool in ("chromium", "openbox", "gtk4-print-editor"):
        if shutil.which(tool) is None:
            raise DesktopError(f"{tool} is not installed: run scripts/setup.sh.")
    out: dict[str, Any] = {"goals_ms": GOALS_MS}
    with app_session() as home:
        page = home / "bench.html"
        page.write_text(_page(elements))
        ticks = iter(range(10**6))

        def tick(snap: Snapshot) -> Action:
            return Action(kind="set_value", target=_node(snap, "check box", "Option 0"),
                          value=next(ticks) % 2 == 0)

        out["chromium"] = _measure(
            ["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={home / 'profile'}", page.as_uri()],
            # The page's first and a later row on screen: it is laid out (rows scrolled away
            # are not read at all, so the last row never shows up).
            lambda s: {"Save 0", "Save 5"} <= {n.name for n in s.nodes if n.role == "push button"},
            tick, rounds, progress,
        )
        out["chromium"]["page_elements"] = elements
    with app_session() as home:
        text = home / "note.txt"
        text.write_text("A note for the benchmark.\n")

        def type_more(snap: Snapshot) -> Action:
            view = next(n for n in snap.nodes if n.role == "text")
            return Action(kind="type_text", target=view.id, text="more")

        out["gtk4"] = _measure(
            ["gtk4-print-editor", str(text)],
            lambda s: any(n.role == "text" for n in s.nodes), type_more, rounds, progress,
        )
    return out
