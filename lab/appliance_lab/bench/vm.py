"""The amd64 device image booted under QEMU, and a line to its test agent (images/rootfs/test).

Used by `appliance bench boot` and tests/vm/test_device_vm.py: both boot what `make image-test`
builds, on a copy-on-write overlay, so the built image is never changed by a run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance_lab import REPO

BUILD = REPO / "images" / "build.sh"
KERNEL_ARGS = "root=LABEL=appliance-root rw console=ttyS0 quiet systemd.show_status=0 panic=-1"
STORE = "/var/lib/appliance/journal.sqlite"  # where the device's units keep the journal
APP_STATE = "/run/appliance/app-state.json"  # the GTK test application's own record


class VMError(Exception):
    """The image could not be built or booted, or its agent did not answer."""


@dataclass(frozen=True)
class Shell:
    rc: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.rc == 0


def kvm_usable(kernel: Path, wait_s: float = 15) -> bool:
    """Whether this kernel starts under KVM here: /dev/kvm can open and still not run a Debian
    kernel (seen on nested hosts), so the kernel must print its banner on the console."""
    if os.environ.get("APPLIANCE_VM_ACCEL") in ("kvm", "tcg"):
        return os.environ["APPLIANCE_VM_ACCEL"] == "kvm"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    try:
        probe = subprocess.run(
            ["qemu-system-x86_64", "-machine", "q35,accel=kvm", "-cpu", "max", "-m", "256",
             "-display", "none", "-nodefaults", "-no-user-config", "-serial", "stdio",
             "-no-reboot", "-kernel", str(kernel), "-append", "console=ttyS0 panic=-1"],
            capture_output=True, timeout=wait_s, stdin=subprocess.DEVNULL)
        return b"Linux version" in probe.stdout
    except subprocess.TimeoutExpired as e:
        return b"Linux version" in (e.stdout or b"")


def build_image(out: Path, target: str = "amd64-test") -> Path:
    """images/build.sh into `out` (its base layer is cached between builds)."""
    if not BUILD.is_file():
        raise VMError("images/build.sh is not here: run this from a checkout of the project")
    done = subprocess.run(["bash", str(BUILD), target, str(out)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise VMError(f"the image build failed: {done.stderr.strip().splitlines()[-1:]}")
    return out


class DeviceVM:
    """One QEMU guest of a built image: boot, talk to its agent, kill it hard, boot again."""

    def __init__(self, image: Path, work: Path, memory_mb: int = 3072,
                 kvm: bool | None = None) -> None:
        self.image, self.work = image, work
        self.memory_mb = memory_mb
        self.kvm = kvm_usable(image / "vmlinuz") if kvm is None else kvm
        self.overlay = work / "overlay.qcow2"
        self.console = work / "console.log"
        self.socket_path = work / "agent.sock"
        self.process: subprocess.Popen[bytes] | None = None
        self._agent: socket.socket | None = None
        self._buffer = b""
        self._next_id = 1
        self.powered_on = 0.0  # time.monotonic() when QEMU started

    @property
    def accel(self) -> str:
        return "kvm" if self.kvm else "tcg"

    def start(self) -> None:
        """Power on; the overlay keeps what the guest wrote since the first start."""
        if not shutil.which("qemu-system-x86_64"):
            raise VMError("qemu-system-x86_64 missing: run scripts/setup.sh")
        self.work.mkdir(parents=True, exist_ok=True)
        if not self.overlay.exists():
            subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b",
                            str(self.image / "disk.img"), str(self.overlay)], check=True)
        self.socket_path.unlink(missing_ok=True)
        cpu = ["-cpu", "max"]
        command = [
            "qemu-system-x86_64", "-machine", f"q35,accel={self.accel}", *cpu,
            "-smp", "2", "-m", str(self.memory_mb), "-nodefaults", "-no-user-config",
            "-display", "none", "-device", "virtio-gpu-pci", "-nic", "none",
            "-kernel", str(self.image / "vmlinuz"), "-initrd", str(self.image / "initrd.img"),
            "-append", KERNEL_ARGS,
            "-drive", f"file={self.overlay},if=virtio,format=qcow2,cache=writeback",
            "-chardev", f"socket,id=agent,path={self.socket_path},server=on,wait=off",
            "-device", "virtio-serial", "-device", "virtserialport,chardev=agent,name=agent",
            "-serial", f"file:{self.console}", "-monitor", "none", "-no-reboot",
        ]
        self.powered_on = time.monotonic()
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def wait_agent(self, timeout: float = 600) -> float:
        """Seconds from power-on until the guest's agent answers."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_running()
            try:
                conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                conn.connect(str(self.socket_path))
            except OSError:
                time.sleep(0.2)
                continue
            self._agent, self._buffer = conn, b""
            try:
                conn.settimeout(max(1.0, deadline - time.monotonic()))
                if self._line().get("ready"):
                    conn.settimeout(None)
                    return time.monotonic() - self.powered_on
            except (OSError, ValueError):
                pass
            conn.close()
            self._agent = None
            time.sleep(0.5)
        raise VMError(f"the guest's agent did not answer in {timeout:.0f} s; "
                      f"console: {self.console_tail()}")

    def sh(self, command: str, user: bool = False, timeout: float = 60) -> Shell:
        """Run a shell command in the guest (as root, or as the kiosk user in its session)."""
        return self._request({"sh": command, "user": user, "timeout": timeout}, timeout)

    def _request(self, request: dict[str, Any], timeout: float) -> Shell:
        if self._agent is None:
            raise VMError("the guest's agent is not connected")
        request_id = self._next_id
        self._next_id += 1
        self._agent.settimeout(timeout + 30)
        self._agent.sendall(json.dumps({"id": request_id, **request}).encode() + b"\n")
        while True:
            reply = self._line()
            if reply.get("id") == request_id:
                return Shell(int(reply["rc"]), str(reply["out"]), str(reply["err"]))

    def wait_for(self, command: str, timeout: float, user: bool = False,
                 every: float = 0.5) -> Shell:
        """Run `command` until it succeeds; the last result, ok or not, after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.sh(command, user=user, timeout=max(5.0, every * 4))
            if result.ok or time.monotonic() > deadline:
                return result
            time.sleep(every)

    def _line(self) -> dict[str, Any]:
        assert self._agent is not None
        while b"\n" not in self._buffer:
            chunk = self._agent.recv(65536)
            if not chunk:
                raise VMError("the guest's agent closed the line")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        parsed: dict[str, Any] = json.loads(line)
        return parsed

    def _check_running(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            err = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
            raise VMError(f"QEMU exited ({self.process.returncode}): {err.strip()[-500:]}")

    def console_tail(self, chars: int = 3000) -> str:
        try:
            return self.console.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def power_off_hard(self) -> None:
        """Pull the plug: QEMU killed, nothing flushed by the guest."""
        if self._agent is not None:
            self._agent.close()
            self._agent = None
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)
        self.process = None

    def shutdown(self, timeout: float = 120) -> None:
        """A clean power-off from inside, else the plug."""
        if self.process is None:
            return
        try:
            if self._agent is not None:
                self._agent.sendall(json.dumps(
                    {"id": 0, "sh": "systemctl poweroff", "timeout": 5}).encode() + b"\n")
            self.process.wait(timeout=timeout)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.power_off_hard()

    # -- the appliance inside ----------------------------------------------------------------

    def put(self, path: str, data: bytes) -> None:
        """Write a file in the guest (readable by all)."""
        pushed = self._request({"put": path, "hex": data.hex()}, 60)
        if not pushed.ok:
            raise VMError(f"could not copy {path} into the guest: {pushed.err.strip()}")

    def say(self, words: str | bytes, name: str) -> float:
        """Say `words` into the guest's microphone (Piper's voice here, or PCM16 at 16 kHz
        already spoken; aplay into ALSA's loopback there); returns the guest's monotonic clock
        when the audio ended."""
        from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, write_wav
        from appliance.voice.commands import speech_pcm

        wav = self.work / f"{name}.wav"
        gap = bytes(PIPELINE_RATE // 5 * 2)  # 0.2 s of silence either side, as a person pauses
        spoken = speech_pcm(words) if isinstance(words, str) else words
        write_wav(wav, Pcm(gap + spoken + gap, PIPELINE_RATE))
        self.put(f"/tmp/{name}.wav", wav.read_bytes())
        played = self.sh(f"aplay -q -D plughw:Loopback,1,0 /tmp/{name}.wav", timeout=60)
        if not played.ok:
            raise VMError(f"aplay failed in the guest: {played.err.strip()}")
        return self.monotonic()

    def say_until(self, words: str | bytes, name: str, done: Callable[[], bool], tries: int = 3,
                  wait_s: float = 120, answered_s: float = 120, every_s: float = 5) -> bool:
        """Say it again, as a person would, while it is not done: the first time may fall while
        the appliance is still saying "Ready." (its microphone is muted while it speaks). A
        saying the appliance has finished hearing gets `answered_s` more to be done; one still
        being heard gets all of `wait_s` (Whisper takes minutes under software emulation)."""
        for attempt in range(tries):
            before = self.segments_heard()
            self.say(words, f"{name}-{attempt}")
            deadline = time.monotonic() + wait_s
            answered = False
            while time.monotonic() < deadline:
                if done():
                    return True
                if not answered and self.segments_heard() > before:
                    answered = True
                    deadline = min(deadline, time.monotonic() + answered_s)
                time.sleep(every_s)
        return done()

    def segments_heard(self) -> int:
        """Segments the appliance finished hearing this boot: the voice layer logs one line for
        each, whatever it was taken for (APPLIANCE_LOG=info in the image's unit)."""
        shown = self.sh("journalctl --no-pager -b -o cat _UID=$(id -u appliance) "
                        "| grep -c '^appliance.voice.pipeline.gate: heard '", timeout=60)
        return int(shown.out.strip() or 0)

    def monotonic(self) -> float:
        """The guest's CLOCK_MONOTONIC, the clock systemd's *TimestampMonotonic use."""
        shown = self.sh("python3 -c 'import time; print(time.monotonic())'")
        return float(shown.out)

    def unit_time(self, unit: str, prop: str = "ActiveEnterTimestampMonotonic",
                  user: bool = False) -> float:
        """A unit's timestamp on the guest's monotonic clock, in seconds (0: never)."""
        scope = "--user " if user else ""
        shown = self.sh(f"systemctl {scope}show -p {prop} --value {unit}", user=user)
        return int(shown.out.strip() or 0) / 1e6

    def appliance_pid(self) -> int:
        shown = self.sh("systemctl --user show -p MainPID --value appliance.service", user=True)
        return int(shown.out.strip() or 0)

    def wait_ready(self, old_pid: int = 0, timeout: float = 300) -> int:
        """The appliance's user unit active (Type=notify: it sent READY) under a new PID."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            active = self.sh("systemctl --user is-active appliance.service", user=True)
            pid = self.appliance_pid()
            if active.out.strip() == "active" and pid and pid != old_pid:
                return pid
            time.sleep(0.3)
        log = self.sh("journalctl --no-pager -n 60 _UID=$(id -u appliance); "
                      "journalctl --no-pager -n 30 -u appliance-kiosk", timeout=30)
        raise VMError(f"the appliance was not READY in {timeout:.0f} s:\n{log.out[-4000:]}")

    def app_state(self) -> dict[str, Any]:
        shown = self.sh(f"cat {APP_STATE}")
        if not shown.ok or not shown.out.strip():
            return {}
        state: dict[str, Any] = json.loads(shown.out)
        return state

    def journal_py(self, code: str, timeout: float = 60) -> Shell:
        """Python with the appliance's package, as the kiosk user, `journal` opened."""
        script = ("import json\nfrom appliance.journal.application import Journal\n"
                  f"journal = Journal({STORE!r}, create=False)\n{code}\n")
        return self.sh(f"/opt/appliance/bin/python - <<'EOF'\n{script}EOF", user=True,
                       timeout=timeout)
