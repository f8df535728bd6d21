"""A journal file damaged past serving (SQLite: "database disk image is malformed"): the person is
still served, the file is set aside read-only, a fresh journal names it, and what is left of the
old one can still be read (docs/journal.md, "A damaged journal file").

Real SQLite files, damaged as a bad SD card or a cut copy leaves them, and real `appliance`
processes: a crash must show as a traceback or exit 70, never be hidden.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import stat
import subprocess
import time
from contextlib import closing
from pathlib import Path
from typing import Any, cast

import pytest
from eventsourcing.persistence import StoredEvent

from appliance.fleet.central_store import _counts
from appliance.fleet.wire import WireEvent
from appliance.journal.aggregates import EPOCH_ID, JournalEpoch
from appliance.journal.application import Journal
from appliance.journal.chain import CHAIN_TABLE, oid_text
from appliance.journal.serving import open_writer
from appliance.kiosk import Kiosk as KioskApp
from appliance.session_sink import SessionSink
from appliance.settings import Settings
from appliance.voice.sink import Utterance
from appliance.web.health import Check
from appliance.web.health import checks as health_checks
from appliance.wiring import build_planner, opened_desktop
from tests.cli_runner import APPLIANCE, Kiosk
from tests.integration.test_fleet import Central, central  # noqa: F401 (a fixture)
from tests.integration.test_fleet import Kiosk as FleetKiosk
from tests.integration.test_journal import executed_turn
from tests.recording_panel import RecordingPanel
from tests.scenes import messages

TURNS = 60
LOOK = "what is on the screen"


def appliance(*args: str) -> subprocess.CompletedProcess[str]:
    """A real `appliance` process: a crash shows as exit 70 or a traceback, never hidden."""
    return subprocess.run(
        [str(APPLIANCE), *args], capture_output=True, text=True, timeout=120, check=False
    )


def checkpoint(path: Path) -> None:
    """Everything into the main file, and no -wal or -shm left beside it."""
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("PRAGMA journal_mode=WAL")


def damaged_journal(tmp_path: Path) -> tuple[Kiosk, Path, str]:
    """A sim kiosk whose journal holds TURNS turns, checkpointed whole into the file; and the
    head as `audit verify` printed it."""
    kiosk = Kiosk(tmp_path, messages())
    path = Path(kiosk.store)
    journal = Journal(kiosk.store)
    for i in range(TURNS):
        executed_turn(journal, f"text {i}")
    head = str(journal.head())
    journal.close()
    checkpoint(path)
    return kiosk, path, head


def pages(path: Path, table: str = "stored_events") -> list[int]:
    """The table's leaf pages, in the b-tree's order (the last holds the newest events)."""
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute(
            "SELECT pageno FROM dbstat WHERE name=? AND pagetype='leaf' ORDER BY path", (table,)
        ).fetchall()
    return [int(r[0]) for r in rows]


def flip_32_bytes(path: Path, page: int) -> None:
    """32 bytes of one page flipped, as a bad sector leaves them: here its header and first
    cell pointers, so that SQLite finds the page malformed rather than one value changed."""
    with closing(sqlite3.connect(path)) as conn:
        size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    with path.open("r+b") as f:
        f.seek((page - 1) * size)
        data = f.read(32)
        f.seek((page - 1) * size)
        f.write(bytes(b ^ 0xFF for b in data))


def cut_to_half(path: Path, within_a_page: bool = False) -> None:
    """Cut where a page begins (a file's length is whole pages, but how many varies from run
    to run), or 1000 bytes into that page, which leaves a row ending in zeros."""
    data = path.read_bytes()
    half = len(data) // 2 // 4096 * 4096
    path.write_bytes(data[: half + (1000 if within_a_page else 0)])


def say(kiosk: Kiosk, words: str = LOOK) -> subprocess.CompletedProcess[str]:
    return appliance("say", words, "--desktop", f"sim:{kiosk.scene}", "--store", kiosk.store)


def set_aside(path: Path) -> Path:
    (found,) = [
        p for p in path.parent.glob(f"{path.name}.damaged-*")
        if not p.name.endswith(("-wal", "-shm"))
    ]
    return found


def events(store: Path) -> list[Any]:
    return [e for _nid, e in Journal(str(store), create=False).domain_events()]


def assert_served_and_set_aside(kiosk: Kiosk, path: Path, head: str, *damage: str) -> Path:
    """The turn is served, the damage said once, the file set aside read-only, and the new
    journal's first event names the old file, its head and the damage."""
    first = say(kiosk)
    assert first.returncode == 0, first.stderr
    assert "Traceback" not in first.stderr, first.stderr
    assert first.stdout.startswith("Messages is open."), first.stdout
    told = [line for line in first.stderr.splitlines() if "set it aside" in line]
    assert len(told) == 1 and "malformed" in told[0], first.stderr
    moved = set_aside(path)
    assert moved.name in told[0]
    assert stat.S_IMODE(moved.stat().st_mode) == 0o444
    started = events(path)[0]
    assert type(started).__name__ == "EpochStarted"
    assert Path(started.replaces) == moved.resolve()
    assert started.replaced_head == head
    assert all(word in started.damage for word in damage), started.damage
    again = say(kiosk)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("Messages is open.")
    assert "damaged" not in again.stderr and "aside" not in again.stderr, again.stderr
    assert set_aside(path) == moved, "set aside once"
    return moved


def test_32_flipped_bytes_in_a_page_set_the_file_aside_and_the_turn_is_served(
    tmp_path: Path,
) -> None:
    kiosk, path, head = damaged_journal(tmp_path)
    leaves = pages(path)
    flip_32_bytes(path, leaves[len(leaves) // 2])
    assert_served_and_set_aside(kiosk, path, head, "malformed")


def test_a_file_cut_to_half_its_size_is_set_aside_and_the_turn_is_served(tmp_path: Path) -> None:
    kiosk, path, head = damaged_journal(tmp_path)
    cut_to_half(path)
    # The head cannot be read from the cut file: it comes from the device's witness of it.
    assert_served_and_set_aside(kiosk, path, head, "malformed")


def read_back(moved: Path) -> tuple[list[dict[str, Any]], str]:
    """`appliance audit --json` of a set-aside file: its rows, and its one line on stderr."""
    before = moved.read_bytes()
    audit = appliance("audit", "--store", str(moved), "--json")
    assert audit.returncode in (0, 1), audit
    assert "Traceback" not in audit.stderr and "internal error" not in audit.stderr, audit.stderr
    line, *rows_left_out = audit.stderr.strip().splitlines()
    assert all(left.startswith("Event #") and "is damaged and was left out" in left
               for left in rows_left_out), audit.stderr
    rows: list[dict[str, Any]] = json.loads(audit.stdout)
    verify = appliance("audit", "verify", "--store", str(moved))
    assert verify.returncode == 1, verify
    assert "Traceback" not in verify.stderr, verify.stderr
    last = verify.stderr.strip().splitlines()[-1]
    assert last.startswith("appliance: the journal file is damaged"), verify.stderr
    assert moved.read_bytes() == before, "reading never writes the file set aside"
    return rows, line


def test_what_is_left_of_a_page_damaged_file_can_be_read(tmp_path: Path) -> None:
    kiosk, path, head = damaged_journal(tmp_path)
    leaves = pages(path)
    flip_32_bytes(path, leaves[len(leaves) // 2])
    moved = assert_served_and_set_aside(kiosk, path, head, "malformed")
    rows, line = read_back(moved)
    count = int(head.split(":")[0])
    lost = count - len(rows)
    assert 0 < lost < 40, (lost, line)  # one leaf's events, no more
    assert f"{lost} event{'s' if lost > 1 else ''} could not be read" in line, line
    assert rows[0]["event"] == "EpochStarted" and rows[-1]["event"] == "TurnEnded"


@pytest.mark.parametrize("within_a_page", [False, True])
def test_what_is_left_of_a_cut_file_can_be_read(tmp_path: Path, within_a_page: bool) -> None:
    """Cut inside a page, the row the cut runs through is named as damaged, apart."""
    kiosk, path, head = damaged_journal(tmp_path)
    cut_to_half(path, within_a_page)
    moved = assert_served_and_set_aside(kiosk, path, head, "malformed")
    rows, line = read_back(moved)
    assert 100 < len(rows) < int(head.split(":")[0]), len(rows)
    assert f"no event after #{rows[-1]['seq']} could be read" in line, line


def test_the_damage_is_recorded_for_the_fleet_alert(tmp_path: Path) -> None:
    """The new journal's JournalChecked (damaged), read back and counted as the care home's
    server counts what an uplink sends it: an alert naming the damage and the file."""
    kiosk, path, head = damaged_journal(tmp_path)
    cut_to_half(path)
    first = say(kiosk)
    assert first.returncode == 0, first.stderr
    moved = set_aside(path)
    journal = Journal(str(path), create=False)
    checked = [e for _nid, e in journal.domain_events() if type(e).__name__ == "JournalChecked"]
    assert len(checked) == 1 and checked[0].intact is False
    assert moved.name in checked[0].problem and head in checked[0].problem
    chain = {r[0]: r for r in journal.chained.query(f"SELECT * FROM {CHAIN_TABLE}")}
    sent = [
        WireEvent(id=n.id, originator_id=oid_text(n.originator_id),
                  originator_version=n.originator_version, topic=n.topic,
                  state=base64.b64encode(n.state).decode(), digest=chain[n.id][1],
                  link=chain[n.id][2])
        for n in journal.notifications()
    ]
    counted = _counts(sent, [None] * len(sent), 0)
    assert "malformed" in counted.journal_problem and moved.name in counted.journal_problem


def test_an_epoch_stored_before_the_replaced_fields_still_loads(tmp_path: Path) -> None:
    """eventsourcing passes the stored fields to `JournalEpoch.__init__`: the new ones default."""
    journal = Journal(str(tmp_path / "journal.sqlite"))
    epoch = journal.epoch()
    (stored,) = journal.recorder.select_events(EPOCH_ID)
    state = json.loads(stored.state)
    for name in ("replaces", "replaced_head", "damage"):
        del state[name]
    old = StoredEvent(stored.originator_id, stored.originator_version, stored.topic,
                      json.dumps(state).encode())
    folded = cast(Any, journal.mapper.to_domain_event(old)).mutate(None)
    assert isinstance(folded, JournalEpoch)
    assert (folded.epoch, folded.replaces, folded.replaced_head, folded.damage) == (
        epoch, "", "", "")


def test_a_running_kiosk_goes_on_when_a_page_goes_bad_under_it(tmp_path: Path) -> None:
    """The kiosk as `appliance run` wires it (voice side, panel): the page of the newest events
    goes bad after it opened the journal; the turn that meets it says so, on the panel too, the
    file is set aside, and the next turns are served from the new journal without another word."""
    kiosk, path, _head = damaged_journal(tmp_path)
    journal = open_writer(kiosk.store)
    planner = build_planner(Settings(llm="off"))

    def desktop() -> Any:
        return opened_desktop(f"sim:{kiosk.scene}")

    running = KioskApp(journal, desktop, planner, panel=False, switch=False)
    panel = RecordingPanel()
    running.feed.panel = panel
    inner = SessionSink(journal, desktop, planner, on_journal=running.use_journal)
    running.followers.append(inner.use)
    voice = running.sink(inner)
    assert voice.handle(Utterance(LOOK, "text", None)).spoken.startswith("Messages is open.")
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the newest pages into the file
    flip_32_bytes(path, pages(path)[-1])
    with closing(sqlite3.connect(path)) as conn:  # another process commits: caches are read anew
        conn.execute("PRAGMA user_version=1")
    met = voice.handle(Utterance(LOOK, "text", None))
    assert "set it aside" in met.spoken and "malformed" in met.spoken, met.spoken
    assert running.journal is inner.journal is running.controller.journal is not journal
    assert any("set it aside" in state.reply for state in panel.states)
    assert "a damaged journal was set aside" in panel.states[-1].journal, panel.states[-1]
    moved = set_aside(path)
    assert stat.S_IMODE(moved.stat().st_mode) == 0o444
    after = voice.handle(Utterance(LOOK, "text", None))
    assert after.spoken.startswith("Messages is open."), after.spoken
    assert "aside" not in after.spoken
    started = events(path)[0]
    assert type(started).__name__ == "EpochStarted" and Path(started.replaces) == moved.resolve()


def test_a_running_kiosk_follows_a_file_another_process_set_aside(tmp_path: Path) -> None:
    """`appliance say` finds the damage first: the kiosk's next turn goes into the new journal,
    and it says once why."""
    kiosk, path, _head = damaged_journal(tmp_path)
    journal = open_writer(kiosk.store)
    sink = SessionSink(journal, lambda: opened_desktop(f"sim:{kiosk.scene}"),
                       build_planner(Settings(llm="off")))
    leaves = pages(path)
    flip_32_bytes(path, leaves[len(leaves) // 2])
    assert say(kiosk).returncode == 0
    moved = set_aside(path)
    heard = sink.handle(Utterance(LOOK, "text", None))
    assert "found damaged" in heard.spoken and moved.name in heard.spoken, heard.spoken
    assert heard.spoken.endswith("Greyed out: Call."), heard.spoken
    turns = [e for e in events(path) if type(e).__name__ == "TurnStarted"]
    assert len(turns) == 2, "the say's turn and the kiosk's, both in the new journal"
    assert "found damaged" not in sink.handle(Utterance(LOOK, "text", None)).spoken


@pytest.mark.postgres
def test_a_running_uplink_raises_the_care_teams_alert(
    central: Central, tmp_path: Path  # noqa: F811 (the fixture imported above)
) -> None:
    """The uplink already running when the file is set aside follows the new journal (a new
    epoch, kept beside the old one) and the central server raises the alert."""
    kiosk = FleetKiosk(tmp_path / "k1", "room-1")
    kiosk.join(central)
    kiosk.turns(4)
    old_epoch = kiosk.epoch
    uplink = kiosk.start_uplink()
    try:
        deadline = time.monotonic() + 60
        while central.ids(kiosk.name, old_epoch) != kiosk.ids():
            assert time.monotonic() < deadline, "the uplink never sent the journal"
            time.sleep(0.2)
        cut_to_half(Path(kiosk.store))
        scene = tmp_path / "scene.json"
        scene.write_text(json.dumps(messages()))
        served = kiosk.appliance("say", LOOK, "--desktop", f"sim:{scene}", "--store", kiosk.store)
        assert served.returncode == 0 and "set it aside" in served.stderr, served.stderr
        moved = set_aside(Path(kiosk.store))
        alerts: list[str] = []
        while not any(moved.name in a for a in alerts):
            assert time.monotonic() < deadline + 60, f"no alert: {alerts}"
            time.sleep(0.2)
            alerts = [a for row in central.store.overview() for a in row["alerts"]]
    finally:
        uplink.terminate()
        uplink.wait(timeout=30)
    alert = next(a for a in alerts if moved.name in a)
    assert alert.startswith("journal check failed: "), alert
    assert "the journal file was damaged (database disk image is malformed)" in alert, alert
    assert kiosk.epoch != old_epoch and central.ids(kiosk.name, kiosk.epoch) == kiosk.ids()


def test_health_lists_the_file_set_aside_and_how_to_read_it(tmp_path: Path) -> None:
    """The caregiver page's Health: the file, the damage, its last head, and the commands."""
    kiosk, path, head = damaged_journal(tmp_path)
    assert health_checks(Journal(kiosk.store), path.parent, None)[3] == Check(
        "Damaged journals", "ok", "none set aside")
    cut_to_half(path)
    assert say(kiosk).returncode == 0
    moved = set_aside(path)
    (shown,) = [c for c in health_checks(Journal(kiosk.store), path.parent, None)
                if c.what == "Damaged journals"]
    assert shown.state == "problem"
    for words in (moved.name, "database disk image is malformed", f"its last head {head}",
                  f"appliance audit --store {moved}", f"appliance audit verify --store {moved}"):
        assert words in shown.detail, (words, shown.detail)


def test_writers_meeting_the_damage_at_once_set_it_aside_once(tmp_path: Path) -> None:
    """Four `appliance say` at the same moment on one damaged file: every one is served, the
    file is set aside once, and each turn is in the one new journal."""
    kiosk, path, _head = damaged_journal(tmp_path)
    cut_to_half(path)
    scenes = []
    for i in range(4):
        scenes.append(tmp_path / f"scene{i}.json")
        scenes[-1].write_text(json.dumps(messages()))
    running = [
        subprocess.Popen([str(APPLIANCE), "say", LOOK, "--desktop", f"sim:{scene}", "--store",
                          kiosk.store], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for scene in scenes
    ]
    outputs = [p.communicate(timeout=120) for p in running]
    done = [(p.returncode, out, err) for p, (out, err) in zip(running, outputs, strict=True)]
    assert all(code == 0 and out.startswith("Messages is open.") for code, out, _ in done), done
    assert all("Traceback" not in err for _, _, err in done)
    assert sum("set it aside" in err for _, _, err in done) == 1, done
    moved = set_aside(path)
    kinds = [type(e).__name__ for e in events(path)]
    assert kinds[0] == "EpochStarted" and kinds.count("EpochStarted") == 1
    assert kinds.count("TurnStarted") == 4
    assert Path(events(path)[0].replaces) == moved.resolve()
