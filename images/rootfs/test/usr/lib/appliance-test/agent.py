"""Test image only: run the shell commands the booted-VM test sends, one JSON line each way.

Request: {"id": 1, "sh": "systemctl is-active ...", "timeout": 30, "user": false}.
Reply: {"id": 1, "rc": 0, "out": "...", "err": "..."}. With "user": true the command runs as
the appliance user inside its session (systemctl --user, busctl --user and the AT-SPI bus).
{"id": 2, "put": "/tmp/x.wav", "hex": "..."} writes a file (a command line holds 128 KiB at most).
"""

import io
import json
import os
import pwd
import select
import subprocess
import sys
import time


def user_env() -> dict[str, str]:
    uid = pwd.getpwnam("appliance").pw_uid
    runtime = f"/run/user/{uid}"
    return {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/var/lib/appliance",
        "XDG_RUNTIME_DIR": runtime, "DBUS_SESSION_BUS_ADDRESS": f"unix:path={runtime}/bus",
        "APPLIANCE_HANDOFF_DIR": "/run/appliance",
    }


def run(request: dict) -> dict:
    try:
        if "put" in request:
            with open(request["put"], "wb") as out:
                out.write(bytes.fromhex(request["hex"]))
            os.chmod(request["put"], 0o644)
            return {"rc": 0, "out": "", "err": ""}
        return shell(request)
    except Exception as e:  # the agent answers every request, whatever went wrong
        return {"rc": -1, "out": "", "err": f"{type(e).__name__}: {e}"}


def shell(request: dict) -> dict:
    command = ["/bin/bash", "-c", request["sh"]]
    env = dict(os.environ)
    if request.get("user"):
        command = ["runuser", "-u", "appliance", "--", *command]
        env = user_env()
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env,
                              timeout=request.get("timeout", 60), stdin=subprocess.DEVNULL)
        return {"rc": done.returncode, "out": done.stdout, "err": done.stderr}
    except subprocess.TimeoutExpired as e:
        return {"rc": -1, "out": str(e.stdout or ""), "err": f"timed out after {e.timeout} s"}


def send(channel: io.RawIOBase, data: bytes) -> None:
    """Write all of `data`: a virtio port takes what fits in its buffers (about 32 KB) a write."""
    view = memoryview(data)
    while view:
        written = channel.write(view)
        if not written:  # a full non-blocking channel
            select.select([], [channel], [])
            continue
        view = view[written:]


def serve(channel: io.RawIOBase, until_closed: bool = False) -> None:
    """Answer each request line on `channel`; at its end, wait for a host (a virtio port reads
    nothing until one connects) or, `until_closed`, return."""
    buffer, scanned = bytearray(), 0
    while True:
        chunk = channel.read(65536)
        if chunk is None:  # a non-blocking channel with nothing yet
            select.select([channel], [], [])
            continue
        if not chunk:
            if until_closed:
                return
            time.sleep(0.1)
            continue
        buffer += chunk
        # Only the new bytes are searched for the line's end: a put of megabytes arrives in
        # thousands of reads.
        while (end := buffer.find(b"\n", scanned)) >= 0:
            line = bytes(buffer[:end])
            del buffer[:end + 1]
            scanned = 0
            if line.strip():
                request = json.loads(line)
                send(channel, json.dumps({"id": request.get("id"), **run(request)}).encode()
                     + b"\n")
        scanned = len(buffer)


def main(port: str) -> None:
    with open(port, "r+b", buffering=0) as channel:
        send(channel, b'{"id": 0, "ready": true}\n')
        serve(channel)


if __name__ == "__main__":
    main(sys.argv[1])
