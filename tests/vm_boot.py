"""Boot the throwaway QEMU guest of scripts/build-vm.sh and collect its RESULT line.

This kernel has no uinput or /dev/input; the guest's kernel has both. `guest` picks the script
the guest runs (tests/vm/guest_NAME.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "scripts" / "build-vm.sh"


def boot_guest(guest: str, timeout: float = 300) -> dict[str, Any]:
    """Build (or reuse) the initramfs, boot it under TCG, return the guest's last RESULT json."""
    assert shutil.which("qemu-system-x86_64"), "qemu-system-x86 missing: run scripts/setup.sh"
    cache = subprocess.run(["bash", str(BUILD)], check=True, capture_output=True, text=True,
                           timeout=600).stdout.strip().splitlines()[-1]
    vm = Path(cache)
    run = subprocess.run(
        ["qemu-system-x86_64", "-machine", "q35,accel=tcg", "-m", "512", "-nographic",
         "-no-reboot", "-net", "none", "-kernel", str(vm / "kernel" / "vmlinuz"),
         "-initrd", str(vm / "initrd.gz"),
         "-append", f"console=ttyS0 quiet panic=-1 rdinit=/init guest={guest}"],
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"guest printed no result:\n{run.stdout[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    return result
