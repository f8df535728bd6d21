"""`appliance bench voice`: the voice layer's own figures (voice_pipeline.py), barge-in
(barge_in.py) and the spoken corpus's held-out part per recognizer (spoken/)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def bench_voice(
    held_out_sample: int = 2,
    fa_hours: float = 1.0,
    recognizers: list[str] | None = None,
    held_out_only: bool = False,
    progress: Callable[[str], None] = lambda _line: None,
) -> dict[str, Any]:
    """`held_out_sample` items per voice and condition of the held-out part (0: none)."""
    from appliance_lab.bench.barge_in import bench_barge_in
    from appliance_lab.bench.spoken.heldout_bench import run_held_out
    from appliance_lab.bench.voice_pipeline import run_bench

    report: dict[str, Any] = {} if held_out_only else run_bench()
    if not held_out_only:
        report["barge_in"] = bench_barge_in()
    if held_out_sample > 0:
        report["held_out"] = run_held_out(
            recognizers or ["open", "closed"], held_out_sample, fa_hours, progress)
    return report
