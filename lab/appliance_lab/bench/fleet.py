"""`appliance bench fleet`: simulated kiosks (separate processes, each with its own SQLite
journal and device key, taking sim turns) uplinking to one central server on this machine's
PostgreSQL. Measures the catch-up ingest rate, the lag from a kiosk's event to the central copy,
the central's memory and what PostgreSQL keeps per million events."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from appliance.fleet.central_store import CentralStore
from appliance.fleet.link import PIN_HEX, FleetError, fingerprint, server_certificate
from appliance_lab.bench.scratch_database import scratch_database

Progress = Callable[[str], None]
BACKLOG_TURNS = 2000
"""Turns taken offline across the fleet before the uplinks start: the catch-up's size."""
STEADY_S = 20.0
STEADY_TURNS_PER_S = 10.0
"""Across the fleet while the lag is measured (each kiosk at most one turn every 2 s): with
100 kiosks one turn every 10 s each, six times the realistic one a minute."""
BURST_PER_S = 10.0
BURST_S = 5.0


def bench_fleet(db: str | None, kiosks: int = 20, progress: Progress = lambda _line: None,
                fill_turns: int | None = None, steady_s: float = STEADY_S) -> dict[str, Any]:
    if not db or not db.startswith("postgres"):
        raise FleetError("bench fleet needs --store postgresql://... (a server it may create a "
                         "database on; scripts/postgres.sh starts one)")
    with (scratch_database(db, "bench_fleet") as url,
          tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp):
        return _run(url, Path(tmp), kiosks, progress,
                    fill_turns or max(5, BACKLOG_TURNS // kiosks), steady_s)


def _run(url: str, tmp: Path, n: int, progress: Progress, fill_turns: int,
         steady_s: float) -> dict[str, Any]:
    port = _free_port()
    told = tmp / "central.err"  # a file: a pipe nobody reads would stop the server when full
    with told.open("wb") as err:
        central = subprocess.Popen(
            [sys.executable, "-m", "appliance.cli", "central", "serve", "--db", url, "--host",
             "127.0.0.1", "--port", str(port), "--state", str(tmp / "central")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    store = CentralStore(url, pool_size=2)
    procs: list[subprocess.Popen[str]] = []
    try:
        _wait_port(port)
        # The bench's own loopback server: its certificate is read, not checked against a pin.
        pin = fingerprint(server_certificate(f"https://127.0.0.1:{port}"))[:PIN_HEX]
        for i in range(n):
            folder = tmp / f"kiosk-{i:03d}"
            folder.mkdir()
            token = f"{store.enroll(f'kiosk-{i:03d}')}.{pin}"
            env = {**os.environ, "APPLIANCE_KEY_FILE": str(folder / "journal.key"),
                   "APPLIANCE_FLEET_FILE": str(folder / "fleet.json")}
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "appliance_lab.bench.fleet_kiosk", str(folder),
                 f"https://127.0.0.1:{port}", token],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env))
        _all(procs, None)
        cpu0, pg_cpu0 = _cpu_s(central.pid), _postgres_cpu_s(store)  # after start-up and joins
        progress(f"{n} kiosks joined; each takes {fill_turns} turns offline")
        filled = _all(procs, f"fill {fill_turns}")
        backlog = sum(f["last"] for f in filled)
        progress(f"{backlog} events waiting; uplinks start")
        t0 = time.monotonic()
        _all(procs, "uplink")
        _all(procs, "drain")
        ingest_s = time.monotonic() - t0
        progress(f"caught up in {ingest_s:.1f} s; {steady_s:.0f} s of turns, one kiosk bursting")
        steady_from = _now(store)
        cpu1, pg_cpu1 = _cpu_s(central.pid), _postgres_cpu_s(store)
        per_kiosk = min(0.5, STEADY_TURNS_PER_S / n)
        for i, p in enumerate(procs):
            rate = BURST_PER_S if i == 0 else per_kiosk
            _send(p, f"turns {BURST_S if i == 0 else steady_s} {rate}")
        _answers(procs)
        final = _all(procs, "drain")
        lag = _lag(store, steady_from)
        total = sum(f["last"] for f in final)
        held = _held(store)
        size = _bytes(store)
        rss = _rss_kb(central.pid)
        cpu2, pg_cpu2 = _cpu_s(central.pid), _postgres_cpu_s(store)
        cpu_s, pg_cpu_s = cpu2 - cpu0, pg_cpu2 - pg_cpu0
        steady_cpu = {  # small batches, a turn or two each: the per-request costs show here
            "central_us_per_event": round((cpu2 - cpu1) / max(lag["n"], 1) * 1e6, 1),
            "postgres_us_per_event": round((pg_cpu2 - pg_cpu1) / max(lag["n"], 1) * 1e6, 1),
        }
        _all(procs, "quit", answer=False)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        central.terminate()
        central.wait(timeout=10)
        store.close()
    return {
        "kiosks": n,
        "catch_up": {"events": backlog, "seconds": round(ingest_s, 2),
                     "events_per_s": round(backlog / ingest_s, 1)},
        "steady": {"seconds": steady_s, "turns_per_s_per_kiosk": round(per_kiosk, 3),
                   "burst": {"kiosk": 0, "turns_per_s": BURST_PER_S, "seconds": BURST_S},
                   "lag_event_to_central_ms": lag, "cpu": steady_cpu},
        "events_at_kiosks": total, "events_at_central": held,
        "lost": total - held if held < total else 0,
        "central_rss_kb": rss,
        "central_cpu_s": round(cpu_s, 2),
        "central_cpu_us_per_event": round(cpu_s / max(held, 1) * 1e6, 1),
        "postgres_cpu_s": round(pg_cpu_s, 2),
        "postgres_cpu_us_per_event": round(pg_cpu_s / max(held, 1) * 1e6, 1),
        "refused_requests": sum('"refused": ' in line for line in
                                told.read_text(errors="replace").splitlines()),
        "postgres_bytes": size,
        "postgres_bytes_per_million_events": round(size / max(held, 1) * 1_000_000),
    }


def _send(p: subprocess.Popen[str], line: str) -> None:
    stdin: IO[str] | None = p.stdin
    assert stdin is not None
    stdin.write(line + "\n")
    stdin.flush()


def _answers(procs: list[subprocess.Popen[str]]) -> list[dict[str, Any]]:
    out = []
    for p in procs:
        assert p.stdout is not None
        line = p.stdout.readline()
        if not line:
            raise FleetError(f"a simulated kiosk stopped (exit {p.wait()})")
        out.append(json.loads(line))
    return out


def _all(procs: list[subprocess.Popen[str]], line: str | None,
         answer: bool = True) -> list[dict[str, Any]]:
    if line is not None:
        for p in procs:
            _send(p, line)
    return _answers(procs) if answer else []


def _now(store: CentralStore) -> Any:
    with store.datastore.get_connection() as conn:
        row = conn.execute("SELECT clock_timestamp() AS t").fetchone()
        assert row is not None
        return row["t"]


def _lag(store: CentralStore, since: Any) -> dict[str, float]:
    with store.datastore.get_connection() as conn:
        row = conn.execute(
            "SELECT count(*) AS n, "
            "percentile_cont(0.5) WITHIN GROUP (ORDER BY received_at - occurred_at) AS p50, "
            "percentile_cont(0.95) WITHIN GROUP (ORDER BY received_at - occurred_at) AS p95, "
            "max(received_at - occurred_at) AS worst "
            "FROM fleet_events WHERE occurred_at >= %s", (since,)).fetchone()
    assert row is not None

    def ms(value: Any) -> float:
        return round(value.total_seconds() * 1000, 1) if value is not None else 0.0

    return {"p50_ms": ms(row["p50"]), "p95_ms": ms(row["p95"]), "max_ms": ms(row["worst"]),
            "n": int(row["n"])}


def _held(store: CentralStore) -> int:
    with store.datastore.get_connection() as conn:
        row = conn.execute("SELECT count(*) AS n FROM fleet_events").fetchone()
    return int(row["n"]) if row else 0


def _bytes(store: CentralStore) -> int:
    with store.datastore.get_connection() as conn:
        row = conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) AS b FROM pg_class c "
            "JOIN pg_namespace s ON s.oid=c.relnamespace "
            "WHERE s.nspname='public' AND c.relkind='r' AND c.relname LIKE 'fleet%%'"
        ).fetchone()
    return int(row["b"]) if row and row["b"] else 0


def _rss_kb(pid: int) -> dict[str, int]:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            found[line.split(":")[0]] = int(line.split()[1])
    return {"now": found.get("VmRSS", 0), "peak": found.get("VmHWM", 0)}


def _cpu_s(pid: int) -> float:
    """User + system CPU the central process used (the web server; PostgreSQL's own is not
    counted here)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _postgres_cpu_s(store: CentralStore) -> float:
    """CPU of the PostgreSQL backends serving this database (the central's pool and this
    bench's own), read from /proc: zero where they are not visible (another host or user)."""
    with store.datastore.get_connection() as conn:
        pids = [int(r["pid"]) for r in conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname=current_database()").fetchall()]
    total = 0.0
    for pid in pids:
        try:
            total += _cpu_s(pid)
        except OSError:
            continue
    return total


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise FleetError(f"the central server did not start on port {port}")
