"""The guest microphone's overruns, quiet and with the host's cores busy, for each capture size.

Boots the test image under QEMU (TCG), lets the appliance's unit listen to ALSA's loopback, and
counts the overruns it logs ("the microphone lost audio") over a window with no load and one
with busy loops on the host. Each size after the first is written into the guest's copy of
`appliance.voice.audio.sources` and the unit restarted.

    python -m appliance_lab.bench.mic_overruns 1600 320 [--busy 2] [--seconds 240]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from appliance_lab.bench.boot import IMAGE_DIR
from appliance_lab.bench.vm import DeviceVM, build_image

LOST = re.compile(r"\[\s*([\d.]+)\].*lost audio: (\d+) overruns.*?([\d.]+) s dropped")
SOURCES = ("$(/opt/appliance/bin/python -c "
           "'import appliance.voice.audio.sources as s; print(s.__file__)')")


@dataclass(frozen=True)
class Lost:
    """One "lost audio" line: when (guest monotonic s), overruns so far, seconds dropped."""

    at_s: float
    overruns: int
    dropped_s: float


@dataclass(frozen=True)
class Window:
    """Overruns counted over one window of listening."""

    capture_samples: int
    busy_loops: int
    seconds: float
    overruns: int
    dropped_s: float

    @property
    def per_s(self) -> float:
        return self.overruns / self.seconds if self.seconds else 0.0

    def row(self) -> dict[str, Any]:
        """The window as JSON, with its rate."""
        return {**asdict(self), "per_s": round(self.per_s, 2)}


def _lost(vm: DeviceVM, pid: int) -> list[Lost]:
    out = vm.sh(f"journalctl --no-pager -o short-monotonic _PID={pid} | grep 'lost audio'",
                timeout=60).out
    return [Lost(float(m[1]), int(m[2]), float(m[3]))
            for m in map(LOST.search, out.splitlines()) if m]


def _window(vm: DeviceVM, samples: int, busy: int, seconds: float) -> Window:
    pid = vm.appliance_pid()
    vm.wait_for(f"journalctl -b -o cat _PID={pid} | grep -m1 'speech_output: said '",
                timeout=900, every=5)
    loops = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(busy)]
    start = vm.monotonic()
    try:
        time.sleep(seconds)
    finally:
        for loop in loops:
            loop.kill()
    rows = _lost(vm, pid)
    before = [r for r in rows if r.at_s < start]
    during = [r for r in rows if r.at_s >= start]
    base = before[-1] if before else Lost(start, 0, 0.0)
    if not during:  # nothing lost: the unit logs only when the count moves
        return Window(samples, busy, seconds, 0, 0.0)
    last = during[-1]
    return Window(samples, busy, round(last.at_s - base.at_s, 1), last.overruns - base.overruns,
                  round(last.dropped_s - base.dropped_s, 1))


def measure(sizes: list[int], busy: int, seconds: float) -> list[Window]:
    build_image(IMAGE_DIR)
    windows: list[Window] = []
    with tempfile.TemporaryDirectory(prefix="mic-overruns-") as work:
        vm = DeviceVM(IMAGE_DIR, Path(work), kvm=False)
        vm.start()
        try:
            vm.wait_agent(timeout=900)
            vm.wait_ready(timeout=900)
            for i, samples in enumerate(sizes):
                if i:
                    vm.sh(f"sed -i 's/frames_per_buffer=[A-Z_0-9]*/frames_per_buffer={samples}/'"
                          f" {SOURCES}", timeout=120)
                    old = vm.appliance_pid()
                    vm.sh("systemctl --user restart appliance.service", user=True, timeout=120)
                    vm.wait_ready(old_pid=old, timeout=900)
                for loops in (0, busy):
                    window = _window(vm, samples, loops, seconds)
                    print(json.dumps(window.row()), file=sys.stderr, flush=True)
                    windows.append(window)
        finally:
            vm.shutdown(timeout=60)
    return windows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", type=int, nargs="+", help="capture sizes in samples; the "
                        "first must be the image's own")
    parser.add_argument("--busy", type=int, default=2, help="busy loops on the host")
    parser.add_argument("--seconds", type=float, default=240)
    args = parser.parse_args()
    windows = measure(args.sizes, args.busy, args.seconds)
    print(json.dumps([w.row() for w in windows], indent=2))


if __name__ == "__main__":
    main()
