"""`appliance bench desktop` on real applications runs end to end (small, and no timing asserted):
Chromium and a GTK4 window start, every action is verified, and both are alive afterwards."""

from __future__ import annotations

from appliance_lab.bench.desktop_real import bench_real_apps


def test_the_real_app_benchmark_acts_and_verifies_on_chromium_and_gtk4() -> None:
    lines: list[str] = []
    report = bench_real_apps(elements=40, rounds=3, progress=lines.append)
    for app in ("chromium", "gtk4"):
        assert report[app]["nodes"] > 5, report[app]
        assert report[app]["action_verify_ms"]["unverified"] == 0
        assert report[app]["app_alive_after"]
    assert any(line.startswith("chromium") for line in lines)
