"""Name resolution (appliance.desktop.resolve) against snapshots of real sim-desktop scenes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from appliance.desktop.model import Snapshot
from appliance.desktop.resolve import MIN_SCORE, best_name, find_targets
from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop

MESSAGES = Path(__file__).resolve().parents[2] / "appliance" / "scenes" / "messages.json"


def snap(data: dict[str, Any]) -> Snapshot:
    return SimDesktop(Scene.model_validate(data)).snapshot()


@pytest.fixture(scope="module")
def messages() -> Snapshot:
    return snap(json.loads(MESSAGES.read_text()))


def two_windows() -> dict[str, Any]:
    return {"applications": [
        {"name": "Mail", "windows": [{"title": "Inbox", "children": [
            {"role": "push button", "name": "OK"},
            {"role": "label", "name": "Send"},
            {"role": "push button", "name": "Send"},
        ]}]},
        {"name": "Notes", "windows": [{"title": "Notes", "states": ["active"], "children": [
            {"role": "push button", "name": "OK", "states": ["invisible"]},
            {"role": "push button", "name": "OK"},
            {"role": "push button", "name": ""},
            {"role": "text", "name": "Note: today's list!"},
        ]}]},
    ]}


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("radio four", "Radio 4"), ("Radio 4", "Radio 4"), ("the send button", "Send"),
        ("send", "Send"), ("SEND!", "Send"), ("message box", "Message"),
        ("message field", "Message"), ("the urgent check box", "Urgent"),
        ("contacts list", "Contacts"), ("the doctor item", "Doctor"), ("pin", "PIN"),
    ],
)
def test_spoken_forms_match_exactly(messages: Snapshot, said: str, name: str) -> None:
    best = find_targets(said, messages)[0]
    assert best.node.name == name
    assert best.score == 1.0


def test_punctuation_and_case_are_ignored() -> None:
    best = find_targets("note todays list", snap(two_windows()))[0]
    assert (best.node.name, best.score) == ("Note: today's list!", 1.0)


def test_near_miss_scores_lower(messages: Snapshot) -> None:
    """A speech slip ("fan" for "send") still finds the button, with a score the policy confirms."""
    best = find_targets("the fan button", messages)[0]
    assert best.node.name == "Send"
    assert MIN_SCORE <= best.score < 0.6
    sent = find_targets("sent", messages)[0]
    assert sent.node.name == "Send" and 0.6 < sent.score < 1.0


def test_part_of_a_long_name(messages: Snapshot) -> None:
    best = find_targets("delete", messages)[0]
    assert best.node.name == "Delete conversation"
    assert 0.6 <= best.score < 1.0


def test_exact_beats_fuzzy_and_nothing_below_threshold(messages: Snapshot) -> None:
    matches = find_targets("urgent", messages)
    assert [m.node.name for m in matches] == ["Urgent"]
    assert all(m.score >= MIN_SCORE for m in find_targets("xyzzy", messages))
    assert find_targets("qqqqqqqqqqqqqqqq", messages) == []
    assert find_targets("", messages) == []


def test_roles_filter(messages: Snapshot) -> None:
    boxes = find_targets("send", messages, roles=frozenset({"check box"}))
    assert all(m.node.role == "check box" for m in boxes)
    assert "Send" not in [m.node.name for m in boxes]
    buttons = find_targets("urgent", messages, roles=frozenset({"push button"}))
    assert all(m.node.role == "push button" for m in buttons)
    assert find_targets("urgent", messages, roles=frozenset({"check box"}))[0].node.name == "Urgent"


def test_role_word_picks_the_button_over_the_label() -> None:
    best = find_targets("the send button", snap(two_windows()))[0]
    assert best.node.role == "push button"


def test_active_window_then_visible_first() -> None:
    s = snap(two_windows())
    matches = find_targets("ok", s)
    assert [m.score for m in matches] == [1.0, 1.0, 1.0]
    first, second, third = (m.node for m in matches)
    assert (first.app, first.visible) == ("Notes", True)
    assert (second.app, second.visible) == ("Notes", False)
    assert third.app == "Mail"


def test_empty_names_never_match() -> None:
    s = snap(two_windows())
    assert all(m.node.name for m in find_targets("o", s, limit=50))
    assert all(m.node.name for m in find_targets(" ", s))


def test_limit() -> None:
    children = [{"role": "list item", "name": f"Song {i}"} for i in range(40)]
    window = {"title": "M", "children": children}
    s = snap({"applications": [{"name": "Music", "windows": [window]}]})
    assert len(find_targets("song", s, limit=5)) == 5
    assert find_targets("song twelve", s)[0].node.name == "Song 12"


def test_best_name() -> None:
    apps = ["Calendar", "Radio", "Messages"]
    assert best_name("calendar", apps) == ("Calendar", 1.0)
    assert best_name("the radio", apps) == ("Radio", 1.0)
    name, score = best_name("calender", apps) or ("", 0.0)
    assert name == "Calendar" and 0.6 < score < 1.0
    assert best_name("zzz", apps) is None
    assert best_name("radio", []) is None
    assert best_name("fone", ["Phone", "Photos"]) == pytest.approx(("Phone", 0.83), abs=0.05)


def test_many_elements_still_exact() -> None:
    children = [{"role": "push button", "name": f"Button {i}"} for i in range(500)]
    children.append({"role": "push button", "name": "Radio 4"})
    s = snap({"applications": [{"name": "Big", "windows": [{"title": "B", "children": children}]}]})
    assert find_targets("button four hundred and two", s)[0].node.name == "Button 402"
    assert find_targets("radio four", s)[0].node.name == "Radio 4"
