"""One simulated kiosk for `appliance bench fleet`: its own SQLite journal and device key,
taking sim turns, with the uplink following the journal in a thread. Driven by one command a
line on stdin (`fill N`, `uplink`, `turns SECONDS PER_S`, `drain`, `quit`); answers one JSON
line on stdout for each."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop
from appliance.fleet.join import join
from appliance.fleet.link import load_link
from appliance.fleet.uplink import Uplink
from appliance.scenes import bundled_scene
from appliance.settings import Settings
from appliance.wiring import build_planner, new_session, open_journal

LINES = ("untick urgent", "tick urgent", "type hello into message", "select doctor")


class SimKiosk:
    def __init__(self, folder: Path, url: str, token: str) -> None:
        if load_link() is None:
            join(url, token)
        self.journal = open_journal(str(folder / "journal.sqlite"))
        self.journal.change_setting("max_unconfirmed_per_minute", 600, by="bench")
        scene = Scene.model_validate(json.loads(bundled_scene().read_text()))
        self.session = new_session(self.journal, SimDesktop(scene),
                                   build_planner(Settings(llm="off")))
        link = load_link()
        assert link is not None
        self.uplink = Uplink(open_journal(str(folder / "journal.sqlite")), link,
                             folder / "fleet-uplink.json")
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.turns = 0

    def turn(self) -> None:
        self.session.say(LINES[self.turns % len(LINES)])
        self.turns += 1

    def fill(self, n: int) -> dict[str, Any]:
        for _ in range(n):
            self.turn()
        return self.where()

    def start_uplink(self) -> dict[str, Any]:
        self.thread = threading.Thread(target=self.uplink.run, args=(self.stop,), daemon=True)
        self.thread.start()
        return self.where()

    def turns_for(self, seconds: float, per_s: float) -> dict[str, Any]:
        start = time.monotonic()
        n = 0
        while time.monotonic() - start < seconds:
            self.turn()
            n += 1
            time.sleep(max(0.0, start + n / per_s - time.monotonic()))
        return self.where()

    def drain(self, timeout_s: float = 120.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        last = self.journal.recorder.max_notification_id() or 0
        while self.uplink.status.acknowledged < last and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.where()

    def where(self) -> dict[str, Any]:
        return {"turns": self.turns, "last": self.journal.recorder.max_notification_id() or 0,
                "acknowledged": self.uplink.status.acknowledged}


def main() -> None:
    folder, url, token = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    kiosk = SimKiosk(folder, url, token)
    print(json.dumps(kiosk.where()), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "fill":
            answer = kiosk.fill(int(words[1]))
        elif words[0] == "uplink":
            answer = kiosk.start_uplink()
        elif words[0] == "turns":
            answer = kiosk.turns_for(float(words[1]), float(words[2]))
        else:
            answer = kiosk.drain()
        print(json.dumps(answer), flush=True)
    kiosk.stop.set()


if __name__ == "__main__":
    main()
