"""`appliance bench boot`: the device image under QEMU, from power-on to the first command.

Times on the guest's own monotonic clock (systemd's unit timestamps), so the host's load while
QEMU starts does not blur them: kiosk session up, appliance READY, a spoken command acted on,
and the restart after kill -9. The image's size is reported as built and as allocated.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from appliance_lab import REPO
from appliance_lab.bench.vm import DeviceVM, build_image

IMAGE_DIR = REPO / ".cache" / "image-test"


def bench_boot(progress: Callable[[str], None], image_dir: Path = IMAGE_DIR) -> dict[str, Any]:
    started = time.monotonic()
    progress(f"building the amd64 test image in {image_dir} (cached base layer)")
    build_image(image_dir)
    build_s = time.monotonic() - started
    disk = image_dir / "disk.img"
    with tempfile.TemporaryDirectory(prefix="bench-boot-") as work:
        vm = DeviceVM(image_dir, Path(work))
        progress(f"booting under QEMU ({vm.accel})")
        vm.start()
        try:
            agent_s = vm.wait_agent(timeout=900)
            pid = vm.wait_ready(timeout=600)
            report: dict[str, Any] = {"accel": vm.accel, "image_build_s": round(build_s, 1)}
            report["image"] = {
                "disk_bytes": disk.stat().st_size,
                "allocated_bytes": disk.stat().st_blocks * 512,
            }
            report["boot"] = _boot_times(vm, agent_s)
            progress("first spoken command")
            report["first_command"] = _first_command(vm)
            progress("kill -9 and restart")
            report["restart_after_kill_9"] = _restart(vm, pid)
            report["appliance_peak_rss_mb"] = _peak_rss_mb(vm)
        finally:
            vm.shutdown(timeout=60)
    return report


def _boot_times(vm: DeviceVM, agent_s: float) -> dict[str, float]:
    """Seconds from the guest kernel's start (monotonic 0) to each stage."""
    session = vm.unit_time("appliance-kiosk.service")
    user_manager = vm.unit_time("graphical-session.target", user=True)
    ready = vm.unit_time("appliance.service", user=True)
    web = vm.unit_time("appliance-web.service")
    return {
        "power_on_to_agent_host_s": round(agent_s, 2),
        "kiosk_session_started_s": round(session, 2),
        "graphical_session_s": round(user_manager, 2),
        "appliance_ready_s": round(ready, 2),
        "ready_after_session_s": round(ready - session, 2),
        "web_ready_s": round(web, 2),
    }


def _first_command(vm: DeviceVM) -> dict[str, Any]:
    """"tick urgent" said once READY, again (as a person would) while not done: end of the last
    saying to the app's check box ticked; what the appliance's log said of each hearing."""
    before = vm.app_state().get("urgent")
    said_at: list[float] = []

    def ticked() -> bool:
        return vm.app_state().get("urgent") is True

    # The first saying may fall while "Ready." is spoken (the microphone is muted then), and
    # Whisper under software emulation takes minutes: three tries, five minutes each.
    for attempt in range(3):
        said_at.append(vm.say("hey juniper, tick urgent", f"bench-tick-{attempt}"))
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not ticked():
            time.sleep(0.2)
        if ticked():
            break
    done = vm.monotonic()
    heard = vm.sh("journalctl --no-pager -b _UID=$(id -u appliance) "
                  "| grep -E 'gate: heard|heard: '")
    return {"acted": ticked() and before is not True, "sayings": len(said_at),
            "end_of_audio_to_done_s": round(done - said_at[-1], 2),
            "first_command_possible_s": round(vm.unit_time("appliance.service", user=True), 2),
            "log": [line.split(": ", 1)[-1] for line in heard.out.strip().splitlines()][-6:]}


def _restart(vm: DeviceVM, pid: int) -> dict[str, float]:
    killed = vm.monotonic()
    vm.sh(f"kill -9 {pid}")
    vm.wait_ready(old_pid=pid, timeout=300)
    started = vm.unit_time("appliance.service", "ExecMainStartTimestampMonotonic", user=True)
    ready = vm.unit_time("appliance.service", user=True)
    return {"kill_to_new_process_s": round(started - killed, 2),
            "kill_to_ready_s": round(ready - killed, 2)}


def _peak_rss_mb(vm: DeviceVM) -> float:
    shown = vm.sh(f"grep VmHWM /proc/{vm.appliance_pid()}/status")
    parts = shown.out.split()
    return round(int(parts[1]) / 1024, 1) if len(parts) >= 2 else 0.0
