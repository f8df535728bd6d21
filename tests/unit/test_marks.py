"""'Show numbers' and 'show grid' on the sim: what a number said then does, through the real
grammar, validator, session and journal (each Session here stands for another process)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from appliance.desktop.marks import Marks
from appliance.desktop.model import Snapshot
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.marks import mark_pick
from appliance.intents.model import PickMark
from appliance.intents.planner import Plan
from appliance.journal.application import Journal
from appliance.kiosk import PanelFeed
from appliance.policy.validator import NO_MARKS, STALE_MARK
from appliance.session import Session, TurnReport
from appliance.turn import Turn
from tests.recording_panel import RecordingPanel
from tests.scenes import messages, settings_panel, write_scene


def _scene(tmp_path: Path, data: dict[str, Any]) -> Path:
    return write_scene(tmp_path / "scene.json", data)


def _say(tmp_path: Path, scene: Path, text: str) -> TurnReport:
    """One utterance in a fresh Session, as `appliance say` runs each in its own process."""
    journal = Journal(str(tmp_path / "journal.sqlite"))
    desktop = SimDesktop.from_file(scene)
    report = Session(journal, desktop, GrammarPlanner()).say(text)
    desktop.save()
    return report


def _marks(report: TurnReport) -> Marks:
    assert report.marks is not None, report
    return Marks.model_validate(report.marks)


def _number_of(marks: Marks, name: str) -> int:
    return next(m.number for m in marks.numbers if m.name == name)


def _element(scene: Path, name: str) -> dict[str, Any]:
    snap = SimDesktop.from_file(scene)
    for _nid, _app, _win, _parent, el in snap._walk():
        if el.name == name:
            return el.model_dump()
    raise AssertionError(name)


def with_icon_button() -> dict[str, Any]:
    """The messages scene with a button that has no name (an icon), which changes Status."""
    data = messages()
    children = data["applications"][0]["windows"][0]["children"]
    children.append({"role": "push button", "name": "",
                     "effect": {"set": {"Status": {"value": "starred"}}}})
    return data


def test_a_number_presses_a_control_that_has_no_name(tmp_path: Path) -> None:
    scene = _scene(tmp_path, with_icon_button())
    shown = _marks(_say(tmp_path, scene, "show numbers"))
    names = [m.name for m in shown.numbers]
    assert "" in names and "Send" in names and "Urgent" in names
    unnamed = next(m.number for m in shown.numbers if m.name == "")
    report = _say(tmp_path, scene, str(unnamed))
    assert report.decision == "executed", report
    assert report.planner == "marks"
    assert report.spoken == f"Pressed number {unnamed}."
    assert _element(scene, "Status")["value"] == "starred"


def test_spoken_number_words_and_verbs_pick_the_same_badge(tmp_path: Path) -> None:
    scene = _scene(tmp_path, messages())
    shown = _marks(_say(tmp_path, scene, "show the numbers"))
    urgent = _number_of(shown, "Urgent")
    assert "checked" in _element(scene, "Urgent")["states"]
    report = _say(tmp_path, scene, f"click number {urgent}")
    assert report.decision == "executed" and report.spoken == "Unticked Urgent.", report
    assert "checked" not in _element(scene, "Urgent")["states"]
    # Numbers stay shown after an action (refreshed from the new screen).
    assert _marks(report).kind == "numbers"


def test_a_number_follows_every_rule_a_name_does(tmp_path: Path) -> None:
    scene = _scene(tmp_path, settings_panel())
    shown = _marks(_say(tmp_path, scene, "show numbers"))
    report = _say(tmp_path, scene, str(_number_of(shown, "Tidy up")))
    assert report.decision == "rejected" and "deleting is turned off" in report.spoken
    assert _element(scene, "Tidy up")["activations"] == 0
    shown = _marks(_say(tmp_path, scene, "show numbers"))
    report = _say(tmp_path, scene, str(_number_of(shown, "Sign out")))
    assert report.decision == "needs_confirmation", report  # moderate: asks first


def test_a_number_on_a_changed_screen_is_refused_and_the_numbers_redrawn(tmp_path: Path) -> None:
    scene = _scene(tmp_path, messages())
    shown = _marks(_say(tmp_path, scene, "show numbers"))
    send = _number_of(shown, "Send")
    data = messages()  # the application changed on its own: Send became Save draft
    for el in data["applications"][0]["windows"][0]["children"]:
        if el["name"] == "Send":
            el["name"] = "Save draft"
            el.pop("risk")
    write_scene(scene, data)
    report = _say(tmp_path, scene, str(send))
    assert report.decision == "rejected" and report.spoken == STALE_MARK
    assert _element(scene, "Save draft")["activations"] == 0
    redrawn = _marks(report)
    assert _number_of(redrawn, "Save draft") == send
    # The redrawn numbers are the ones that count now.
    assert _say(tmp_path, scene, str(send)).decision == "executed"
    assert _element(scene, "Save draft")["activations"] == 1


def test_numbers_mean_nothing_once_hidden(tmp_path: Path) -> None:
    scene = _scene(tmp_path, messages())
    _say(tmp_path, scene, "show numbers")
    hidden = _say(tmp_path, scene, "hide numbers")
    assert hidden.decision == "answered" and hidden.marks is None
    assert mark_pick("3", "numbers") is not None  # the words would be a pick...
    assert _say(tmp_path, scene, "3").planner == "grammar"  # ...but nothing is shown


def test_a_pick_without_numbers_is_refused_plainly(tmp_path: Path) -> None:
    scene = _scene(tmp_path, messages())
    journal = Journal(str(tmp_path / "journal.sqlite"))
    report = Session(journal, SimDesktop.from_file(scene), GrammarPlanner()).choose(
        PickMark(number=3), "3", trigger="switch")
    assert report.decision == "rejected" and report.spoken == NO_MARKS


class _ModelPlanner:
    """A language model that answers with a number pick, which it must never be able to."""

    def plan(self, text: str, snapshot: Snapshot, history: Sequence[str] = ()) -> Plan:
        return Plan(intent=PickMark(number=1, words=text), planner="ollama")


def test_a_model_cannot_pick_a_number(tmp_path: Path) -> None:
    scene = _scene(tmp_path, messages())
    _say(tmp_path, scene, "show numbers")
    journal = Journal(str(tmp_path / "journal.sqlite"))
    desktop = SimDesktop.from_file(scene)
    report = Session(journal, desktop, _ModelPlanner()).say("do the first thing")
    assert report.decision == "rejected"
    assert all(el.activations == 0 for *_r, el in desktop._walk())


def _cell_over(marks: Marks, snapshot: Snapshot, name: str) -> int:
    node = next(n for n in snapshot.nodes if n.name == name)
    assert node.bounds is not None
    x, y = node.bounds[0] + 5, node.bounds[1] + node.bounds[3] // 2
    for number, cell in enumerate(marks.grid().cells(), start=1):
        if cell.x <= x < cell.x + cell.width and cell.y <= y < cell.y + cell.height:
            return number
    raise AssertionError(name)


def test_the_grid_narrows_then_clicks_what_is_under_it(tmp_path: Path) -> None:
    scene = _scene(tmp_path, messages())
    grid = _marks(_say(tmp_path, scene, "show grid"))
    assert grid.kind == "grid"
    # Narrow down until a cell's middle lands on Doctor, then click there.
    for _ in range(4):
        snapshot = SimDesktop.from_file(scene).snapshot()
        cell = _cell_over(grid, snapshot, "Doctor")
        centre = grid.refined(cell).grid().centre()
        doctor = next(n for n in snapshot.nodes if n.name == "Doctor")
        assert doctor.bounds is not None
        bx, by, bw, bh = doctor.bounds
        if bx <= centre[0] < bx + bw and by <= centre[1] < by + bh:
            report = _say(tmp_path, scene, f"click {cell}")
            break
        grid = _marks(_say(tmp_path, scene, str(cell)))
    else:
        raise AssertionError("the grid never narrowed onto Doctor")
    assert report.decision == "executed", report
    assert report.spoken == "Clicked Doctor."
    assert _element(scene, "Doctor")["activations"] == 1
    assert report.marks is None  # the grid goes once it has clicked


def test_a_grid_click_where_nothing_is_known_asks_first(tmp_path: Path) -> None:
    scene = _scene(tmp_path, messages())
    journal = Journal(str(tmp_path / "journal.sqlite"))
    desktop = SimDesktop.from_file(scene)
    session = Session(journal, desktop, GrammarPlanner())
    empty = Marks(kind="grid", area=(2000, 2000, 300, 300))
    turn = Turn(trigger="test")  # as if the grid had been shown over empty screen
    turn.show_marks(empty.model_dump(mode="json"))
    turn.end("answered")
    journal.record(turn)
    report = session.say("click 5")
    assert report.decision == "needs_confirmation", report
    assert "unsure" in " ".join(report.reasons)
    answer = session.say("yes")
    assert answer.decision == "executed" and answer.spoken == "Clicked there.", answer
    assert all(el.activations == 0 for *_r, el in desktop._walk())


def test_the_kiosk_keeps_numbers_and_the_grid_drawn_until_hidden(tmp_path: Path) -> None:
    scene = _scene(tmp_path, messages())
    shown = _say(tmp_path, scene, "show numbers")
    panel = RecordingPanel()
    feed = PanelFeed(panel)
    feed.overlay(shown.marks)
    feed.mode("speaking", reply=shown.spoken)
    feed.mode("idle")
    marks = _marks(shown)
    for state in panel.states:  # every whole picture carries the badges
        assert [b.number for b in state.badges] == [m.number for m in marks.numbers]
        assert state.badges[0].bounds.width == marks.numbers[0].bounds[2]
        assert state.grid is None
    feed.overlay(_say(tmp_path, scene, "show grid").marks)
    feed.mode("idle")
    assert panel.states[-1].grid is not None and len(panel.states[-1].badges) == 9
    feed.overlay(_say(tmp_path, scene, "hide grid").marks)
    feed.mode("idle")
    assert panel.states[-1].grid is None and panel.states[-1].badges == ()


def test_plan_says_what_showing_numbers_would_do(tmp_path: Path) -> None:
    from tests.cli_runner import run

    scene = _scene(tmp_path, messages())
    result = run("plan", "show numbers", "--desktop", f"sim:{scene}", "--json")
    assert result.code == 0, result.err
    assert result.json()["decision"] == "would_show"
