"""Seeing and teaching without a screen: phrases from words, fingerprints, what the validator
asks or refuses for seen and taught elements, and taught targets folded from the journal."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.seeing.fingerprint import BLANK, average_hash, distance, same
from appliance.desktop.seeing.ocr import Word, clean, phrases, without_secrets
from appliance.desktop.seeing.taught import (
    LOOKS_CHANGED,
    SEEN_ROLE,
    TaughtTarget,
    seen_reason,
    seen_refusal,
    taught_node,
)
from appliance.intents.model import Activate
from appliance.policy.validator import Decision, validate
from appliance.settings import Settings


def _word(text: str, x: int, line: int = 1) -> Word:
    return Word(text, (x, 30 * line, 8 * len(text), 12), 0.9, (line, 1, 1))


def test_words_on_a_line_split_at_wide_gaps() -> None:
    words = (_word("Save", 0), _word("as", 36), _word("Cancel", 200), _word("Name", 0, line=2))
    assert [p.text for p in phrases(words)] == ["Save as", "Cancel", "Name"]


def test_border_marks_are_not_words() -> None:
    assert clean("|DRG|") == "DRG"
    assert clean("||") == ""
    assert clean("+/-") == "+/-"


def _button(label_x: int) -> Image.Image:
    image = Image.new("RGB", (80, 30), "white")
    ImageDraw.Draw(image).rectangle((label_x, 8, label_x + 30, 20), fill="black")
    return image


def test_fingerprints_tell_the_same_spot_from_another() -> None:
    assert same(average_hash(_button(10)), average_hash(_button(10)))
    assert not same(average_hash(_button(10)), average_hash(_button(45)))
    blank = average_hash(Image.new("RGB", (80, 30), "white"))
    assert blank == BLANK and distance(blank, blank) == 64  # a blank spot never matches


def _target(**update: object) -> TaughtTarget:
    base = TaughtTarget(id="t1", app="TkForm", window="Clinic form", name="Save",
                        offset=(10, 10, 40, 20), text="Submit", fingerprint="f" * 16)
    return base.model_copy(update=update)


def _snapshot(node: Node) -> Snapshot:
    return Snapshot(nodes=(node,), applications=("TkForm",), active_app="TkForm",
                    active_window="Clinic form")


def test_a_seen_element_always_asks_first() -> None:
    node = Node(id="seen:0", role=SEEN_ROLE, name="Submit", app="TkForm", window="Clinic form",
                bounds=(0, 0, 50, 20), source="seen", confidence=0.9)
    verdict = validate(Activate(target="Submit"), _snapshot(node), Settings(), 0)
    assert verdict.decision == Decision.confirm
    assert seen_reason(node) in verdict.reasons


def test_a_taught_target_acts_until_it_missed_twice_and_a_changed_one_is_refused() -> None:
    good = taught_node(_target(), "TkForm", "Clinic form", (10, 10, 40, 20), 1.0, True)
    assert validate(Activate(target="Save"), _snapshot(good), Settings(), 0).decision == (
        Decision.execute)
    missed = taught_node(_target(misses_since_hit=2), "TkForm", "Clinic form",
                         (10, 10, 40, 20), 1.0, True)
    assert validate(Activate(target="Save"), _snapshot(missed), Settings(), 0).decision == (
        Decision.confirm)
    moved = taught_node(_target(), "TkForm", "Clinic form", (10, 10, 40, 20), 0.4, False)
    assert LOOKS_CHANGED in moved.states and seen_refusal(moved)
    verdict = validate(Activate(target="Save"), _snapshot(moved), Settings(), 0)
    assert verdict.decision == Decision.reject and "blind" in verdict.reasons[0]


def test_taught_targets_come_back_only_as_the_chain_vouches(tmp_path: Path) -> None:
    import sqlite3

    from appliance.journal.application import Journal

    store = str(tmp_path / "journal.sqlite")
    journal = Journal(store)
    journal.teach_target(_target(by="voice"))
    journal.target_used("t1", hit=False)
    journal.target_used("t1", hit=False)
    [back] = journal.taught_targets()
    assert (back.name, back.by, back.misses_since_hit) == ("Save", "voice", 2)
    journal.target_used("t1", hit=True)
    assert journal.taught_targets()[0].misses_since_hit == 0

    # Someone edits the taught event's stored state: the chain no longer vouches for it.
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT rowid, state FROM stored_events WHERE topic LIKE "
                          "'%TargetTaught%'").fetchall()
        assert rows
        rowid, state = rows[0]
        db.execute("UPDATE stored_events SET state=? WHERE rowid=?",
                   (bytes(state).replace(b"Save", b"Send"), rowid))
    assert Journal(store).taught_targets() == []


def test_what_a_password_label_shows_beside_or_under_it_is_never_read() -> None:
    """A window with no tree cannot say which field is secret: the label's neighbours are."""
    beside = phrases((_word("Name", 0), _word("Ada", 100), _word("Password", 0, line=2),
                      _word("hunter2", 100, line=2), _word("Show", 200, line=2)))
    assert [p.text for p in without_secrets(beside)] == ["Name", "Ada", "Password", "Show"]
    under = phrases((_word("PIN", 0), _word("4821", 0, line=2), _word("Next", 0, line=3)))
    assert [p.text for p in without_secrets(under)] == ["PIN", "Next"]
    inline = phrases((_word("Password:", 0), _word("hunter2", 80), _word("Pin", 0, line=2),
                      _word("to", 28, line=2), _word("top", 48, line=2)))
    assert [(p.text, len(p.words)) for p in without_secrets(inline)] == [
        ("Password:", 1), ("Pin to top", 3)]
