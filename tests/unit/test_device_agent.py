"""The test image's agent (images/rootfs/test), run on the host over a real socket whose writes
come back short, as the guest's virtio port's do past its buffers."""

from __future__ import annotations

import importlib.util
import io
import json
import socket
import threading
from pathlib import Path
from types import ModuleType

AGENT = Path(__file__).parents[2] / "images/rootfs/test/usr/lib/appliance-test/agent.py"


def _agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("appliance_test_agent", AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _replies(host: socket.socket, count: int) -> list[dict[str, object]]:
    buffer = b""
    while buffer.count(b"\n") < count:
        chunk = host.recv(65536)
        assert chunk, "the agent closed the line"
        buffer += chunk
    return [json.loads(line) for line in buffer.splitlines()]


def test_a_reply_larger_than_the_channel_takes_arrives_whole_and_a_big_put_is_written(
        tmp_path: Path) -> None:
    host, guest = socket.socketpair()
    guest.setblocking(False)  # a write then takes what fits and says how much
    guest.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
    channel = io.FileIO(guest.fileno(), "r+", closefd=False)
    served = threading.Thread(target=_agent().serve, args=(channel, True), daemon=True)
    served.start()
    data = bytes(range(256)) * 16384  # 4 MiB: a put line of 8 MiB
    target = tmp_path / "put.bin"
    host.sendall(json.dumps({"id": 1, "put": str(target), "hex": data.hex()}).encode() + b"\n"
                 + json.dumps({"id": 2, "sh": "head -c 500000 /dev/zero | tr '\\0' a"}).encode()
                 + b"\n")
    put, printed = _replies(host, 2)
    host.shutdown(socket.SHUT_WR)
    served.join(timeout=60)
    assert not served.is_alive()
    assert put == {"id": 1, "rc": 0, "out": "", "err": ""}
    assert target.read_bytes() == data
    assert printed["id"] == 2 and printed["rc"] == 0 and printed["out"] == "a" * 500000
    host.close()
    guest.close()
