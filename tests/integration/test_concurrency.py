"""Processes sharing one journal (voice, switch, web, fleet uplink), on SQLite and PostgreSQL.

Real subprocesses: a process whose action is held in flight while another one starts, a kill -9
in the middle of an action, workers that ask, answer, decline and time out each other's
questions, and many processes opening one fresh PostgreSQL store at once.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

import appliance
from appliance.desktop.model import Action, ActionResult, Snapshot
from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.router import Router
from appliance.journal.application import Journal, JournalConflict
from appliance.journal.owners import LEASE, owner_alive, this_process
from appliance.journal.store import StoreError
from appliance.session import Session
from appliance.turn import Outcome, Phase, Turn
from tests.cli_runner import APPLIANCE, run
from tests.scenes import messages

REPO = Path(appliance.__file__).resolve().parents[1]  # the checkout under test, for children
DEADLINE_S = 60.0

# A process whose desktop holds the action in flight (after ActionStarted is on disk) until the
# test creates the gate file: a live owner, for as long as the test wants.
HELD = """
import json, sys, time
from pathlib import Path
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.router import Router
from appliance.journal.application import Journal
from appliance.session import Session

store, scene, gate, text = sys.argv[1:5]

class Held(SimDesktop):
    def perform(self, action):
        Path(gate + ".waiting").touch()
        while not Path(gate).exists():
            time.sleep(0.02)
        return super().perform(action)

journal = Journal(store)
desktop = Held.from_file(Path(scene))
report = Session(journal, desktop, Router(GrammarPlanner(), None)).say(text)
print(json.dumps(report.as_json()))
"""

# One of the workers sharing a journal: its own screen, the shared journal, a kiosk's loop of
# utterances. `engine` and `timings` mark each utterance's Heard event with who said it, and when.
WORKER = """
import json, sys, time
from pathlib import Path
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.router import Router
from appliance.journal.application import Journal
from appliance.journal.store import StoreError
from appliance.session import Session

store, scene, go, name, turns, skew, offset = sys.argv[1:8]
COMMANDS = ["click send", "yes", "tick urgent", "click send", "no", "untick urgent",
            "click send", "press play", "what is on the screen", "undo", "yes", "open radio"]
journal = Journal(store)
session = Session(
    journal,
    SimDesktop.from_file(Path(scene)),
    Router(GrammarPlanner(), None),
    clock=lambda: time.time() + float(skew),  # a skewed clock finds every question timed out
    device=name,
)
Path(f"{go}.{name}").touch()  # ready
while not Path(go).exists():
    time.sleep(0.005)
for i in range(int(turns)):
    text = COMMANDS[(i + int(offset)) % len(COMMANDS)]
    try:
        report = session.say(text, engine=name, timings={"utterance": float(i)})
    except StoreError as e:  # said, as a kiosk would, and on to the next utterance
        print(f"appliance: {e}", file=sys.stderr, flush=True)
        continue
    print(json.dumps({"i": i, "turn": report.turn_id, "decision": report.decision,
                      "notices": report.notices}), flush=True)
    if i % 5 == 4:
        session.expire_due()
"""

# Forks `count` children after the imports, so that a test pays for one interpreter start, and
# releases them together through a pipe; returns each child's exit code.
FORKED = """
import os, sys
from uuid import UUID
from appliance.journal.application import Journal


def released_together(count, child):
    read, write = os.pipe()
    children = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            os.close(write)
            os.read(read, 1)  # the gate: every child is forked and waiting
            os._exit(child())
        children.append(pid)
    os.close(read)
    os.write(write, bytes(count))
    return [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]


def said(e):
    print(f"{type(e).__name__}: {e}".splitlines()[0], flush=True)
"""

# Many processes opening one store at once. Prints each child's error, if any.
OPENERS = FORKED + """
url, count = sys.argv[1], int(sys.argv[2])


def opener():
    try:
        Journal(url)
    except BaseException as e:
        said(e)
        return 1
    return 0


failed = sum(1 for code in released_together(count, opener) if code)
print(f"{failed} of {count} failed", flush=True)
"""

# Processes pressing one switch (one Device aggregate) at once, or saying what they said for one
# turn (the voice layer's Spoke, once the audio is out).
PRESSERS = FORKED + """
store, count, presses, turn = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]


def presser():
    journal = Journal(store)
    failed = 0
    for _ in range(presses):
        try:
            if turn:
                journal.spoke(UUID(turn), "Okay.", {})
            else:
                journal.switch_pressed("switch", 1, "tap", "yes")
        except Exception as e:
            failed += 1
            said(e)
    return min(failed, 100)


failed = sum(released_together(count, presser))
print(f"{failed} of {count * presses} writes failed", flush=True)
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return env


def _python(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _say(store: str, scene: Path, text: str) -> subprocess.Popen[str]:
    """`appliance say` in a process of its own."""
    return subprocess.Popen(
        [str(APPLIANCE), "say", text, "--desktop", f"sim:{scene}", "--store", store, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _finished(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=DEADLINE_S)
    return proc.returncode, out, err


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not path.exists():
        assert proc.poll() is None, _finished(proc)
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def _start_together(go: Path, procs: list[subprocess.Popen[str]], names: list[str]) -> None:
    """Open the gate once every process is ready, so they really run at once."""
    for proc, name in zip(procs, names, strict=True):
        _wait_for(Path(f"{go}.{name}"), proc)
    go.touch()


def _events(store: str) -> list[dict[str, Any]]:
    result = run("audit", "--json", "--store", store)
    assert result.code == 0, result.err
    rows: list[dict[str, Any]] = result.json()
    return rows


def _intact(store: str) -> None:
    result = run("audit", "verify", "--store", store)
    assert result.code == 0 and "intact" in result.out, (result.out, result.err)


def test_a_live_action_elsewhere_is_left_alone_and_a_killed_one_marked_once(
    store: str, tmp_path: Path
) -> None:
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(messages()))
    gate = tmp_path / "gate"

    # 1. Another process is acting: a `say` here must not call its turn interrupted.
    held = _python(HELD, store, str(scene), str(gate), "untick urgent")
    _wait_for(Path(f"{gate}.waiting"), held)
    code, out, err = _finished(_say(store, scene, "what is on the screen"))
    assert (code, err) == (0, ""), err
    assert not any("interrupted" in n for n in json.loads(out)["notices"]), out
    gate.touch()
    code, out, err = _finished(held)
    assert (code, err) == (0, ""), err
    live = json.loads(out)
    assert live["decision"] == "executed", live  # its real outcome landed
    rows = [r for r in _events(store) if r["turn"] == live["turn_id"][:8]]
    assert [r["event"] for r in rows][-3:] == ["ActionSucceeded", "Spoke", "TurnEnded"]
    assert all(r["event"] != "Interrupted" for r in _events(store))

    # 2. kill -9 a process holding its action; three processes start at once: exactly one of
    # them marks the turn Interrupted and says so, the others neither fail nor repeat it.
    gate.unlink()
    Path(f"{gate}.waiting").unlink()
    killed = _python(HELD, store, str(scene), str(gate), "tick urgent")
    _wait_for(Path(f"{gate}.waiting"), killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    starts = [_say(store, scene, "what is on the screen") for _ in range(3)]
    results = [_finished(p) for p in starts]
    assert [(code, err) for code, _out, err in results] == [(0, "")] * 3, results
    told = [n for _c, out, _e in results for n in json.loads(out)["notices"]]
    assert len([n for n in told if "interrupted" in n and "Urgent" in n]) == 1, told
    marked = [r for r in _events(store) if r["event"] == "Interrupted"]
    assert len(marked) == 1, marked
    code, out, err = _finished(_say(store, scene, "what is selected"))
    assert code == 0 and not any("interrupted" in n for n in json.loads(out)["notices"])
    _intact(store)


def _heard(store: str) -> tuple[dict[tuple[str, int], list[str]], Counter[str], dict[str, Any]]:
    """Every Heard or Answered by (worker, utterance) -> the turns it is on; TurnStarted per
    worker; and the first Heard of every turn."""
    heard: dict[tuple[str, int], list[str]] = {}
    first: dict[str, Any] = {}
    started: Counter[str] = Counter()
    for _nid, e in Journal(store).domain_events():
        name = type(e).__qualname__
        if name == "Turn.TurnStarted":
            started[e.device] += 1
        elif name in ("Turn.Heard", "Turn.Answered") and "utterance" in e.timings:
            key = (e.engine, int(e.timings["utterance"]))
            heard.setdefault(key, []).append(e.originator_id.hex)
            first.setdefault(e.originator_id.hex, key)
    return heard, started, first


def test_workers_ask_answer_and_decline_each_others_questions(store: str, tmp_path: Path) -> None:
    workers, turns = 6, 25
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(messages()))
    go = tmp_path / "go"
    names = [f"worker{w}" for w in range(workers)]
    skews = ["0"] * (workers - 1) + ["120"]  # one clock ahead: it times questions out
    Journal(store)  # opening at once is the next test's; here the store exists
    procs = [
        _python(WORKER, store, str(scene), str(go), name, str(turns), skew, str(w))
        for w, (name, skew) in enumerate(zip(names, skews, strict=True))
    ]
    _start_together(go, procs, names)
    reports: dict[str, list[dict[str, Any]]] = {}
    errors: list[str] = []
    for name, proc in zip(names, procs, strict=True):
        code, out, err = _finished(proc)
        errors += [f"{name}: {line}" for line in err.splitlines()]
        if code:
            errors.append(f"{name}: exit {code}")
        reports[name] = [json.loads(line) for line in out.splitlines()]
    failed = workers * turns - sum(len(r) for r in reports.values())
    heard, started, first = _heard(store)
    recorded = {k: v for k, v in heard.items() if len(v) == 1}
    missing = [(n, r["i"]) for n, rs in reports.items() for r in rs if (n, r["i"]) not in heard]
    twice = {k: v for k, v in heard.items() if len(v) > 1}
    figures = f"{failed} of {workers * turns} turns failed, {len(missing)} reported but not stored"
    assert (errors, failed, missing, twice) == ([], 0, [], {}), (figures, errors[:4], twice)

    for name, rows in reports.items():
        for r in rows:  # each utterance is on the turn it reported
            assert recorded[(name, r["i"])] == [r["turn"]], (name, r)
        begun = [r for r in rows if first.get(r["turn"]) == (name, r["i"])]
        assert started[name] == len(begun), (name, started[name], len(begun))

    journal = Journal(store)
    now = time.time()
    for turn_id in first:
        turn = journal.turn(UUID(turn_id))
        waiting = turn.phase == Phase.awaiting_confirmation and turn.expires_at > now
        assert turn.phase == Phase.ended or waiting, (turn_id, turn.phase, turn.transcripts)
    decisions = Counter(r["decision"] for rs in reports.values() for r in rs)
    assert decisions["executed"] and decisions["needs_confirmation"], decisions
    _intact(store)


def test_processes_pressing_one_switch_count_every_press(store: str) -> None:
    Journal(store)
    code, out, err = _finished(_python(PRESSERS, store, "4", "15", ""))
    assert (code, err) == (0, ""), err
    assert out.splitlines()[-1] == "0 of 60 writes failed", out
    assert Journal(store).device("switch").presses == 60
    _intact(store)


def test_what_processes_said_for_one_turn_is_all_recorded(store: str) -> None:
    asked = _process(store).say("click send")
    code, out, err = _finished(_python(PRESSERS, store, "4", "15", asked.turn_id))
    assert (code, err) == (0, ""), err
    assert out.splitlines()[-1] == "0 of 60 writes failed", out
    assert Journal(store).turn(UUID(asked.turn_id)).spoken.count("Okay.") == 60
    _intact(store)


@pytest.mark.postgres
def test_many_processes_open_a_fresh_postgres_store_at_once(fresh_pg_url: str) -> None:
    code, out, err = _finished(_python(OPENERS, fresh_pg_url, "40"))
    assert (code, err) == (0, ""), err
    assert out.splitlines()[-1] == "0 of 40 failed", out
    _intact(fresh_pg_url)


# -- one race at a time, in-process: two journals on one store are two processes' views ----


class Meanwhile(SimDesktop):
    """A screen that lets another process act once: after this one has read the journal for
    an utterance and before it writes, which is where real processes interleave."""

    def __init__(self, scene: Scene, other: Callable[[], object]) -> None:
        super().__init__(scene)
        self.other: Callable[[], object] | None = other

    def snapshot(self) -> Snapshot:
        other, self.other = self.other, None
        if other is not None:
            other()
        return super().snapshot()


def _process(
    store: str,
    other: Callable[[], object] | None = None,
    skew: float = 0.0,
    screen: dict[str, Any] | None = None,
) -> Session:
    scene = Scene.model_validate(screen or messages())
    desktop = SimDesktop(scene) if other is None else Meanwhile(scene, other)
    return Session(
        Journal(store), desktop, Router(GrammarPlanner(), None), clock=lambda: time.time() + skew
    )


def _names(store: str, turn_id: str) -> list[str]:
    return [r["event"] for r in _events(store) if r["turn"] == turn_id[:8]]


def test_a_new_command_leaves_a_question_answered_elsewhere_meanwhile(store: str) -> None:
    first = _process(store)
    asked = first.say("click send")
    assert asked.decision == Outcome.needs_confirmation
    second = _process(store, other=lambda: first.say("yes"))
    report = second.say("tick urgent")  # read the question; meanwhile it was answered
    assert report.decision == Outcome.executed and report.turn_id != asked.turn_id
    events = _names(store, asked.turn_id)
    assert "Confirmed" in events and "Declined" not in events, events
    assert (
        events[-1] == "TurnEnded" and first.journal.turn(UUID(asked.turn_id)).outcome == "executed"
    )
    _intact(store)


def test_the_second_answer_to_one_question_is_not_taken_for_it(store: str) -> None:
    first = _process(store)
    asked = first.say("click send")
    second = _process(store, other=lambda: first.say("yes"))
    report = second.say("no")
    assert report.turn_id != asked.turn_id, "the question was answered already"
    assert report.spoken == "There's no question waiting for an answer."
    names = _names(store, asked.turn_id)
    assert (names.count("Heard"), names.count("Answered")) == (1, 1)  # the question, one yes
    assert first.journal.turn(UUID(asked.turn_id)).outcome == "executed"
    _intact(store)


def test_a_which_question_is_answered_once(store: str) -> None:
    screen = messages()
    contacts = screen["applications"][0]["windows"][0]["children"][7]["children"]
    contacts.append({"role": "list item", "name": "Radio 1"})
    first = _process(store, screen=screen)
    asked = first.say("select radio")
    assert asked.decision == Outcome.clarify
    second = _process(store, other=lambda: first.say("radio one"), screen=screen)
    report = second.say("the second one")
    assert report.turn_id != asked.turn_id, "the question was answered already"
    assert _names(store, asked.turn_id).count("Clarified") == 1
    assert first.journal.turn(UUID(asked.turn_id)).outcome == "executed"
    _intact(store)


def test_a_question_answered_elsewhere_is_not_timed_out_too(store: str) -> None:
    first = _process(store)
    asked = first.say("click send")
    late = _process(store, other=lambda: first.say("yes"), skew=3600.0)  # sees it overdue
    report = late.say("what is on the screen")
    assert not any("timed out" in n for n in report.notices), report.notices
    assert "ConfirmationTimedOut" not in _names(store, asked.turn_id)
    assert first.journal.turn(UUID(asked.turn_id)).outcome == "executed"
    _intact(store)


def _in_flight(store: str, owner: str) -> Turn:
    turn = Turn(trigger="text")
    turn.heard("tick urgent", "text", None, {})
    turn.planned({"intent": "toggle", "target": "Urgent", "state": True}, "grammar", "", 0.1)
    turn.validated("execute", "harmless", [])
    turn.start_action(0, {"kind": "activate", "target": "0.0.1"}, "Urgent", {}, owner)
    Journal(store).record(turn)
    return turn


def test_two_processes_find_one_dead_action_and_mark_it_once(store: str) -> None:
    rebooted = replace(this_process(), boot="a-boot-before-this-one")
    turn = _in_flight(store, str(rebooted))
    first, second = _process(store), _process(store)
    seen_by_second = second.journal.recent_turns()  # both read it in flight
    assert first.recover() == ["I was interrupted while doing Urgent. Please check it."]
    assert second.recover(seen_by_second) == []  # lost the race: nothing said, nothing lost
    assert _names(store, turn.id.hex).count("Interrupted") == 1
    _intact(store)


class Slow(SimDesktop):
    """A screen whose actions wait for `go` (the kiosk's voice thread, acting), or fail."""

    def __init__(self, scene: Scene, go: threading.Event, fail: bool = False) -> None:
        super().__init__(scene)
        self.go, self.fail, self.entered = go, fail, threading.Event()

    def perform(self, action: Action) -> ActionResult:
        self.entered.set()
        self.go.wait(DEADLINE_S)
        if self.fail:
            raise RuntimeError("the application crashed under us")
        return super().perform(action)


def test_an_action_under_way_in_another_thread_is_left_alone(store: str) -> None:
    go = threading.Event()
    desktop = Slow(Scene.model_validate(messages()), go)
    voice = Session(Journal(store), desktop, Router(GrammarPlanner(), None))
    reports: list[Any] = []
    thread = threading.Thread(target=lambda: reports.append(voice.say("untick urgent")))
    thread.start()
    assert desktop.entered.wait(DEADLINE_S)
    switch = _process(store)  # the switch thread's session, in the same process
    assert switch.say("what is on the screen").notices == []
    go.set()
    thread.join(DEADLINE_S)
    assert reports and reports[0].decision == Outcome.executed
    assert "Interrupted" not in _names(store, reports[0].turn_id)
    _intact(store)


def test_an_action_whose_session_failed_is_reported_by_the_next_one(store: str) -> None:
    go = threading.Event()
    go.set()
    desktop = Slow(Scene.model_validate(messages()), go, fail=True)
    crashed = Session(Journal(store), desktop, Router(GrammarPlanner(), None))
    with pytest.raises(RuntimeError):
        crashed.say("untick urgent")
    after = _process(store).say("what is on the screen")
    assert after.notices == ["I was interrupted while doing Urgent. Please check it."]
    _intact(store)


def test_two_questions_asked_at_once_leave_one_open(store: str) -> None:
    first = _process(store)
    second = _process(store, other=lambda: first.say("click send"))
    newest = second.say("click send")  # read no question; meanwhile the first process asked
    older = [t for t in Journal(store).recent_turns() if t.pending and t.id.hex != newest.turn_id]
    assert len(older) == 1, "two questions are open"
    answer = _process(store).say("yes")
    assert (answer.turn_id, answer.decision) == (newest.turn_id, Outcome.executed)
    replaced = Journal(store).turn(older[0].id)
    assert (replaced.phase, replaced.outcome) == (Phase.ended, Outcome.cancelled)
    assert Journal(store).open_questions() == []
    _intact(store)


def test_a_process_is_alive_only_while_its_pid_holds_the_same_process() -> None:
    here = this_process()
    started = datetime.now(UTC)
    assert owner_alive(str(here), started)
    child = subprocess.Popen(["true"])
    while _state(child.pid) not in ("Z", ""):  # exited, not yet reaped: dead
        time.sleep(0.01)
    assert not owner_alive(str(replace(here, pid=child.pid)), started)
    child.wait()
    assert not owner_alive(str(replace(here, pid=child.pid)), started)  # gone
    assert not owner_alive(str(replace(here, started="1")), started)  # our PID, reused
    assert not owner_alive(str(replace(here, boot="an-earlier-boot")), started)


def test_an_owner_out_of_sight_counts_as_alive_for_the_lease() -> None:
    elsewhere = str(replace(this_process(), host="another-kiosk"))
    started = datetime.now(UTC)
    assert owner_alive(elsewhere, started)
    assert owner_alive(elsewhere, started, now=started + LEASE - timedelta(seconds=1))
    assert not owner_alive(elsewhere, started, now=started + LEASE)
    for unknown in ("", "not an owner"):  # stored before owners were recorded
        assert owner_alive(unknown, started)
        assert not owner_alive(unknown, started, now=started + LEASE)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def test_an_action_stored_before_owners_loads_and_is_left_for_the_lease(tmp_path: Path) -> None:
    store = str(tmp_path / "journal.sqlite")
    turn = _in_flight(store, "")
    with sqlite3.connect(store) as conn:  # the event as an older version stored it
        (state,) = conn.execute(
            "SELECT state FROM stored_events WHERE topic LIKE '%ActionStarted'"
        ).fetchone()
        data = json.loads(state)
        del data["owner"]
        conn.execute(
            "UPDATE stored_events SET state = ? WHERE topic LIKE '%ActionStarted'",
            (json.dumps(data).encode(),),
        )
    loaded = Journal(store).turn(turn.id)
    assert loaded.in_flight and loaded.steps[-1].owner == ""
    assert _process(store).recover() == []  # began just now: its process may be running


def test_a_chain_row_collision_is_a_store_failure_not_a_race(tmp_path: Path) -> None:
    """A deleted last event row makes SQLite reuse its rowid, which the chain table still has:
    that is damage for the caller to hear about, never a race to retry."""
    store = str(tmp_path / "journal.sqlite")
    journal = Journal(store)
    _process(store).say("tick urgent")
    with sqlite3.connect(store) as conn:
        conn.execute(
            "DELETE FROM stored_events WHERE rowid = (SELECT max(rowid) FROM stored_events)"
        )
    turn = Turn(trigger="text")
    turn.heard("hello", "text", None, {})
    try:
        journal.record(turn)
    except JournalConflict as e:
        pytest.fail(f"taken for a version conflict: {e}")
    except StoreError:
        pass  # reported as the store's failure (a chain that continues past the break is fine)


def test_a_forked_child_owns_its_actions_itself() -> None:
    parent = this_process()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report who it is, then leave without running pytest's exit
        os.write(write, str(this_process()).encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 1000).decode()
    os.waitpid(pid, 0)
    os.close(read)
    assert child == str(replace(parent, pid=pid, started=child.rsplit("/", 1)[1]))
