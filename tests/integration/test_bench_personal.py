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
