"""A small real-engine smoke run of `appliance bench voice-enrolled`: one held-out voice enrolled
through VoiceProfile.add, two of its test takes through the real pipeline with the profile. No
figure is asserted beyond what a working run must give: the figures belong to the bench."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from appliance.voice.hearing.profile import VoiceProfile
from appliance_lab.bench.spoken.personal import COMMAND_TAKES, WAKE_TAKES, enrolled_phrases
from appliance_lab.bench.spoken.personal_bench import goals, run_arm, summarize_arm

pytestmark = pytest.mark.skipif(not (shutil.which("sox") and shutil.which("text2wave")),
                                reason="festival and sox come with scripts/setup.sh")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_VOICE_CORPUS_CACHE", str(tmp_path / "cache"))


def test_one_voice_enrolled_and_heard_through_the_pipeline(tmp_path: Path) -> None:
    progress: list[str] = []
    result = run_arm("after", "heldout", 2, 1, tmp_path / "work", progress.append,
                     conditions=("clean",))
    rows = result["rows"]
    assert len(rows) == 2 and progress
    assert {r["outcome"] for r in rows} <= {"right", "asked", "wrong", "missed"}
    (profile,) = (tmp_path / "work" / "profiles").glob("*.voice.sqlite")
    takes = VoiceProfile(profile).takes()
    assert len(takes) == WAKE_TAKES + COMMAND_TAKES * len(enrolled_phrases())
    summary = summarize_arm(result)
    assert summary["all"]["n"] == 2 and summary["all"]["right"]["ci95"] is not None
    assert summary["peak_rss_mb"] > 0
    assert set(goals(summary, None)) >= {"right_at_once_clean", "wrong_unasked"}


def test_the_wake_stages_count_each_loss_at_the_stage_that_made_it() -> None:
    """The report of `wake_stages`: a wake phrase the takes heard is woken whatever Whisper
    did; one Whisper woke and the person's verifier refused in a room read as quiet is counted
    there; a near miss is accepted as the pipeline would accept it."""
    from appliance.voice.hearing.take_audio import NOISY_ROOM_DB
    from appliance_lab.bench.spoken.wake_stages import Stages, report

    def said(kind: str, takes: bool, whisper: bool, fit: float, snr: float) -> Stages:
        return Stages(kind, "snr10", "v", "hey juniper, stop", takes, whisper, "", 5.0, fit,
                      1.0, snr)

    quiet, noisy = NOISY_ROOM_DB + 1, NOISY_ROOM_DB - 5
    out = report([said("wake", True, False, 2.0, noisy), said("wake", False, True, 2.0, quiet),
                  said("wake", False, False, 0.5, noisy), said("near", False, True, 0.5, noisy),
                  said("near", False, True, 2.0, noisy)])
    assert out["snr10"]["woken"]["count"] == 1 and out["snr10"]["by_the_takes"] == 1
    assert out["snr10"]["lost"] == {"whisper_did_not_wake": 1,
                                    "of_them_the_verifier_would_pass": 1,
                                    "the_verifier_refused": 1, "of_them_in_a_room_judged_quiet": 1}
    assert out["near_misses"]["accepted"]["count"] == 1
    assert out["near_misses"]["verifier_passes"]["count"] == 1
