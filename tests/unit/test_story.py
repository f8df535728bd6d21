"""The plain-language description of a turn (appliance/audit/story.py) and the days it is told
in (appliance/audit/days.py): pure, real `Turn` aggregates' events as the timeline's rows, no
journal, no server."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from appliance.audit.days import (
    day_span,
    on_day,
    parse_day,
    said_day,
    system_zone,
    zone_name,
    zone_of,
)
from appliance.audit.story import Ending, Group, Story, group_of, happening_words, told
from appliance.audit.timeline import AuditQueryError, row_of
from appliance.policy.validator import HIDDEN_WORDS
from appliance.settings import SettingsError, parse_value
from appliance.turn import Outcome, Turn
from appliance.web.turn_view import facts

LONDON = ZoneInfo("Europe/London")
SEND = {"intent": "activate", "target": "Send", "confidence": 1.0}


def rows_of(*turns: Turn) -> list[dict[str, Any]]:
    """Each turn's new events as the timeline's rows, in the order the turns are given."""
    events = [e for turn in turns for e in turn.collect_events()]
    return [row_of(i, e) for i, e in enumerate(events, 1)]


def one(*turns: Turn) -> Story:
    (story,) = told(rows_of(*turns), LONDON).stories
    return story


def asked(said: str = "click send", trigger: str = "voice") -> Turn:
    turn = Turn(trigger=trigger)
    turn.heard(said, "vosk", 0.92, {})
    turn.planned(SEND, "grammar", "", 0.1)
    turn.validated("confirm", "moderate", ["moderate action"])
    turn.ask_confirmation("Send needs a yes. Say yes to send, or no.", expires_at=0.0)
    turn.spoke(text="Send needs a yes. Say yes to send, or no.", timings={})
    return turn


def refused(said: str, reason: str, intent: dict[str, Any] | None = SEND,
            risk: str = "harmless") -> Turn:
    turn = Turn(trigger="voice")
    turn.heard(said, "vosk", 0.9, {})
    turn.planned(intent, "grammar", "", 0.1)
    turn.validated("reject", risk, [reason])
    turn.spoke(text=reason, timings={})
    turn.end(Outcome.rejected)
    return turn


def test_a_send_that_needed_a_yes_is_one_plain_sentence_and_its_steps_in_words() -> None:
    turn = asked()
    turn.answer("yes", "vosk", 0.95, {}, {"intent": "confirm"}, "grammar", "", 0.1, [])
    turn.confirm(by="voice")
    turn.validated("confirm", "moderate", ["moderate action"])
    turn.start_action(0, {"kind": "activate", "target": "0.2"}, "Send", {})
    turn.action_succeeded({"0.2": {"name": "Send", "activations": 0}},
                          {"0.2": {"name": "Send", "activations": 1}}, True, "sim")
    turn.spoke(text="Pressed Send.", timings={})
    turn.end(Outcome.executed)
    story = one(turn)
    assert story.title == "\u201cclick send\u201d"
    assert story.sentence == (
        "They said \u201cclick send\u201d. That needs a yes, so it asked; they said yes; it "
        "pressed Send. It said \u201cPressed Send.\u201d")
    assert (story.ending, story.group, story.look.label) == (Ending.done, Group.done, "Done")
    assert story.who_confirmed == "yes, by voice"
    steps = [s.text for s in story.steps]
    assert steps[:3] == ["Started by voice", "Heard \u201cclick send\u201d (92% sure)",
                         "Understood as: press Send"]
    assert "Pressed Send and checked the screen: Send was pressed" in steps
    assert steps.count("Said: \u201cSend needs a yes. Say yes to send, or no.\u201d") == 0
    assert not [s for s in steps if "{" in s or "->" in s]
    assert story.steps[0].at.tzinfo == LONDON


@pytest.mark.parametrize(("said", "reason", "intent", "risk", "ending", "setting"), [
    ("click delete conversation", "That could delete something, and deleting is turned off. "
     "A caregiver can allow it.", SEND, "destructive", Ending.safety, "allow_destructive"),
    ("click call", "Call is greyed out right now, so I can't use it.", SEND, "harmless",
     Ending.greyed_out, ""),
    ("click banana", "I can't find banana on the screen.", SEND, "harmless",
     Ending.not_on_screen, ""),
    ("blah blah fizz", "Sorry, I didn't understand that.", None, "harmless",
     Ending.not_understood, ""),
    ("open radio", "Radio is not allowed on this device.", {"intent": "open_app",
     "app": "Radio"}, "harmless", Ending.not_allowed, "denylist_apps"),
    ("undo that", "There's nothing to undo.", {"intent": "undo"}, "harmless",
     Ending.could_not, ""),
])
def test_a_refusal_says_what_it_was(said: str, reason: str, intent: dict[str, Any] | None,
                                    risk: str, ending: Ending, setting: str) -> None:
    story = one(refused(said, reason, intent, risk))
    assert (story.ending, story.group, story.setting) == (ending, Group.refused, setting)
    assert story.outcome == "rejected" and "rejected" not in story.sentence
    assert story.sentence.endswith(f"It said \u201c{reason}\u201d" + (
        "" if reason.endswith(".") else "."))


def test_an_undo_from_the_page_reads_as_the_caregivers_and_the_undone_turn_says_so() -> None:
    done = Turn(trigger="voice")
    done.heard("untick urgent", "vosk", 0.9, {})
    done.planned({"intent": "set_value", "target": "Urgent", "value": False}, "grammar", "", 0)
    done.validated("execute", "harmless", [])
    done.start_action(0, {"kind": "set_value", "target": "0.1", "value": False}, "Urgent", {})
    done.action_succeeded({"0.1": {"name": "Urgent", "states": ["checked"]}},
                          {"0.1": {"name": "Urgent", "states": []}}, True, "sim")
    done.spoke(text="Unticked Urgent.", timings={})
    done.end(Outcome.executed)
    undo = Turn(trigger="web", device="web:Carol")
    undo.heard("undo that", "web", None, {})
    undo.planned({"intent": "undo"}, "grammar", "", 0)
    undo.validated("control", "harmless", [])
    undo.start_action(0, {"kind": "restore", "target": "0.1"}, "Urgent", {})
    undo.action_succeeded({}, {}, True, "sim")
    first = rows_of(done, undo)
    done.mark_undone(undo.id.hex, "undone")
    undo.spoke(text="Undone: Unticked Urgent.", timings={})
    undo.end(Outcome.undone)
    later = [row_of(len(first) + i, e) for i, e in enumerate(
        [*done.collect_events(), *undo.collect_events()], 1)]
    undone, by_carol = told(first + later, LONDON).stories
    assert by_carol.caregiver == "Carol" and by_carol.title == "Carol undid the last change"
    assert by_carol.sentence.startswith(
        "Carol pressed \u201cUndo this\u201d on the caregiver page. It put Urgent back.")
    assert "They said" not in by_carol.sentence
    assert (by_carol.ending, by_carol.look.label) == (Ending.undo, "Undid a change")
    assert (undone.ending, undone.look.label) == (Ending.undone, "Done, then undone")
    assert undone.later == "Later it was undone by Carol, from the caregiver page."
    assert "executed" not in undone.sentence and "It unticked Urgent." in undone.sentence
    assert "Undone later by Carol, from the caregiver page" in [s.text for s in undone.steps]


def test_a_question_dropped_replaced_or_waiting_says_which() -> None:
    declined = asked()
    declined.answer("no", "vosk", 0.9, {}, {"intent": "deny"}, "grammar", "", 0.1, [])
    declined.decline(by="switch")
    declined.end(Outcome.cancelled)
    replaced = asked("click banana")
    replaced.decline(by="new command")
    replaced.end(Outcome.cancelled)
    timed_out = asked()
    timed_out.time_out()
    timed_out.end(Outcome.timed_out)
    waiting = asked()
    stories = told(rows_of(declined, replaced, timed_out, waiting), LONDON).stories
    assert [s.ending for s in stories] == [Ending.declined, Ending.replaced, Ending.timed_out,
                                           Ending.waiting]
    assert [s.group for s in stories] == [Group.cancelled] * 3 + [Group.waiting]
    assert "they said no (with the switch); it did nothing" in stories[0].happened
    assert stories[0].who_confirmed == "no, with the switch"
    assert "a new command came before an answer" in stories[1].happened
    assert stories[1].who_confirmed == ""
    assert (stories[2].setting, stories[2].who_confirmed) == ("confirm_timeout_s", "no answer")
    assert stories[3].happened.endswith("it is waiting for an answer.")
    assert stories[3].took_s is None


def test_words_for_a_hidden_field_are_never_told() -> None:
    turn = Turn(trigger="voice")
    turn.heard(HIDDEN_WORDS, "vosk", 0.9, {})
    turn.planned({"intent": "type_text", "text": "[redacted]", "target": "PIN"}, "grammar", "",
                 0.1)
    turn.validated("execute", "harmless", [])
    turn.start_action(0, {"kind": "type_text", "target": "0.6", "text": "[redacted]"}, "PIN",
                      {})
    turn.action_succeeded({}, {}, True, "sim")
    turn.end(Outcome.executed)
    story = one(turn)
    assert story.title == "Words for a hidden field"
    assert "[redacted]" not in story.sentence and "typed into PIN" in story.sentence


def test_every_outcome_has_a_group_and_an_unended_turn_waits() -> None:
    assert {o.value: group_of(o.value) for o in Outcome if o.value not in (
        "needs_confirmation",)} == {
        "executed": Group.done, "answered": Group.done, "undone": Group.done,
        "rejected": Group.refused, "clarify": Group.cancelled, "cancelled": Group.cancelled,
        "timed_out": Group.cancelled, "failed": Group.failed, "interrupted": Group.failed}
    assert group_of("") == Group.waiting


def test_logins_and_setting_changes_are_sentences() -> None:
    base = {"seq": 1, "time": "", "aggregate": "Device", "turn": "", "detail": ""}
    assert happening_words({**base, "event": "SettingChanged", "device": "", "data": {
        "key": "allow_destructive", "old": False, "new": True, "by": "Carol"}}) == (
        "Carol changed \u201cAllow deleting\u201d from no to yes")
    assert happening_words({**base, "event": "WebAccess", "device": "web", "data": {
        "what": "login_failed", "caregiver": "Mallory", "address": "10.0.0.9"}}) == (
        "A login as \u201cMallory\u201d failed (from 10.0.0.9)")
    assert happening_words({**base, "event": "DeviceFault", "device": "microphone", "data": {
        "message": "no input device"}}) == "Microphone fault: no input device"


def test_technical_detail_is_never_a_python_or_json_object() -> None:
    shown = facts({"intent": {"intent": "activate", "target": "Send", "confidence": 1.0},
                   "reasons": ["moderate action"], "notes": [], "verified": True,
                   "latency_ms": 2.8391})
    assert shown == ("intent: (intent activate, target Send, confidence 1); reasons: (moderate "
                     "action); notes: none; verified: yes; latency ms: 2.839")
    assert not set("{}[]'\"") & set(shown)


# -- days --------------------------------------------------------------------------------------


def test_days_are_said_as_people_say_them() -> None:
    today = date(2026, 12, 2)
    assert [said_day(today - timedelta(days=n), today) for n in (0, 1, 2)] == [
        "Today", "Yesterday", "Monday 30 November"]
    assert said_day(date(2025, 12, 24), today) == "Wednesday 24 December 2025"
    assert on_day(today, today) == "today" and on_day(date(2026, 11, 30), today) == (
        "on Monday 30 November")
    assert parse_day("Yesterday", today) == date(2026, 12, 1)
    assert parse_day("2026-11-02", today) == date(2026, 11, 2)
    with pytest.raises(AuditQueryError, match="try today, yesterday or 2026-11-30"):
        parse_day("last tuesday", today)


def test_a_day_begins_at_local_midnight_and_may_be_23_hours_long() -> None:
    begun, over = day_span(date(2026, 3, 29), LONDON)  # the clocks go forward
    assert begun.astimezone(UTC) == datetime(2026, 3, 29, 0, 0, tzinfo=UTC)
    assert over.astimezone(UTC) - begun.astimezone(UTC) == timedelta(hours=23)
    auckland = day_span(date(2026, 12, 1), ZoneInfo("Pacific/Auckland"))[0]
    assert auckland.astimezone(UTC) == datetime(2026, 11, 30, 11, 0, tzinfo=UTC)


def test_the_time_zone_setting_names_a_zone_or_leaves_the_systems() -> None:
    assert parse_value("time_zone", "Pacific/Auckland") == "Pacific/Auckland"
    assert parse_value("time_zone", "") == ""
    for wrong in ("Mars/Olympus", "../../etc/passwd", "Europe"):
        with pytest.raises(SettingsError, match="not a time zone"):
            parse_value("time_zone", wrong)
    assert zone_of("") == system_zone() and zone_of("Asia/Tokyo") == ZoneInfo("Asia/Tokyo")
    assert zone_name(ZoneInfo("Etc/UTC")) == "UTC"
