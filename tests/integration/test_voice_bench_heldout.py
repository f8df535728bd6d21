"""A small real-engine smoke run of `appliance bench voice`'s held-out section: held-out voices
(flite, festival, espeak-ng female) through the real pipeline (Silero VAD, Whisper, wake gate,
Session + GrammarPlanner + sim desktop). No timing asserts: figures belong to the bench."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from appliance_lab.bench.spoken.accuracy import bench_items
from appliance_lab.bench.spoken.conditions import CONDITIONS
from appliance_lab.bench.spoken.corpus import items
from appliance_lab.bench.spoken.false_accepts import bench_false_accepts
from appliance_lab.bench.spoken.heldout_bench import goals
from appliance_lab.bench.spoken.runs import voice_options

pytestmark = pytest.mark.skipif(not (shutil.which("flite") and shutil.which("text2wave")),
                                reason="flite and festival come with scripts/setup.sh")
CLEAN = CONDITIONS[0]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_VOICE_CORPUS_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("recognizer", ["open", "closed"])
def test_held_out_items_through_the_real_pipeline(recognizer: str) -> None:
    from appliance.voice.commands import VoiceOptions

    if recognizer != "open" and "recognizer" not in VoiceOptions.__dataclass_fields__:
        pytest.skip("this build has no closed-set recognizer")
    wanted = {("flite:slt", "press the send button"), ("flite:rms", "volume at sixty"),
              ("festival:kal_diphone", "pick doctor"), ("espeak:en-us+f3@170/50", "hit enter")}
    chosen = [i for i in items("heldout", [CLEAN]) if (i.voice.label, i.sentence) in wanted]
    assert len(chosen) == 4
    progress: list[str] = []
    report = bench_items(chosen, recognizer, progress.append)
    assert report["items"] == 4 and progress
    assert report["acting_items"] == 4  # each of these sentences plans an action on its scene
    assert report["misses"] == 4 - round(4 * report["intent_accuracy"])
    assert set(report["by_voice"]) == {v for v, _ in wanted}
    # Clear, clean commands: most are heard and acted as their text plans (margin for voices
    # Whisper finds hard; the figures themselves are the bench's).
    assert report["intent_accuracy"] >= 0.5
    assert report["wake_false_rejects"] <= 0.5
    assert report["end_of_speech_to_action_done_ms"]["all"]["n"] >= 2


def test_speech_without_the_wake_phrase_and_false_accepts_per_hour() -> None:
    from appliance_lab.bench.spoken.corpus import clean_speech
    from appliance_lab.bench.spoken.voices import Voice

    voice = Voice(engine="flite", name="slt")  # Whisper hears its wake phrase (flite kal's not)
    clips = [clean_speech(voice, "The doctor said to rest for a week."),
             clean_speech(voice, "Hey juniper, click send.")]  # one true wake, to be counted
    report = bench_false_accepts("heldout", 0.0, "open", lambda _line: None, clips=clips)
    assert report["segments"] >= 2
    assert report["false_accepts"] >= 1  # the wake phrase said above
    assert report["hours"] > 0 and report["false_accepts_per_hour"] > 0


def test_goals_are_reported_next_to_the_figures() -> None:
    result = {"accuracy": {"by_condition": {"clean": {"intent_accuracy": 0.97},
                                            "snr10": {"intent_accuracy": 0.8}},
                           "wake_false_rejects": 0.02,
                           "end_of_speech_to_action_done_ms": {"all": {"p50_ms": 300.0, "n": 5}}},
              "false_accepts": {"false_accepts_per_hour": 0.0}}
    g = goals(result)
    assert g["intent_accuracy_clean"]["met"] is True
    assert g["intent_accuracy_snr10"]["met"] is False
    assert g["end_of_speech_to_action_done_p50_ms"]["met"] is False
    assert g["wake_false_accepts_per_hour"]["met"] is True


def test_a_recognizer_this_build_lacks_is_one_clear_error() -> None:
    from appliance.voice.commands import VoiceOptions
    from appliance_lab.bench.spoken.runs import RecognizerMissing

    if "recognizer" in VoiceOptions.__dataclass_fields__:
        assert voice_options("closed", 1.0).recognizer == "closed"
    else:
        with pytest.raises(RecognizerMissing):
            voice_options("closed", 1.0)
    assert voice_options("open", None).pace is None
