"""What a batch's signature costs, CPU only, on made batches of mean-sized events: the kiosk's
digest and signature, the central's digest and verification, and validating the batch at the
boundary. JSON lines on stdout. `--parse-only` times the validation alone, so it can be run with
an older `appliance` on PYTHONPATH (its wire model has no signature) by this file's path:

    PYTHONPATH=OLD_TREE .venv/bin/python lab/appliance_lab/bench/fleet_signing.py --parse-only
"""

from __future__ import annotations

import base64
import json
import os
import sys
import timeit
from collections.abc import Callable
from typing import Any

from appliance.fleet.wire import Batch, WireEvent

SIZES = (1, 9, 500)
"""Events in a batch: one, a turn's, a catch-up's."""
STATE_BYTES = 480
"""About the mean stored event (660 bytes a row, most of it the state)."""
KEYS = [(1, "0123456789abcdef")]


def best_us(run: Callable[[], Any], events: int) -> float:
    """Best of 5 repeats, µs a call."""
    reps = 2000 if events < 100 else 50
    return round(min(timeit.repeat(run, number=reps, repeat=5)) / reps * 1e6, 1)


def events_of(n: int) -> list[WireEvent]:
    state = base64.b64encode(os.urandom(STATE_BYTES)).decode()
    return [WireEvent(id=i, originator_id="ab" * 16, originator_version=i,
                      topic="appliance.turn:Turn.Heard", state=state, digest="cd" * 32,
                      link="ef" * 32) for i in range(1, n + 1)]


def parse_us(events: list[WireEvent]) -> float:
    fields: dict[str, Any] = {"epoch": "12" * 16, "after": 0, "events": events, "keys": KEYS,
                              "previous": "0" * 64, "signature": "A" * 86 + "=="}
    payload = Batch(**{k: v for k, v in fields.items() if k in Batch.model_fields})
    text = payload.model_dump_json()
    return best_us(lambda: Batch.model_validate_json(text), len(events))


def signing_us(events: list[WireEvent]) -> dict[str, float]:
    from appliance.fleet.signing import (
        events_digest,
        new_private_key,
        public_key,
        sign,
        signed_text,
        verifies,
    )

    private = new_private_key()
    public = base64.b64decode(public_key(private))
    n = len(events)

    def text() -> bytes:
        return signed_text("room-1", "12" * 16, 0, "0" * 64, (n, "ef" * 32),
                           events_digest(events, KEYS))

    signature = sign(private, text())

    def kiosk() -> None:
        sign(private, text())

    def central() -> None:
        assert verifies(public, text(), signature)

    return {"kiosk_sign_us": best_us(kiosk, n), "central_check_us": best_us(central, n)}


def main() -> None:
    parse_only = "--parse-only" in sys.argv[1:]
    for n in SIZES:
        events = events_of(n)
        row: dict[str, Any] = {"events": n, "parse_batch_us": parse_us(events)}
        if not parse_only:
            row.update(signing_us(events))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
