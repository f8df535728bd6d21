"""Bad input and limits (issue 10, items 9-15): every one is a one-line error or a cut, never a
crash, a misleading message, megabytes in the journal or minutes of work.

Each test runs the real `appliance` entry point (in-process, or a real process where the
interpreter's own exit code or stderr matters) on real SQLite files or the loopback PostgreSQL.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from appliance.desktop.describe import describe_screen
from appliance.desktop.model import Node, Snapshot
from appliance.desktop.sim import SimDesktop
from appliance.intents.planner import Plan
from appliance.intents.router import Router
from appliance.limits import (
    CUT,
    MAX_NAME_CHARS,
    MAX_SPOKEN_CHARS,
    MAX_UTTERANCE_CHARS,
    MAX_VALUE_CHARS,
)
from tests.cli_runner import APPLIANCE, Kiosk, Result, find_element, run
from tests.scenes import messages, write_scene

# -- helpers ------------------------------------------------------------------------------------


def one_line_error(r: Result, *words: str) -> None:
    """A user error: exit 1, exactly one `appliance: ...` line on stderr, naming `words`."""
    assert r.code == 1, (r.code, r.err)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("appliance: "), r.err
    assert "internal error" not in r.err and "Traceback" not in r.err
    for word in words:
        assert word.lower() in r.err.lower(), r.err


def process(*args: str | bytes, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """`appliance ARGS` as a new process (its own interpreter, exit code and stderr)."""
    return subprocess.run(
        [str(APPLIANCE), *args], capture_output=True, text=True, timeout=600, check=False,
        **kwargs,
    )


def store_bytes(store: str) -> int:
    return sum(p.stat().st_size for p in Path(store).parent.glob(Path(store).name + "*"))


# -- 9. limits on what is read, spoken, journaled and planned --------------------------------


def test_a_huge_field_is_cut_when_read_spoken_and_journaled(tmp_path: Path) -> None:
    scene = messages()
    huge = "grandma " * 600_000  # 4.8 MB in one text field
    find_element(scene, "Message")["value"] = huge
    find_element(scene, "Status")["name"] = "Status " + "x" * 100_000
    kiosk = Kiosk(tmp_path, scene)
    before = store_bytes(kiosk.store) if Path(kiosk.store).exists() else 0

    read = kiosk.say("what does message say")
    assert read["decision"] == "answered"
    assert len(read["spoken"]) <= MAX_SPOKEN_CHARS and read["spoken"].endswith(CUT)
    typed = kiosk.say("type hello in the message box")
    assert typed["decision"] == "executed"
    assert kiosk.element("Message")["value"].endswith(" hello"), "the field itself is whole"
    assert len(kiosk.element("Message")["value"]) > len(huge)

    timeline = run("audit", "--json", "--store", kiosk.store).json()
    started = next(r for r in timeline if r["event"] == "ActionSucceeded")
    stored = started["data"]["after"]
    value = next(iter(stored.values()))["value"]
    assert len(value) <= MAX_VALUE_CHARS and value.endswith(CUT)
    assert all(len(r["detail"]) < 10 * MAX_VALUE_CHARS for r in timeline)
    # Two turns on a 5 MB field: the journal grew by kilobytes, not by the field each time.
    assert store_bytes(kiosk.store) - before < 512 * 1024
    # Only the start of the old value was kept, so undo refuses rather than cut the field.
    whole = kiosk.element("Message")["value"]
    undone = kiosk.say("undo that")
    assert undone["decision"] == "rejected" and "too long to put back" in undone["spoken"]
    assert kiosk.element("Message")["value"] == whole


def test_every_adapter_hands_on_capped_names_and_values() -> None:
    """The cap is in the shared Snapshot model: any adapter's nodes are cut the same way."""
    node = Node(
        id="0", role="text", name="N" * 50_000, app="A", window="W", value="v" * 3_000_000
    )
    snapshot = Snapshot(nodes=(node,), applications=("A",), active_app="A", active_window="W")
    got = snapshot.nodes[0]
    assert len(got.name) == MAX_NAME_CHARS and got.name.endswith(CUT)
    assert isinstance(got.value, str) and len(got.value) == MAX_VALUE_CHARS
    small = Node(id="1", role="text", name="Message", app="A", window="W", value="hi")
    assert Snapshot(nodes=(small,)).nodes[0] is small, "within the limits nothing is copied"


def test_an_overlong_utterance_is_refused_before_anything_runs(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    words = "type hello " * 1_000_000  # 11 MB
    r = run("say", words, "--desktop", f"sim:{kiosk.scene}", "--store", kiosk.store)
    one_line_error(r, "too long")
    assert not Path(kiosk.store).exists(), "refused before the journal was even opened"
    one_line_error(run("plan", words, "--desktop", f"sim:{kiosk.scene}"), "too long")


class CountingPlanner:
    """A planner that counts what reaches it (the grammar's place in the router)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def plan(self, text: str, snapshot: Snapshot, history: Sequence[str] = ()) -> Plan:
        self.texts.append(text)
        return Plan(intent=None, planner="counting")


def test_no_planner_sees_an_utterance_over_the_limit() -> None:
    """Voice, switch and kiosk turns reach the router without the CLI's check."""
    from appliance.intents.router import TOO_LONG

    grammar, llm = CountingPlanner(), CountingPlanner()
    router = Router(grammar, llm)
    snapshot = SimDesktop.from_file(Path("appliance/scenes/messages.json")).snapshot()
    plan = router.plan("x" * (MAX_UTTERANCE_CHARS + 1), snapshot)
    assert plan.intent is None and TOO_LONG in plan.notes
    assert grammar.texts == [] and llm.texts == []
    router.plan("x" * MAX_UTTERANCE_CHARS, snapshot)
    assert len(grammar.texts) == 1, "at the limit it is planned"


# -- 10. "what is on the screen" is linear in the number of elements ---------------------------


class CountedName(str):
    """An element name that counts every comparison and hash made with it."""

    calls = 0

    def __eq__(self, other: object) -> bool:
        CountedName.calls += 1
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        CountedName.calls += 1
        return str.__ne__(self, other)

    def __hash__(self) -> int:
        CountedName.calls += 1
        return str.__hash__(self)


def buttons(count: int, name: Any = str) -> Snapshot:
    nodes = tuple(
        Node.model_construct(
            id=f"0.0.{i}", role="push button", name=name(f"Button {i}"), app="Big", window="Big",
            states=frozenset(), value=None, parent_id=None,
        )
        for i in range(count)
    )
    return Snapshot.model_construct(
        nodes=nodes, applications=("Big",), launchable=(), active_app="Big",
        active_window="Big", keystrokes=(),
    )


def test_describing_the_screen_does_work_linear_in_its_elements() -> None:
    # Counted on 3000 distinct names: a scan of the names seen so far per element (the old
    # way) makes about 4.5 million comparisons; one dict lookup per element makes a few each.
    count = 3000
    snapshot = buttons(count, CountedName)
    CountedName.calls = 0
    describe_screen(snapshot)
    assert CountedName.calls <= 4 * count, CountedName.calls


def test_a_hundred_thousand_buttons_are_summed_up_in_one_sentence() -> None:
    spoken = describe_screen(buttons(100_000))
    assert spoken.startswith("Big is open. You can use Button 0, Button 1,")
    assert "Button 7, and 99992 more." in spoken and "Button 8," not in spoken
    assert len(spoken) <= MAX_SPOKEN_CHARS


# -- 11. every setting is checked by its model ---------------------------------------------------


def test_settings_are_validated_by_their_model(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    store = ["--store", kiosk.store]
    r = run("settings", "set", "denylist_apps", '["Radio", "Calendar"]', "--by", "carol", *store)
    assert r.code == 0, r.err
    shown = run("settings", "show", "--json", *store).json()
    assert shown["denylist_apps"] == ["Radio", "Calendar"]
    assert kiosk.say("open radio")["decision"] == "rejected", "Radio is blocked"
    comma = run("settings", "set", "denylist_apps", "Radio, Calendar ", "--by", "carol", *store)
    assert comma.code == 0, comma.err
    shown = run("settings", "show", "--json", *store).json()
    assert shown["denylist_apps"] == ["Radio", "Calendar"]

    bad = {
        ("confirm_timeout_s", "0"): "greater than or equal to 5",
        ("confirm_timeout_s", "4.9"): "greater than or equal to 5",
        ("confirm_timeout_s", "nan"): "confirm_timeout_s",
        ("denylist_apps", '["Radio", 4]'): "names",
        ("denylist_apps", '["Radio",'): "JSON list",
        ("denylist_apps", '{"Radio": 1}'): "Radio,Calendar",
        ("denylist_apps", '["Radio", " "]'): "empty",
        ("wake_phrase", "hey\x1b[2Jjuniper"): "control character",
        ("wake_phrase", "hey\u202ejuniper"): "control character",
        ("switch_device", "x" * 1000): "longer than",
        ("switch_hold_s", "0.01"): "switch_hold_s",
    }
    for (key, value), why in bad.items():
        one_line_error(run("settings", "set", key, value, "--by", "carol", *store), key, why)
    for by in ("", "   ", "carol\x07", "\n"):
        one_line_error(run("settings", "set", "wake_phrase", "hey you", "--by", by, *store), "--by")
    r = run("settings", "set", "confirm_timeout_s", "5", "--by", "  carol  ", *store)
    assert r.code == 0 and r.out.strip().endswith("(by carol)"), r.out
    timeline = run("audit", "--json", *store).json()
    changes = [row["data"] for row in timeline if row["event"] == "SettingChanged"]
    assert [c["by"] for c in changes] == ["carol", "carol", "carol"]


# -- 12. user input never ends as exit 70; messages say what is really wrong ---------------------


def test_speak_to_a_folder_is_refused_before_anything_is_done(tmp_path: Path) -> None:
    from appliance.voice.commands import synthesize_demo_audio

    audio = synthesize_demo_audio(["hey juniper, select doctor"], tmp_path / "said.wav")
    scene = write_scene(tmp_path / "scene.json", messages())
    store = tmp_path / "journal.sqlite"
    folder = tmp_path / "replies"
    folder.mkdir()
    r = process(
        "run", "--audio", str(audio), "--desktop", f"sim:{scene}", "--store", str(store),
        "--speak-to", str(folder), "--no-panel", "--no-switch",
    )
    one_line_error(Result(r.returncode, r.stdout, r.stderr), "folder")
    assert "Exception ignored" not in r.stderr
    scene_now = json.loads(scene.read_text())
    assert "selected" not in find_element(scene_now, "Doctor").get("states", []), "nothing was done"
    assert not store.exists()


def test_replies_that_cannot_be_written_are_one_voice_error(tmp_path: Path) -> None:
    """Past the up-front check (a folder made in the meantime): one line, no __del__ noise."""
    code = (
        "from pathlib import Path; from appliance.voice.audio.pcm import Pcm, write_wav\n"
        "from appliance.voice.errors import VoiceError\n"
        "try:\n"
        f"    write_wav(Path({str(tmp_path)!r}), Pcm(b'\\0\\0' * 160, 16000))\n"
        "except VoiceError as e:\n"
        "    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith(f"cannot write {tmp_path}")


def test_a_scene_that_is_not_utf8_is_a_scene_error(tmp_path: Path) -> None:
    scene = tmp_path / "scene.json"
    text = json.dumps(messages(), ensure_ascii=False).replace("Grandma", "Gr\udce9")
    scene.write_bytes(text.encode("utf-8", "surrogateescape"))
    for command in ("say", "plan"):
        one_line_error(run(command, "select doctor", "--desktop", f"sim:{scene}",
                           "--store", str(tmp_path / "j.sqlite")), "not UTF-8")


def test_words_that_are_not_utf8_are_not_blamed_on_the_journal(tmp_path: Path) -> None:
    scene = write_scene(tmp_path / "scene.json", messages())
    store = tmp_path / "journal.sqlite"
    r = process(b"say", b"type caf\xe9 in the message box", b"--desktop",
                f"sim:{scene}".encode(), b"--store", str(store).encode())
    one_line_error(Result(r.returncode, r.stdout, r.stderr), "not valid UTF-8")
    assert "journal" not in r.stderr


@pytest.mark.parametrize("since", ["25:99", "12:60", "99999999999d", "2026-13-45", "soon"])
def test_since_that_cannot_be_read_is_one_line(tmp_path: Path, since: str) -> None:
    one_line_error(
        run("audit", "--since", since, "--store", str(tmp_path / "j.sqlite")), "--since"
    )


@pytest.mark.parametrize(
    "url", ["postgresql://[bad", "postgresql://u:secret@host:99999/db", "postgresql://h:abc/db"]
)
def test_a_store_url_that_cannot_be_read_is_one_line(url: str) -> None:
    r = run("audit", "--store", url)
    one_line_error(r, "store URL")
    assert "secret" not in r.err, "the password is never printed"


def test_a_missing_postgres_database_is_named(pg_url: str) -> None:
    from urllib.parse import urlsplit

    missing = urlsplit(pg_url)._replace(path="/no_such_journal_db").geturl()
    r = run("audit", "--store", missing)
    one_line_error(r, "'no_such_journal_db' does not exist")
    assert "timeout" not in r.err.lower() and "couldn't get a connection" not in r.err


def _limit_file_size(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails (EFBIG) instead of a kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_file_size_limit_is_not_called_cannot_open(tmp_path: Path) -> None:
    """No room for the journal (here a file-size limit, ulimit -f): said as such."""
    store = tmp_path / "journal.sqlite"
    r = process("settings", "set", "wake_phrase", "hello there", "--by", "carol",
                "--store", str(store), preexec_fn=lambda: _limit_file_size(20_000))
    one_line_error(Result(r.returncode, r.stdout, r.stderr), "file-size limit")


@contextmanager
def tmpfs(where: Path, if_not: str) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted at `where` (root in the project's containers may mount); the test
    is skipped, saying `if_not`, where mounting is not allowed."""
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here; {if_not}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "--lazy", str(where)], check=False)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "tmpfs", "the file-size-limit test covers the message") as where:
        yield where


def test_a_full_disk_is_not_called_cannot_open(small_tmpfs: Path, tmp_path: Path) -> None:
    scene = write_scene(tmp_path / "scene.json", messages())
    store = str(small_tmpfs / "journal.sqlite")
    made = process("settings", "set", "wake_phrase", "hello there", "--by", "carol",
                   "--store", store)
    assert made.returncode == 0, made.stderr
    with (small_tmpfs / "filler").open("wb") as f:  # fill the disk up
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass
    r = process("say", "tick urgent", "--desktop", f"sim:{scene}", "--store", store)
    one_line_error(Result(r.returncode, r.stdout, r.stderr), "disk", "is full")
    (small_tmpfs / "filler").unlink()
    fresh = process("say", "tick urgent", "--desktop", f"sim:{scene}", "--store",
                    str(small_tmpfs / "other.sqlite"))
    assert fresh.returncode == 0, "with room again the same command works"


# -- 13. plan uses the default journal's settings, as say does ---------------------------------


def test_plan_reads_the_default_journal_without_creating_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from appliance.journal.store import default_store_path

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    scene = write_scene(tmp_path / "scene.json", messages())
    r = run("plan", "click send", "--desktop", f"sim:{scene}", "--json")
    assert r.code == 0 and r.json()["decision"] == "needs_confirmation", r.err
    assert not default_store_path().exists(), "plan never creates a journal"
    assert run("settings", "set", "denylist_apps", "Messages", "--by", "carol").code == 0
    planned = run("plan", "click send", "--desktop", f"sim:{scene}", "--json").json()
    said = run("say", "click send", "--desktop", f"sim:{scene}", "--json").json()
    assert planned["decision"] == said["decision"] == "rejected"


# -- 14. the model's examples are built only when the model is asked -------------------------


def test_a_grammar_answered_command_never_builds_the_model_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import appliance.intents.llm_examples as llm_examples
    from appliance.settings import Settings
    from appliance.wiring import build_planner

    real = llm_examples.grammar_examples
    built: list[int] = []

    def counted() -> Any:
        built.append(1)
        return real()

    monkeypatch.setattr(llm_examples, "grammar_examples", counted)
    assert Settings().llm == "ollama"
    kiosk = Kiosk(tmp_path, messages())
    assert kiosk.say("tick urgent")["decision"] == "executed"
    planner = build_planner(Settings())
    planner.plan("select doctor", SimDesktop.from_file(kiosk.scene).snapshot())
    assert built == []
    assert planner.llm.examples and built == [1], "asking the model does build them, once"
    assert planner.llm.examples and built == [1]


# -- 15. smaller: audit --turn, control characters, "by text", switch probe, bench progress ---


def test_audit_of_a_turn_that_is_not_there_says_so(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    turn = kiosk.say("tick urgent")["turn_id"]
    one_line_error(run("audit", "--turn", "zzzz", "--store", kiosk.store), "no turn 'zzzz'")
    one_line_error(run("audit", "--turn", "abcdef12", "--store", kiosk.store), "no turn")
    found = run("audit", "--turn", turn[:8], "--store", kiosk.store)
    assert found.code == 0 and "TurnEnded" in found.out


def test_control_characters_never_reach_the_audit_table_or_a_field(tmp_path: Path) -> None:
    scene = messages()
    find_element(scene, "Status")["value"] = "fine\x1b[2J\x1b[31mHACKED\u202eevil"
    kiosk = Kiosk(tmp_path, scene)
    assert kiosk.say("what does status say")["decision"] == "answered"
    table = run("audit", "--store", kiosk.store).out
    assert "\x1b" not in table and "\u202e" not in table
    assert "\\x1b[2J" in table and "\\u202e" in table, "shown escaped, not dropped"

    r = run("say", "type hi\x1b[2J in the message box", "--desktop", f"sim:{kiosk.scene}",
            "--store", kiosk.store)
    one_line_error(r, "control character")
    router = Router(__import__("appliance.intents.grammar", fromlist=["x"]).GrammarPlanner(), None)
    plan = router.plan("type hi\x1bthere\u202e in the message box",
                       SimDesktop.from_file(kiosk.scene).snapshot())
    assert plan.intent is not None and "\x1b" not in repr(plan.intent)
    assert "\u202e" not in repr(plan.intent)
    assert kiosk.element("Message")["value"] == ""


def test_a_typed_yes_is_journaled_as_typed(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    kiosk.say("click send")
    assert kiosk.say("yes")["decision"] == "executed"
    kiosk.say("click send")
    assert kiosk.say("no")["decision"] == "cancelled"
    timeline = run("audit", "--json", "--store", kiosk.store).json()
    answers = [(r["event"], r["data"]["by"]) for r in timeline
               if r["event"] in ("Confirmed", "Declined")]
    assert answers == [("Confirmed", "text"), ("Declined", "text")]
    assert "by text" in run("audit", "--store", kiosk.store).out


def test_switch_probe_exits_the_same_with_and_without_json(tmp_path: Path) -> None:
    store = str(tmp_path / "j.sqlite")
    # A switch named so that nothing matches: whatever this machine has, none is chosen.
    assert run("settings", "set", "switch_device", "no-such-switch-here", "--by", "t",
               "--store", store).code == 0
    as_json = run("switch", "probe", "--json", "--store", store)
    plain = run("switch", "probe", "--store", store)
    assert as_json.code == plain.code == 1, (as_json, plain)
    listed = as_json.json()
    assert isinstance(listed, list) and not any(c["chosen"] for c in listed)
    if not os.path.isdir("/dev/input") or not listed:
        assert listed == []
    one_line_error(plain)


def test_bench_planner_reports_progress_on_stderr_as_it_goes() -> None:
    from appliance.intents.grammar import GrammarPlanner
    from appliance_lab.bench.planner import CORPUS, PROGRESS_EVERY, bench_planner

    lines: list[str] = []
    limit = 2 * PROGRESS_EVERY + 5
    report = bench_planner(GrammarPlanner(), [], CORPUS, limit=limit, progress=lines.append)
    assert report["grammar_only"]["total"] == limit
    counts = [line for line in lines if line.startswith("grammar: ") and "/" in line]
    every = PROGRESS_EVERY
    assert counts == [f"grammar: {n}/{limit}" for n in (every, 2 * every, limit)]


def test_a_value_an_earlier_version_stored_does_not_stop_the_appliance(tmp_path: Path) -> None:
    """confirm_timeout_s 1 was allowed before the range was tightened: read as the default."""
    from appliance.journal.application import Journal
    from appliance.settings import Settings

    kiosk = Kiosk(tmp_path, messages())
    Journal(kiosk.store).change_setting("confirm_timeout_s", 1.0, by="an older version")
    shown = run("settings", "show", "--json", "--store", kiosk.store)
    assert shown.code == 0 and shown.json()["confirm_timeout_s"] == Settings().confirm_timeout_s
    assert kiosk.say("click send")["decision"] == "needs_confirmation"
    assert kiosk.say("yes")["decision"] == "executed", "the question did not time out at once"


# -- issue 42, part 6: scenes that are not files, too big, or cannot be kept; --show-context -----


def _quick(*args: str, **kwargs: Any) -> Result:
    """`appliance ARGS` as a new process that must end within a minute (a hang fails the test)."""
    r = subprocess.run([str(APPLIANCE), *args], capture_output=True, text=True, timeout=60,
                       check=False, **kwargs)
    return Result(r.returncode, r.stdout, r.stderr)


def _turns(store: Path) -> list[str]:
    """The events of every turn in the journal at `store` (none when there is no journal)."""
    if not store.exists():
        return []
    timeline = run("audit", "--json", "--store", str(store)).json()
    return [row["event"] for row in timeline if row["event"] in ("Heard", "TurnEnded")]


@pytest.mark.parametrize("kind", ["named pipe", "folder", "socket", "character device"])
def test_a_scene_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    import socket

    scene = tmp_path / "scene.json"
    bound: socket.socket | None = None
    if kind == "named pipe":
        os.mkfifo(scene)  # opened for reading, it waits for a writer that never comes
    elif kind == "folder":
        scene.mkdir()
    elif kind == "socket":
        bound = socket.socket(socket.AF_UNIX)
        bound.bind(str(scene))
    else:
        scene = Path("/dev/null")
    store = tmp_path / "journal.sqlite"
    try:
        for command in ("say", "plan"):
            r = _quick(command, "click send", "--desktop", f"sim:{scene}", "--store", str(store))
            one_line_error(r, str(scene), "not a regular file", kind)
    finally:
        if bound is not None:
            bound.close()
    assert _turns(store) == [], "no turn was taken"


def _limit_memory() -> None:
    # Before the fix the scene was read whole: /dev/zero then filled memory until MemoryError.
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def test_dev_zero_as_the_scene_is_refused_without_reading_it(tmp_path: Path) -> None:
    store = tmp_path / "journal.sqlite"
    for command in ("say", "plan"):
        r = _quick(command, "click send", "--desktop", "sim:/dev/zero", "--store", str(store),
                   preexec_fn=_limit_memory)
        one_line_error(r, "/dev/zero", "not a regular file", "character device")
    assert _turns(store) == []


def test_a_scene_file_over_the_limit_is_refused_after_reading_one_byte_more(
    tmp_path: Path,
) -> None:
    from appliance.limits import MAX_SCENE_BYTES

    store = tmp_path / "journal.sqlite"
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:  # sparse: it takes no room on the disk
        f.truncate(MAX_SCENE_BYTES + 1)
    r = _quick("say", "click send", "--desktop", f"sim:{huge}", "--store", str(store),
               preexec_fn=_limit_memory)
    one_line_error(r, str(huge), "too big")
    assert _turns(store) == []

    at_limit = write_scene(tmp_path / "padded.json", messages())
    with at_limit.open("ab") as f:  # JSON allows trailing whitespace: at the limit, it is read
        f.write(b" " * (MAX_SCENE_BYTES - at_limit.stat().st_size))
    r = _quick("plan", "click send", "--desktop", f"sim:{at_limit}", "--json")
    assert r.code == 0 and r.json()["decision"] == "needs_confirmation", r.err


@pytest.fixture
def read_only_scene(tmp_path: Path) -> Iterator[Path]:
    """A scene on a read-only tmpfs mount."""
    with tmpfs(tmp_path / "ro", "and as root, permission bits are not a test") as where:
        scene = write_scene(where / "scene.json", messages())
        remounted = subprocess.run(["mount", "-o", "remount,ro", str(where)],
                                   capture_output=True, check=False)
        assert remounted.returncode == 0, remounted.stderr
        yield scene


def test_a_scene_on_a_read_only_mount_is_refused_before_the_turn(
    read_only_scene: Path, tmp_path: Path
) -> None:
    before = read_only_scene.read_text()
    store = tmp_path / "journal.sqlite"
    r = run("say", "select doctor", "--desktop", f"sim:{read_only_scene}", "--store", str(store))
    one_line_error(r, str(read_only_scene), "cannot be written back", "read-only file system",
                   "nothing was done")
    assert _turns(store) == [], "nothing journaled for a turn whose screen could not be kept"
    assert read_only_scene.read_text() == before
    planned = run("plan", "select doctor", "--desktop", f"sim:{read_only_scene}", "--json")
    assert planned.code == 0 and planned.json()["decision"] == "would_execute", planned.err


def test_a_scene_that_cannot_be_written_after_the_turn_says_the_turn_was_journaled(
    small_tmpfs: Path, tmp_path: Path
) -> None:
    """Found only at write time (here the scene's disk is full): the message is the truth."""
    scene = write_scene(small_tmpfs / "scene.json", messages())
    before = scene.read_text()
    with (small_tmpfs / "filler").open("wb", buffering=0) as f, pytest.raises(OSError):
        while True:
            f.write(b"\0" * 65536)
    store = tmp_path / "journal.sqlite"
    r = run("say", "select doctor", "--desktop", f"sim:{scene}", "--store", str(store))
    one_line_error(r, "the turn was done and journaled", str(scene), "could not be written back",
                   "no space left on device")
    assert _turns(store) == ["Heard", "TurnEnded"]
    timeline = run("audit", "--json", "--store", str(store)).json()
    ended = next(row for row in timeline if row["event"] == "TurnEnded")
    assert ended["data"]["outcome"] == "executed"
    assert scene.read_text() == before, "the old scene whole, never half a new one"
    assert sorted(p.name for p in small_tmpfs.iterdir()) == ["filler", "scene.json"]


def test_show_context_hides_a_secret_as_every_other_path_does(tmp_path: Path) -> None:
    from appliance.intents.prompt import render_context
    from appliance.policy.validator import HIDDEN_WORDS

    scene = write_scene(tmp_path / "scene.json", messages())
    shown = run("plan", "type 6944 into PIN", "--desktop", f"sim:{scene}", "--show-context")
    assert shown.code == 0, shown.err
    assert "6944" not in shown.out
    assert shown.out.splitlines()[-1] == f"request: {json.dumps(HIDDEN_WORDS)}"
    plain = run("plan", "type hello into the message box", "--desktop", f"sim:{scene}",
                "--show-context")
    snapshot = SimDesktop.from_file(scene).snapshot()
    assert plain.code == 0 and plain.out == render_context(
        "type hello into the message box", snapshot
    ), "a request without a secret is shown exactly as the model gets it"
