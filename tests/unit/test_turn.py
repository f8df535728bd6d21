"""Unit tests of the Turn state machine: pure, no journal, no desktop."""

from __future__ import annotations

import pytest

from appliance.turn import Outcome, Phase, Turn, TurnError


def acted_turn(kind: str = "type_text") -> Turn:
    turn = Turn(trigger="text")
    turn.heard("type hi into message", "text", None, {})
    turn.planned({"intent": "type_text", "text": "hi", "target": "Message"}, "grammar", "", 0.4)
    turn.validated("execute", "harmless", [])
    turn.start_action(0, {"kind": kind, "target": "0.0.0"}, "Message", {})
    return turn


def test_happy_path_records_named_events_in_order() -> None:
    turn = acted_turn()
    turn.action_succeeded({"0.0.0": {}}, {"0.0.0": {}}, True, "sim")
    turn.spoke(text="Typed hi into Message.", timings={})
    turn.end(Outcome.executed)
    names = [type(e).__name__ for e in turn.collect_events()]
    assert names == [
        "TurnStarted",
        "Heard",
        "Planned",
        "Validated",
        "ActionStarted",
        "ActionSucceeded",
        "Spoke",
        "TurnEnded",
    ]
    assert turn.phase == Phase.ended
    assert turn.undoable


def test_cannot_act_before_validation() -> None:
    turn = Turn(trigger="text")
    turn.heard("click send", "text", None, {})
    with pytest.raises(TurnError):
        turn.start_action(0, {"kind": "activate"}, "Send", {})


def test_confirmation_only_answers_a_pending_question() -> None:
    turn = Turn(trigger="text")
    with pytest.raises(TurnError):
        turn.confirm(by="voice")
    turn.heard("click send", "text", None, {})
    turn.planned({"intent": "activate", "target": "Send"}, "grammar", "", 0.1)
    turn.validated("confirm", "moderate", ["moderate action"])
    turn.ask_confirmation("Send needs a yes.", expires_at=100.0)
    assert turn.pending
    turn.heard("yes", "text", None, {})
    turn.planned({"intent": "confirm"}, "grammar", "", 0.1)
    assert turn.intent == {"intent": "activate", "target": "Send"}, (
        "the answer must not replace the plan"
    )
    turn.confirm(by="voice")
    assert not turn.pending and turn.confirmed_by == "voice"


def test_declined_and_timed_out_turns_are_not_undoable() -> None:
    for close in ("decline", "time_out"):
        turn = Turn(trigger="text")
        turn.heard("click send", "text", None, {})
        turn.planned({"intent": "activate", "target": "Send"}, "grammar", "", 0.1)
        turn.validated("confirm", "moderate", [])
        turn.ask_confirmation("?", expires_at=1.0)
        getattr(turn, close)(*(["voice"] if close == "decline" else []))
        turn.end(turn.outcome)
        assert not turn.undoable


def test_interrupt_only_when_an_action_is_in_flight() -> None:
    turn = acted_turn()
    assert turn.in_flight
    turn.interrupt()
    assert turn.outcome == Outcome.interrupted and not turn.in_flight
    with pytest.raises(TurnError):
        turn.interrupt()


def test_presses_are_not_undoable_and_undo_happens_once() -> None:
    press = acted_turn(kind="activate")
    press.action_succeeded({}, {}, True, "sim")
    press.end(Outcome.executed)
    assert not press.undoable
    with pytest.raises(TurnError):
        press.mark_undone("x", "restored")
    typed = acted_turn()
    typed.action_succeeded({}, {}, True, "sim")
    typed.end(Outcome.executed)
    typed.mark_undone("abc", "restored")
    assert not typed.undoable
    with pytest.raises(TurnError):
        typed.mark_undone("def", "restored")


def test_a_turn_ends_once() -> None:
    turn = Turn(trigger="text")
    turn.end(Outcome.rejected)
    with pytest.raises(TurnError):
        turn.end(Outcome.rejected)


def test_a_which_question_takes_only_one_of_its_options() -> None:
    turn = Turn(trigger="text")
    turn.heard("select radio", "text", None, {})
    turn.planned({"intent": "clarify", "question": "Which?"}, "grammar", "", 0.1)
    turn.validated("clarify", "harmless", ["Which?"])
    turn.ask_confirmation("Did you mean Radio 1 or Radio 4?", 1e12, options=["Radio 1", "Radio 4"])
    assert turn.asks_which
    with pytest.raises(TurnError):
        turn.clarify("Jazz FM", None)
    turn.clarify("Radio 4", {"intent": "select", "target": "Radio 4"})
    assert turn.intent == {"intent": "select", "target": "Radio 4"} and not turn.pending
    turn.validated("execute", "harmless", [])
    turn.start_action(0, {"kind": "select"}, "Radio 4", {})


def test_an_answer_needs_an_open_question_and_leaves_no_trace_when_refused() -> None:
    turn = acted_turn()
    version = turn.version
    with pytest.raises(TurnError):
        turn.answer("yes", "text", None, {}, {"intent": "confirm"}, "grammar", "", 0.1, [])
    assert turn.version == version and turn.transcripts == ["type hi into message"]
