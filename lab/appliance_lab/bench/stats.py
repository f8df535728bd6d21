"""Latency summaries for benchmark reports."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    if not samples_ms:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "n": 0}
    ordered = sorted(samples_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(p95, 3),
        "max_ms": round(ordered[-1], 3),
        "n": len(ordered),
    }


Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95 % interval."""


def wilson(hits: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval (95 %) of a share `hits` of `n` (None: nothing counted)."""
    if n <= 0:
        return None
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return round(max(0.0, centre - half), 3), round(min(1.0, centre + half), 3)


def level_accepting(scores: list[float], accepted: float) -> float:
    """The level above which about `accepted` of `scores` lie (none tied with it counted)."""
    ranked = sorted(scores, reverse=True)
    return ranked[min(len(ranked) - 1, int(accepted * len(ranked)))]


def share(hits: int, n: int) -> dict[str, Any]:
    """A count of `n`, its share and its Wilson interval, as the reports give them."""
    return {"share": round(hits / n, 3) if n else None, "count": hits, "ci95": wilson(hits, n)}


def _poisson_cdf(k: int, mean: float) -> float:
    term = total = math.exp(-mean)
    for i in range(1, k + 1):
        term *= mean / i
        total += term
    return total


def _solve(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of an increasing f on [lo, hi], by bisection."""
    for _ in range(200):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def poisson_rate(count: int, exposure: float, level: float = 0.95) -> tuple[float, float] | None:
    """The exact (Garwood) interval of a rate: `count` events in `exposure` units (hours)."""
    if exposure <= 0:
        return None
    tail = (1 - level) / 2
    hi_mean = _solve(lambda m: tail - _poisson_cdf(count, m), 0.0, 10.0 * count + 20.0)
    lo_mean = 0.0 if count == 0 else _solve(
        lambda m: (1 - _poisson_cdf(count - 1, m)) - tail, 0.0, 10.0 * count + 20.0)
    return round(lo_mean / exposure, 3), round(hi_mean / exposure, 3)


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM: Linux carries ru_maxrss across exec)."""
    status = Path("/proc/self/status").read_text()
    line = next((ln for ln in status.splitlines() if ln.startswith("VmHWM:")), "VmHWM: 0 kB")
    return round(int(line.split()[1]) / 1024, 1)
