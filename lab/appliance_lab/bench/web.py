"""`appliance bench web`: the day page's time with a big journal, how soon a committed turn
reaches an open page over SSE, and the server's memory; the real server in its own process."""

from __future__ import annotations

import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from appliance.desktop.atspi.headless import stop_process
from appliance.journal.application import Journal
from appliance.turn import Turn

GOALS = {"page_p95_ms": 150.0, "event_to_page_p95_ms": 300.0, "server_rss_mb": 120.0}
PASSWORD = "benchmark password long enough"
EVENTS_PER_TURN = 6


def _turn(i: int) -> Turn:
    turn = Turn(trigger="voice")
    turn.heard(f"click send number {i}", "bench", 0.9, {})
    turn.planned({"intent": "activate", "target": "Send"}, "grammar", "", 0.1, [])
    turn.validated("execute", "harmless", [])
    turn.spoke(text="Pressed Send.", timings={})
    turn.end("executed")
    return turn


def fill(journal: Journal, events: int, progress: Callable[[str], None]) -> int:
    """Realistic turns until the journal holds `events` events."""
    made = 0
    while made < events:
        journal.record(_turn(made))
        made += EVENTS_PER_TURN
        if made % 20_000 < EVENTS_PER_TURN:
            progress(f"{made} events written")
    return made


def _ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered) * 1000, 2), "p95": round(p95 * 1000, 2)}


def _memory_mb(pid: int) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    found = dict(re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.M))
    return {"rss": round(int(found["VmRSS"]) / 1024, 1),
            "peak": round(int(found["VmHWM"]) / 1024, 1)}


def bench_web(events: int = 100_000, rounds: int = 30,
              progress: Callable[[str], None] = lambda _l: None) -> dict[str, Any]:
    import httpx

    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "journal.sqlite")
        journal = Journal(store)
        made = fill(journal, events, progress)
        runtime = Path(tmp) / "runtime"
        runtime.mkdir(mode=0o700)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        appliance = Path(sys.executable).with_name("appliance")
        proc = subprocess.Popen(
            [str(appliance), "serve", "--store", store, "--port", str(port)],
            env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)}, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            client = httpx.Client(base_url=url, timeout=30)
            _wait_up(client, proc)
            _pair_and_log_in(client, runtime / "appliance" / "pairing-code")
            progress(f"day page x{rounds}")
            pages = []
            for _ in range(rounds):
                start = time.perf_counter()
                if client.get("/").status_code != 200:
                    raise RuntimeError("the day page failed")
                pages.append(time.perf_counter() - start)
            progress(f"turn -> page over SSE x{rounds}")
            live = _live(client, journal, rounds)
            memory = _memory_mb(proc.pid)
            client.close()
        finally:
            stop_process(proc, grace=10)
    return {
        "events": made,
        "day_page_ms": _ms(pages),
        "event_to_page_ms": _ms(live),
        "event_to_page_measured_at": "the SSE 'day' message received by an HTTP client",
        "server_memory_mb": memory,
        "goals": GOALS,
    }


def _wait_up(client: Any, proc: subprocess.Popen[bytes]) -> None:
    import httpx

    deadline = time.monotonic() + 60
    while True:
        try:
            client.get("/login")
            return
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("appliance serve did not start") from None
            time.sleep(0.1)


def _pair_and_log_in(client: Any, code_file: Path) -> None:
    def token(html: str) -> str:
        found = re.search(r'name="form_token" value="([^"]+)"', html)
        if found is None:
            raise RuntimeError("the benchmark could not pair with the server")
        return found.group(1)

    page = client.get("/pair")
    client.post("/pair", data={"form_token": token(page.text), "code": code_file.read_text(
    ).strip(), "name": "Tester", "password": PASSWORD})
    page = client.get("/login")
    done = client.post("/login", data={"form_token": token(page.text), "name": "Tester",
                                       "password": PASSWORD})
    if done.status_code != 303:
        raise RuntimeError(f"the benchmark could not log in: {done.status_code}")


def _live(client: Any, journal: Journal, rounds: int) -> list[float]:
    """Commit a turn, time until the page's stream says the day changed."""
    arrived = threading.Event()
    stop = threading.Event()

    def listen() -> None:
        import httpx

        try:
            with client.stream("GET", "/events", timeout=None) as stream:
                for line in stream.iter_lines():
                    if stop.is_set():
                        return
                    if line == "event: day":
                        arrived.set()
        except httpx.HTTPError:
            return  # the server is stopping at the end of the benchmark

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    time.sleep(0.5)  # connected
    took = []
    for i in range(rounds):
        arrived.clear()
        start = time.perf_counter()
        journal.record(_turn(10**9 + i))
        if not arrived.wait(10):
            raise RuntimeError("the page never heard of a new turn")
        took.append(time.perf_counter() - start)
        time.sleep(0.05)
    stop.set()
    return took
