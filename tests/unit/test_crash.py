"""Write-ahead: kill -9 while a sim action blocks, restart, and find the turn Interrupted."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.cli_runner import APPLIANCE, Kiosk, run
from tests.scenes import messages


def _actions_started(store: Path) -> int:
    try:
        with sqlite3.connect(store) as conn:
            rows = conn.execute(
                "SELECT count(*) FROM stored_events WHERE topic LIKE '%Turn.ActionStarted'"
            ).fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(rows[0])


def test_kill_during_action_then_restart_reports_interrupted(tmp_path: Path) -> None:
    scene = messages()
    scene["applications"][0]["windows"][0]["children"].append(
        {"role": "push button", "name": "Slow", "delay": 60}
    )
    kiosk = Kiosk(tmp_path, scene)
    assert kiosk.say("tick urgent")["decision"] == "executed"
    started_before = _actions_started(Path(kiosk.store))

    proc = subprocess.Popen(
        [
            str(APPLIANCE),
            "say",
            "press slow",
            "--desktop",
            f"sim:{kiosk.scene}",
            "--store",
            kiosk.store,
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while _actions_started(Path(kiosk.store)) == started_before:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "ActionStarted never reached the journal"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    after = kiosk.say("what is on the screen")
    assert any("interrupted" in n and "Slow" in n for n in after["notices"]), after
    timeline = run("audit", "--json", "--store", kiosk.store).json()
    events = [r["event"] for r in timeline]
    assert "Interrupted" in events
    assert events.count("TurnStarted") == 3, "nothing lost: the turn before the crash is intact"
    assert run("audit", "verify", "--store", kiosk.store).code == 0
    assert json.loads(kiosk.scene.read_text())  # the scene file is intact too
    again = kiosk.say("what is selected")
    assert not any("interrupted" in n for n in again["notices"]), "reported once"
