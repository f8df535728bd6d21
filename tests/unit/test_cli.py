"""End-to-end: the `appliance` CLI on sim scenes, every intent, confirmation, undo, secrets."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import Kiosk, run
from tests.scenes import messages, settings_panel


@pytest.fixture
def kiosk(tmp_path: Path) -> Kiosk:
    return Kiosk(tmp_path, messages())


def test_type_then_send_with_yes(kiosk: Kiosk) -> None:
    typed = kiosk.say("type hello grandma in the message box")
    assert typed["decision"] == "executed"
    assert typed["spoken"] == "Typed hello grandma into Message."
    assert typed["intent"]["intent"] == "type_text"
    assert kiosk.element("Message")["value"] == "hello grandma"

    asked = kiosk.say("click send")
    assert asked["decision"] == "needs_confirmation"
    # What would be sent is read back: a misheard message is caught before it goes.
    assert asked["spoken"] == (
        "Send needs a yes. Message says hello grandma. Say yes to send, or no.")
    assert kiosk.element("Send").get("activations", 0) == 0, "nothing happens before the yes"

    done = kiosk.say("yes")
    assert done["decision"] == "executed" and done["turn_id"] == asked["turn_id"]
    assert kiosk.element("Send")["activations"] == 1
    assert kiosk.element("Status")["value"] == "Message sent"  # the scene's effect
    assert done["desktop"]["applications"][0]["name"] == "Messages"


def test_no_declines(kiosk: Kiosk) -> None:
    kiosk.say("press send")
    no = kiosk.say("no")
    assert no["decision"] == "cancelled" and "won't" in no["spoken"]
    assert kiosk.element("Send").get("activations", 0) == 0
    again = kiosk.say("yes")
    assert again["decision"] == "rejected", "a yes after a no confirms nothing"


def test_cancel_a_pending_question_and_a_new_command_replaces_it(kiosk: Kiosk) -> None:
    kiosk.say("tap send")
    assert kiosk.say("never mind")["decision"] == "cancelled"
    kiosk.say("hit send")
    other = kiosk.say("tick urgent")
    assert other["decision"] == "executed"
    assert kiosk.say("yes")["decision"] == "rejected"
    assert kiosk.element("Send").get("activations", 0) == 0


def test_a_pending_confirmation_expires(kiosk: Kiosk) -> None:
    # 5 s is the shortest wait a caregiver can set (issue 10: 0 made every yes impossible).
    assert (
        run(
            "settings", "set", "confirm_timeout_s", "5", "--by", "test", "--store", kiosk.store
        ).code
        == 0
    )
    kiosk.say("click send")
    time.sleep(5.2)
    late = kiosk.say("yes")
    assert late["decision"] == "rejected"
    assert any("timed out" in n for n in late["notices"])
    assert kiosk.element("Send").get("activations", 0) == 0


def test_every_acting_intent_changes_the_scene(kiosk: Kiosk) -> None:
    assert kiosk.say("uncheck urgent")["decision"] == "executed"
    assert "checked" not in kiosk.element("Urgent").get("states", [])
    assert kiosk.say("turn on urgent")["decision"] == "executed"
    assert "checked" in kiosk.element("Urgent")["states"]
    assert kiosk.say("choose doctor")["decision"] == "executed"
    assert kiosk.element("Doctor")["states"] == ["selected"]
    assert "selected" not in kiosk.element("Grandma").get("states", [])
    assert kiosk.say("focus on message")["decision"] == "executed"
    assert "focused" in kiosk.element("Message")["states"]
    assert kiosk.say("press control c")["decision"] == "executed"
    assert kiosk.say("scroll down")["decision"] == "executed"
    assert kiosk.raw_scene()["keystrokes"] == ["ctrl+c", "Page_Down"]
    assert kiosk.say("launch radio")["decision"] == "executed"
    assert [a["name"] for a in kiosk.raw_scene()["applications"]] == ["Messages", "Radio"]
    assert kiosk.say("set volume to seventy")["decision"] == "executed"
    assert kiosk.element("Volume")["value"] == 70
    assert kiosk.say("set station to jazz fm")["decision"] == "executed"
    assert kiosk.element("Station")["value"] == "Jazz FM"
    read = kiosk.say("what does volume say")
    assert read["decision"] == "answered" and "70" in read["spoken"]
    screen = kiosk.say("what is on the screen")
    assert screen["decision"] == "answered" and "Radio" in screen["spoken"]


def test_go_to_a_tab_and_sequences(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    seq = kiosk.say("open calendar and then go to the week tab")
    assert seq["decision"] == "executed", seq
    assert kiosk.element("Week")["states"] == ["selected"]
    assert seq["intent"]["intent"] == "sequence"


def test_undo_reverses_the_last_undoable_turn(kiosk: Kiosk) -> None:
    kiosk.say("type hello in the message box")
    kiosk.say("select doctor")
    undone = kiosk.say("undo that")
    assert undone["decision"] == "undone"
    assert kiosk.element("Grandma")["states"] == ["selected"]
    assert "selected" not in kiosk.element("Doctor").get("states", [])
    assert kiosk.say("undo")["decision"] == "undone"
    assert kiosk.element("Message")["value"] == ""
    nothing = kiosk.say("undo")
    assert nothing["decision"] == "rejected" and "nothing to undo" in nothing["spoken"].lower()
    timeline = run("audit", "--json", "--store", kiosk.store).json()
    assert sum(1 for r in timeline if r["event"] == "Undone") == 2


def test_undo_leaves_changed_things_alone(kiosk: Kiosk) -> None:
    kiosk.say("type hello in the message box")
    scene = kiosk.raw_scene()
    scene["applications"][0]["windows"][0]["children"][0]["value"] = "changed by someone"
    kiosk.scene.write_text(json.dumps(scene))
    refused = kiosk.say("undo")
    assert refused["decision"] == "rejected" and "changed since" in refused["spoken"]
    assert kiosk.element("Message")["value"] == "changed by someone"


def test_presses_cannot_be_undone(kiosk: Kiosk) -> None:
    kiosk.say("click send")
    kiosk.say("yes")
    assert kiosk.say("undo")["decision"] == "rejected"


def test_disabled_missing_and_destructive(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, settings_panel())
    assert kiosk.say("click factory reset")["decision"] == "rejected"
    assert kiosk.element("Factory reset").get("activations", 0) == 0
    run("settings", "set", "allow_destructive", "true", "--by", "carol", "--store", kiosk.store)
    asked = kiosk.say("click factory reset")
    assert asked["decision"] == "needs_confirmation"
    assert kiosk.say("yes")["decision"] == "executed"
    assert kiosk.element("Factory reset")["activations"] == 1

    msgs = Kiosk(tmp_path / "m", messages()) if (tmp_path / "m").mkdir() is None else None
    assert msgs is not None
    disabled = msgs.say("click call")
    assert disabled["decision"] == "rejected" and "greyed out" in disabled["spoken"]
    missing = msgs.say("click the launch button")
    assert missing["decision"] in ("rejected", "needs_confirmation")
    assert msgs.element("Send").get("activations", 0) == 0


# Eight digits: a short PIN also turns up by chance in the store's ids and timestamps.
SECRET_PIN = "97531864"


def test_secrets_never_reach_the_store_or_the_audit(kiosk: Kiosk) -> None:
    typed = kiosk.say(f"type {SECRET_PIN} into pin")
    assert typed["decision"] == "executed"
    assert SECRET_PIN not in json.dumps(typed), "not shown in the turn's output either"
    assert typed["spoken"] == "Typed into PIN."
    kiosk.say("what does pin say")
    asked = kiosk.say("click send")  # what Send would send is read back, a secret never
    assert asked["decision"] == "needs_confirmation" and SECRET_PIN not in json.dumps(asked)
    kiosk.say("no")
    kiosk.say("undo")
    store = Path(kiosk.store)
    for path in [store, *store.parent.glob(store.name + "-*")]:
        assert SECRET_PIN.encode() not in path.read_bytes(), path
    audit = run("audit", "--json", "--store", kiosk.store)
    assert audit.code == 0 and SECRET_PIN not in audit.out
    plan = run("plan", f"type {SECRET_PIN} into pin", "--desktop", f"sim:{kiosk.scene}", "--json")
    assert SECRET_PIN not in plan.out


def test_plan_performs_nothing(kiosk: Kiosk) -> None:
    before = kiosk.scene.read_text()
    r = run("plan", "click send", "--desktop", f"sim:{kiosk.scene}", "--json")
    assert r.code == 0
    data = r.json()
    assert data["decision"] == "needs_confirmation" and data["intent"]["target"] == "Send"
    assert kiosk.scene.read_text() == before


def test_audit_table_and_filters(kiosk: Kiosk) -> None:
    first = kiosk.say("tick urgent")
    kiosk.say("select doctor")
    table = run("audit", "--store", kiosk.store)
    assert table.code == 0 and "ActionSucceeded" in table.out and "Ticked Urgent" in table.out
    one = run("audit", "--json", "--turn", first["turn_id"][:8], "--store", kiosk.store).json()
    assert {r["turn"] for r in one} == {first["turn_id"][:8]}
    assert run("audit", "--json", "--since", "1h", "--store", kiosk.store).json()
    assert run("audit", "--since", "yesterday-ish", "--store", kiosk.store).code != 0


def test_replay_reports_no_divergence_for_an_honest_journal(kiosk: Kiosk) -> None:
    for line in (
        "type hi in the message box",
        "untick urgent",
        "select doctor",
        "open calendar",
        "undo",
        "press enter",
    ):
        kiosk.say(line)
    r = run("replay", "--json", "--store", kiosk.store)
    assert r.code == 0, r.err
    report = r.json()
    assert report["actions"] >= 5 and report["divergences"] == []


def test_replay_finds_a_divergence(kiosk: Kiosk) -> None:
    """An application that did something other than asked shows up as a divergence."""
    kiosk.say("tick urgent")  # already ticked: nothing changes
    kiosk.say("untick urgent")
    from appliance.journal.application import Journal
    from tests.integration.test_journal import _sql

    journal = Journal(kiosk.store)
    rows = [(nid, e) for nid, e in journal.domain_events() if type(e).__name__ == "ActionSucceeded"]
    nid, event = rows[-1]
    forged = dict(event.after)  # type: ignore[attr-defined]
    key = next(iter(forged))
    forged[key] = {**forged[key], "states": ["checked"]}
    state = json.loads(
        _sql(kiosk.store)("SELECT state FROM stored_events WHERE rowid=?", (nid,))[0][0]
    )
    state["after"] = forged
    _sql(kiosk.store)(
        "UPDATE stored_events SET state=? WHERE rowid=?", (json.dumps(state).encode(), nid)
    )
    r = run("replay", "--json", "--store", kiosk.store)
    assert r.code == 1
    assert r.json()["divergences"][0]["detail"].startswith("Urgent: recorded states")
    verify = run("audit", "verify", "--store", kiosk.store)
    assert verify.code != 0 and f"event #{nid}" in verify.err


def test_audit_verify(kiosk: Kiosk) -> None:
    kiosk.say("tick urgent")
    ok = run("audit", "verify", "--store", kiosk.store)
    assert ok.code == 0 and "intact" in ok.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["say", "hello", "--desktop", "sim:/nonexistent/scene.json"], "scene file not found"),
        (["say", "hello", "--desktop", "vnc"], "unknown desktop"),
        (["say", "", "--desktop", "sim:SCENE"], "empty"),
        (["say", "hi", "--desktop", "sim:BAD", "--store", "STORE"], "bad scene"),
        (["say", "hi", "--desktop", "sim:SCENE", "--store", "mysql://x/y"], "unknown store"),
        (["audit", "--store", "NOTDB"], "not a SQLite journal"),
        (["settings", "set", "volume", "11", "--by", "x", "--store", "STORE"], "unknown setting"),
        (
            [
                "settings",
                "set",
                "max_unconfirmed_per_minute",
                "lots",
                "--by",
                "x",
                "--store",
                "STORE",
            ],
            "bad value",
        ),
        (["bench", "everything"], "unknown benchmark"),
        (["frobnicate"], "No such command"),
        (["say"], "Missing argument"),
    ],
)
def test_errors_are_one_line_and_non_zero(tmp_path: Path, args: list[str], message: str) -> None:
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(messages()))
    bad = tmp_path / "bad.json"
    bad.write_text('{"applications": [{"windows": "nope"}]}')
    notdb = tmp_path / "notes.txt"
    notdb.write_text("just some text, definitely not a journal")
    subst = {
        "sim:SCENE": f"sim:{scene}",
        "sim:BAD": f"sim:{bad}",
        "STORE": str(tmp_path / "j.db"),
        "NOTDB": str(notdb),
    }
    r = run(*[subst.get(a, a) for a in args])
    assert r.code != 0
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert message.lower() in lines[0].lower()
    assert "Traceback" not in r.err


def test_text_demo_runs_and_prints_the_timeline() -> None:
    r = run("demo", "--text")
    assert r.code == 0, r.err
    assert "Typed hello grandma into Message." in r.out
    assert "TurnEnded" in r.out and "Hash chain: intact." in r.out


def test_a_which_question_is_answered_and_the_turn_goes_on(tmp_path: Path) -> None:
    scene = messages()
    contacts = scene["applications"][0]["windows"][0]["children"][7]["children"]
    contacts.append({"role": "list item", "name": "Radio 1"})
    kiosk = Kiosk(tmp_path, scene)
    asked = kiosk.say("select radio")
    assert asked["decision"] == "clarify" and "Radio 1" in asked["spoken"]
    answered = kiosk.say("radio one")
    assert answered["turn_id"] == asked["turn_id"], "the answer continues the same turn"
    assert answered["decision"] == "executed"
    assert kiosk.element("Radio 1")["states"] == ["selected"]
    events = [r["event"] for r in run("audit", "--json", "--store", kiosk.store).json()]
    assert "Clarified" in events

    kiosk.say("select radio")
    by_position = kiosk.say("the first one")
    assert by_position["decision"] == "executed"
    kiosk.say("select radio")
    assert kiosk.say("never mind")["decision"] == "cancelled"


# -- a newcomer's first commands: help, negative values, the README as written, undo ---------


def _command_paths() -> list[list[str]]:
    """Every command and group of `appliance`, as the words that name it."""
    import typer.main

    from appliance.cli import app

    paths: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:
        paths.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return paths


def test_help_shows_flags_as_flags() -> None:
    paths = _command_paths()
    assert len(paths) > 15 and ["audit", "verify"] in paths
    for path in paths:
        shown = run(*path, "--help")
        assert shown.code == 0 and shown.out, (path, shown.err)
        assert "<bool>" not in shown.out, (path, shown.out)
    assert "--panel / --no-panel" in run("run", "--help").out
    assert "--json " in run("say", "--help").out


def test_a_negative_setting_value_needs_no_double_dash(tmp_path: Path) -> None:
    store = str(tmp_path / "journal.sqlite")
    refused = run("settings", "set", "switch_debounce_ms", "-5", "--by", "carol", "--store", store)
    assert refused.code == 1 and "No such option" not in refused.err, refused.err
    assert refused.err.startswith("appliance: bad value for switch_debounce_ms"), refused.err
    set_ = run("settings", "set", "wake_phrase", "-hey you", "--by", "carol", "--store", store)
    assert set_.code == 0 and "-> -hey you" in set_.out, set_.err
    typo = run("settings", "set", "wake_phrase", "hi", "--bye", "carol", "--store", store)
    assert typo.code == 2 and len(typo.err.splitlines()) == 1, "an unknown option still fails"


README = Path(__file__).resolve().parents[2] / "README.md"
# The benchmarks are listed beside what they measured.
MEASUREMENTS = README.parent / "docs" / "measurements" / "README.md"


def _readme_commands(readme: Path = README) -> list[list[str]]:
    """Each `appliance ...` command in the README's code blocks, as its words (no comment)."""
    import re
    import shlex

    blocks = re.findall(r"^```\n(.*?)^```", readme.read_text(), flags=re.S | re.M)
    commands = []
    for line in "\n".join(blocks).splitlines():
        line = re.sub(r"\s#\s.*$", "", line).strip()
        for part in re.split(r"\s\|\s(?=appliance\b)", line):
            if part.startswith("appliance "):
                commands.append(shlex.split(part)[1:])
    return commands


def test_every_readme_command_and_option_exists() -> None:
    import typer.main

    from appliance.cli import app

    commands = _readme_commands()
    assert len(commands) > 20
    for words in [*commands, *_readme_commands(MEASUREMENTS)]:
        command: Any = typer.main.get_command(app)  # typer's own click: read, not isinstance'd
        path: list[str] = []
        for word in words:
            if word not in getattr(command, "commands", {}):
                break
            command = command.commands[word]
            path.append(word)
        assert run(*path, "--help").code == 0, words
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        options = {w.strip("[]").split("=")[0] for w in words if w.strip("[").startswith("--")}
        assert options <= known, (words, options - known)


def test_every_benchmark_is_in_the_readme() -> None:
    import re

    listed = run("bench", "no-such-bench").err
    names = set(re.findall(r"[a-z][a-z-]*[a-z]", listed.split("choose", 1)[1])) - {"or"}
    assert {"core", "voice", "desktop", "planner", "switch"} <= names, listed
    in_readme = {tuple(words) for words in _readme_commands(MEASUREMENTS)}
    for name in names:
        if name == "core":
            assert ("bench",) in in_readme
        else:  # with its options, if it has any ("bench voice-apps [--voices N]")
            assert any(said[:2] == ("bench", name) for said in in_readme), name


def test_bench_without_the_lab_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lab (lab/) comes with the dev extra only; the device image has `appliance bench`."""
    import sys

    monkeypatch.setitem(sys.modules, "appliance_lab", None)  # as if not installed
    for args in (("bench",), ("bench", "voice", "--sample", "0")):
        r = run(*args)
        assert r.code != 0 and r.out == ""
        assert r.err.count("\n") == 1 and "lab" in r.err and "not installed" in r.err, r.err


def test_bare_undo_on_a_machine_without_a_screen(tmp_path: Path) -> None:
    """`appliance undo` as the README writes it, with no display and no accessibility bus."""
    import os
    import subprocess
    import sys

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    screenless = {k: v for k, v in os.environ.items() if k not in (
        "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS")}
    screenless |= {"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_RUNTIME_DIR": str(runtime)}
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(messages()))

    def appliance(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "appliance.cli", *args], env=screenless,
                              capture_output=True, text=True, timeout=120, check=False)

    nothing = appliance("undo")
    assert (nothing.returncode, nothing.stdout) == (
        0, "There's nothing to undo.\n"), nothing.stderr
    assert appliance("say", "untick urgent", "--desktop", f"sim:{scene}").returncode == 0
    needs = appliance("undo")
    assert needs.returncode == 1 and len(needs.stderr.splitlines()) == 1, needs.stderr
    assert "Unticked Urgent" in needs.stderr and "--desktop sim:" in needs.stderr
    done = appliance("undo", "--desktop", f"sim:{scene}")
    assert done.returncode == 0 and done.stdout.startswith("Undone: Unticked Urgent"), done
