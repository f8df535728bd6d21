"""The personal-templates benchmark's arithmetic: Wilson and Poisson intervals, how an item's
first turn is counted, and the enrolment and test takes kept apart (the run is `bench`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from appliance.voice.sink import Utterance
from appliance_lab.bench.spoken.outcome import Turn
from appliance_lab.bench.spoken.personal import ENROL, TEST, pairs, sample_items
from appliance_lab.bench.spoken.personal_bench import classify, outcomes
from appliance_lab.bench.stats import poisson_rate, wilson


def test_wilson_and_poisson_intervals() -> None:
    assert wilson(0, 0) is None
    assert wilson(0, 60) == (0.0, 0.06)
    low, high = wilson(57, 60) or (0.0, 0.0)
    assert 0.86 < low < 0.87 and 0.98 < high < 0.99
    assert poisson_rate(0, 1.0) == (0.0, 3.689)  # the "rule of three", exactly
    low, high = poisson_rate(3, 6.0) or (0.0, 0.0)
    assert abs(low - 0.619 / 6) < 0.002 and abs(high - 8.767 / 6) < 0.002


def _turn(decision: str, intent: dict[str, Any] | None) -> Turn:
    return Turn(Utterance("x", "closed:templates", None, {}), {"decision": decision,
                                                                "intent": intent}, "t1")


def test_an_items_first_turn_is_right_asked_wrong_or_missed() -> None:
    send: dict[str, Any] = {"intent": "activate", "target": "send"}
    expected = {"decision": "executed", "intent": send}
    assert classify(_turn("executed", send), expected) == "right"
    assert classify(_turn("needs_confirmation", send), expected) == "asked"
    assert classify(_turn("clarify", {"intent": "activate", "target": "save"}), expected) == "asked"
    assert classify(_turn("executed", {"intent": "scroll"}), expected) == "wrong"
    assert classify(_turn("rejected", None), expected) == "missed"
    assert classify(None, expected) == "missed"
    # "undo that" undoes the item before it in the run: heard as said, it is right.
    undo = {"decision": "rejected", "intent": {"intent": "undo"}}
    assert classify(_turn("undone", {"intent": "undo"}), undo) == "right"
    assert classify(_turn("rejected", {"intent": "deny"}), undo) == "wrong"


def test_a_wrong_command_refused_is_counted_apart_from_one_acted_on() -> None:
    """The goal is no wrong action done unasked: "don't do that" for "undo that" is wrong, but
    refused (nothing to deny), it does nothing."""
    undo = {"decision": "rejected", "intent": {"intent": "undo"}}
    rows = [{"outcome": classify(_turn(decision, intent), undo), "woke": True,
             "got": {"decision": decision, "intent": intent}}
            for decision, intent in (("rejected", {"intent": "deny"}),
                                     ("executed", {"intent": "scroll"}),
                                     ("undone", {"intent": "undo"}))]
    counted = outcomes(rows)
    assert counted["wrong"]["count"] == 2 and counted["wrong_acted"]["count"] == 1


def test_test_takes_are_never_enrolment_takes() -> None:
    assert not set(ENROL["normal"]) & set(TEST["normal"])
    assert not set(ENROL["slow"]) & set(TEST["slow"])
    items = sample_items("heldout", 4)
    assert len({i.voice.label for i in items}) == 15
    for condition in ("clean", "snr10", "snr5", "reverb", "slow"):
        assert len([i for i in items if i.condition == condition]) == 60
    assert all((i.scene, i.phrase) in pairs() for i in items)


def test_a_later_end_counts_last_pauses_won_and_inner_pauses_as_long_as_fragments() -> None:
    from appliance_lab.bench.spoken.late_end import NEVER, Pause, report

    def pause(pause_ms: int, last: bool, heard: str, sureness: float,
              start_ratio: float = 0.5, answer: bool = False) -> Pause:
        return Pause("clean", "stop", 350.0, pause_ms, last, heard, True, False, True, answer,
                     sureness, 0.5, start_ratio)

    found = [pause(NEVER, True, "stop", 0.9),  # ends at once, as before
             pause(NEVER, True, "stop", 0.3),  # ends after part of the wait
             pause(NEVER, True, "yes", 0.3, answer=True),  # an answer: never early
             pause(NEVER, True, "stop", 0.3, start_ratio=0.9),  # how another phrase begins
             pause(200, False, "cancel", 0.3),  # long enough at half the wait: a fragment
             pause(120, False, "cancel", 0.3)]  # too short to end
    rows = {(r["share_of_wait"], r["most_start_ratio"]): r for r in report(found)["rows"]}
    half = rows[(0.5, 0.8)]
    assert half["last_ended_later_right"]["count"] == 1
    assert (half["fragments"], half["inner_pauses_as_long"]) == (1, 1)
    assert half["fragments_heard_wrong"] == ["stop -> cancel (clean, pause 200 ms, start 0.50)"]
    assert rows[(0.5, 1.0)]["last_ended_later_right"]["count"] == 2
    assert rows[(0.6, 0.8)]["fragments"] == 0  # 200 ms is under 0.6 of 350
    assert rows[(1.0, 0.8)]["last_ended_later_right"]["count"] == 0


def test_a_pause_lasts_from_its_last_voiced_frame_to_the_next() -> None:
    from appliance_lab.bench.spoken.early_end import FRAME_BYTES
    from appliance_lab.bench.spoken.late_end import NEVER, pause_length

    frames = [True, True, False, False, False, False, True, False, False, False]
    assert pause_length(frames, 5 * FRAME_BYTES) == 80  # 4 quiet frames of 20 ms
    assert pause_length(frames, 10 * FRAME_BYTES) == NEVER  # quiet to the end


def test_a_verifier_trained_on_the_takes_is_weighed_where_it_accepts_as_many_near_misses() -> None:
    import numpy as np

    from appliance_lab.bench.spoken.person_verifier import Scored, fit_logistic, report

    rng = np.random.default_rng(0)
    x = np.r_[rng.normal(1.0, 0.3, (20, 3)), rng.normal(-1.0, 0.3, (60, 3))]
    y = np.r_[np.ones(20), np.zeros(60)]
    w, b = fit_logistic(x, y, 1e-3)
    assert ((x @ w + b > 0) == (y == 1)).all()  # two clouds apart are told apart

    def row(kind: str, condition: str, spotter: float, hidden: float) -> Scored:
        return Scored(kind, "v", condition, "line", spotter, hidden, 0.0)

    near = [row("near", "clean", s, h) for s, h in [(9, 1), (5, 9), (1, 1), (0, 0)] * 5]
    own = [row("own", "snr10", 8, 2), row("own", "clean", 10, 10), row("own", "snr5", 4, 0)]
    found = report([*near, *own, row("talk", "clean", 9.5, 0)])
    assert found["n"] == {"own": 3, "own_in_noise": 2, "near": 20, "talk": 1}
    # At 5 % of near misses the level is their second highest score (ties: none above it).
    by_spotter, by_hidden = found["spotter"][1], found["hidden"][1]
    assert (by_spotter["level"], by_hidden["level"]) == (9, 9)
    assert by_spotter["own_kept"]["count"] == 1 and by_spotter["talk_accepted"] == 1
    assert by_hidden["own_in_noise_kept"]["count"] == 0 and by_hidden["near_accepted"]["count"] == 0


def test_a_spotter_trained_on_more_babble_is_read_at_the_rule_s_levels_and_near_misses() -> None:
    import numpy as np

    from appliance_lab.bench.stats import level_accepting
    from appliance_lab.tuning.wake_spotter_babble import kept_at, read_at_levels

    assert level_accepting([float(v) for v in range(20)], 0.10) == 17.0  # two of 20 above it
    score = np.array([9.0, 7.0, -3.0, 8.5, 1.0, -2.5, 3.0, 0.5], np.float32)
    wake = np.array([True, True, True, False, False, False, False, False])
    found = read_at_levels(score, wake)
    assert found["wake sure"]["count"] == 1 and found["wake vetoed"]["count"] == 1
    assert found["other sure"]["count"] == 1 and found["other not vetoed"]["count"] == 4
    near = ~wake & (score > 0)  # 8.5, 1.0, 3.0, 0.5: at a quarter the level is 3.0
    kept = kept_at(score, wake, near, 0.25)
    assert kept["level"] == 3.0 and kept["count"] == 2 and kept["share"] == round(2 / 3, 3)


def test_the_candidates_levels_let_through_as_many_clips_as_the_products() -> None:
    import numpy as np

    from appliance_lab.tuning.wake_spotter_babble import reread_levels

    # The product's spotter: 4 of 8 other clips at or above -2, 2 at or above 2; the
    # candidate ranks them alike, on half the scale.
    other_product = np.array([-5.0, -4.0, -3.0, -2.5, -1.0, 1.0, 3.0, 5.0], np.float32)
    wake_product = np.array([9.0, 7.0, 0.0], np.float32)
    product = np.r_[other_product, wake_product]
    candidate = product / 2
    other = np.r_[np.ones(8, bool), np.zeros(3, bool)]
    found = reread_levels(product, candidate, other, ~other)
    assert found["SPOTTER_VETO"]["candidate"] == -0.88  # between -1.25 and -0.5
    assert found["TAKES_SPOTTER_FLOOR"]["candidate"] == 1.0  # between 0.5 and 1.5
    for level in ("SPOTTER_VETO", "TAKES_SPOTTER_FLOOR"):
        entry = found[level]
        assert entry["candidate: other passed"]["count"] == entry["product: other passed"]["count"]
    sure = found["SPOTTER_SURE"]  # on the line through (-2, -0.875) and (2, 1.0)
    assert sure["candidate"] == 3.81 and sure["candidate: wake kept"]["count"] == 1
    assert found["highest other"] == {"product": 5.0, "candidate": 2.5}


def test_spotters_merged_give_the_mean_of_their_log_odds() -> None:
    import numpy as np

    from appliance.voice.hearing.wake_spotter import WakeSpotter
    from appliance_lab.tuning.wake_spotter_babble import merged

    rng = np.random.default_rng(1)
    mean, scale = rng.normal(size=6).astype(np.float32), np.ones(6, np.float32)

    def one(hidden: int) -> WakeSpotter:
        return WakeSpotter("hey juniper", mean, scale,
                           rng.normal(size=(6, hidden)).astype(np.float32),
                           rng.normal(size=hidden).astype(np.float32),
                           rng.normal(size=hidden).astype(np.float32), float(rng.normal()))

    spotters = [one(4), one(4), one(4)]
    x = rng.normal(size=(5, 6)).astype(np.float32)
    expected = np.mean([s.logits(x) for s in spotters], axis=0)
    assert np.allclose(merged(spotters).logits(x), expected, atol=1e-5)


def test_window_answers_count_only_answers_to_a_question_asked() -> None:
    from appliance_lab.bench.spoken.window_answers import pairs as window_pairs
    from appliance_lab.bench.spoken.window_answers import summary

    chosen = window_pairs("tune", 2)
    assert {word for _ask, word, _v in chosen} == {"yes", "no"}
    assert all(ask.phrase == "click send" and ask.scene == "messages" for ask, _w, _v in chosen)

    def row(asked: bool, outcome: str, ms: float | None,
            decision: str = "executed") -> dict[str, Any]:
        return {"condition": "slow", "asked": asked, "outcome": outcome, "latency_ms": ms,
                "vad_ms": ms, "decision": decision}

    rows = [row(True, "right", 100.0), row(True, "right", 900.0), row(True, "wrong", 50.0),
            row(True, "missed", None, "needs_confirmation"), row(False, "missed", None)]
    slow = summary(rows)["slow"]
    assert slow["answers_asked_for"] == 4 and slow["wrong"] == 1 and slow["asked_again"] == 1
    assert slow["right_at_once"]["count"] == 2
    assert slow["end_of_speech_to_action_ms"]["n"] == 2
    assert summary(rows)["clean"]["answers_asked_for"] == 0


def test_answer_takes_count_doubts_of_right_answers_and_catches_of_wrong_ones() -> None:
    from appliance_lab.bench.spoken.answer_takes import AnswerTakes, report

    found = [AnswerTakes("snr5", "v", "no", {"yes": 0.2, "no": 0.1}, False, True),
             AnswerTakes("snr5", "v", "yes", {"yes": 0.2, "no": 0.1}, True, False),
             AnswerTakes("clean", "v", "yes", {"yes": 0.1, "no": 0.2}, False, True)]
    rows = {(r["condition"], r["said"]): r for r in report(found)["rows"]}
    assert rows["snr5", "both"]["doubted_when_right"]["count"] == 1
    assert rows["snr5", "both"]["caught_when_wrong"]["count"] == 1
    assert rows["all", "yes"]["doubted_when_right"]["share"] == 0.5
    assert rows["clean", "no"]["caught_when_wrong"]["count"] == 0


def test_the_spell_of_use_says_new_takes_and_teaches_what_the_products_learning_keeps() -> None:
    from appliance_lab.bench.spoken.corpus import load_part
    from appliance_lab.bench.spoken.personal_use import (
        NOT_IN_USE,
        USE,
        USE_SLOW,
        teaches,
        use_items,
    )

    assert not set(USE) & {*ENROL["normal"], *TEST["normal"]}
    assert not set(USE_SLOW) & {*ENROL["slow"], *TEST["slow"]}
    assert all(v.gaps for v in USE_SLOW)
    voice = load_part("tune").voices[0]
    spell = use_items("tune", voice)
    assert spell == use_items("tune", voice)
    assert not {i.phrase for i in spell} & set(NOT_IN_USE)
    assert len({i.item_id for i in spell}) == len(spell)
    assert not {i.item_id for i in spell} & {i.item_id for i in sample_items("tune", 4)}
    assert "slow" not in {i.condition for i in spell}
    slow = use_items("tune", voice, style="slow")
    assert {i.condition for i in slow} == {"slow"} and {i.style for i in slow} == {"slow"}
    assert [i.phrase for i in slow] == [i.phrase for i in spell]
    assert not {i.item_id for i in slow} & {i.item_id for i in sample_items("tune", 4)}
    intent = {"intent": "activate", "target": "send"}
    expected = {"decision": "executed", "intent": intent}

    def row(outcome: str, engine: str, got: dict[str, Any] | None) -> dict[str, Any]:
        return {"outcome": outcome, "engine": engine, "got": got, "expected": expected}

    assert teaches(row("right", "closed:whisper", expected))
    assert not teaches(row("right", "closed:templates", expected))  # heard by a take already
    assert not teaches(row("right", "open:whisper", expected))
    asked = {"decision": "needs_confirmation", "intent": intent}
    assert teaches(row("asked", "closed:templates", asked))  # the person says yes
    other = {"decision": "needs_confirmation", "intent": {"intent": "activate", "target": "x"}}
    assert not teaches(row("asked", "closed:whisper", other))
    assert not teaches(row("wrong", "closed:whisper", {**expected, "intent": other["intent"]}))
    assert not teaches(row("missed", "closed:whisper", None))


def test_near_misses_are_counted_by_the_profile_each_stage_lets_them_through_with() -> None:
    from appliance_lab.bench.spoken.near_used import NearMiss, Passed, report

    def near(enrolled: tuple[bool, bool], used: tuple[bool, bool]) -> NearMiss:
        return NearMiss("v", "near", "hey junior", "clean", 3.0,
                        Passed(*enrolled, 0.5), Passed(*used, 0.4))

    found = [near((False, False), (True, True)), near((True, False), (False, False)),
             near((True, True), (True, True)), near((False, False), (False, False))]
    assert report(found) == {
        "n": 4,
        "verifier": {"enrolled": 2, "used": 2, "newly": 1, "no_longer": 1},
        "takes": {"enrolled": 1, "used": 2, "newly": 1, "no_longer": 0},
    }


def test_the_false_accept_run_hears_each_chunk_with_the_arms_profile(tmp_path: Path) -> None:
    from appliance_lab.bench.spoken.corpus import load_part
    from appliance_lab.bench.spoken.personal import used_path
    from appliance_lab.bench.spoken.personal_fa import chunk_profile, profile_name, results_path

    voice = load_part("tune").voices[0]
    assert chunk_profile(tmp_path, "tune", voice, "before", True, True) is None
    with pytest.raises(SystemExit) as stopped:  # a used profile that is not there
        chunk_profile(tmp_path, "tune", voice, "used", True, True)
    assert "personal_use --part tune" in str(stopped.value) and "\n" not in str(stopped.value)
    used = used_path(tmp_path, "tune", voice)
    used.parent.mkdir()
    used.write_bytes(b"")
    assert chunk_profile(tmp_path, "tune", voice, "used", True, True) == used
    assert results_path(tmp_path, "tune", "used", profile_name("used", True, True)).name \
        == "fa-tune-used-v1.jsonl"
    assert results_path(tmp_path, "tune", "after", profile_name("after", True, True)).name \
        == "fa-tune-after-speech+room-v1.jsonl"
