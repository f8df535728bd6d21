"""The webrtcvad analyzer: pipecat's loudness is measured only when a minimum volume asks for it."""

from __future__ import annotations

import array

import pytest
from pipecat.audio.vad.vad_analyzer import VADAnalyzer, VADState

from appliance.voice.audio.pcm import PIPELINE_RATE
from appliance.voice.commands import speech_pcm
from appliance.voice.hearing.vad import FRAME_MS, VadSettings, WebRTCVADAnalyzer

FRAME_BYTES = PIPELINE_RATE * FRAME_MS // 1000 * 2


def states(analyzer: VADAnalyzer, pcm: bytes) -> list[VADState]:
    analyzer.set_sample_rate(PIPELINE_RATE)
    return [analyzer._run_analyzer(pcm[i:i + FRAME_BYTES])
            for i in range(0, len(pcm) - FRAME_BYTES + 1, FRAME_BYTES)]


class Measured(WebRTCVADAnalyzer):
    """pipecat's own path: the loudness measured on every frame, whatever min_volume is."""

    def _get_smoothed_volume(self, audio: bytes) -> float:
        return VADAnalyzer._get_smoothed_volume(self, audio)


@pytest.fixture(scope="module")
def spoken() -> bytes:
    gap = bytes(PIPELINE_RATE * 2)  # Piper's voice between seconds of silence
    return gap + speech_pcm("Hey juniper, open notes.") + gap


def test_without_a_minimum_volume_the_loudness_is_not_measured_and_nothing_changes(
    spoken: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured = states(Measured(VadSettings()), spoken)
    calls: list[int] = []
    real = VADAnalyzer._get_smoothed_volume
    monkeypatch.setattr(VADAnalyzer, "_get_smoothed_volume",
                        lambda self, audio: calls.append(1) or real(self, audio))
    skipped = states(WebRTCVADAnalyzer(VadSettings()), spoken)
    assert skipped == measured
    assert VADState.SPEAKING in skipped and skipped[-1] == VADState.QUIET
    assert calls == []


def test_a_minimum_volume_still_holds_quiet_speech_back(spoken: bytes) -> None:
    quiet = array.array("h", spoken)
    for i, sample in enumerate(quiet):
        quiet[i] = sample // 30
    assert VADState.SPEAKING in states(WebRTCVADAnalyzer(VadSettings()), quiet.tobytes())
    held = states(WebRTCVADAnalyzer(VadSettings(min_volume=0.6)), quiet.tobytes())
    assert VADState.SPEAKING not in held
    assert VADState.SPEAKING in states(WebRTCVADAnalyzer(VadSettings(min_volume=0.6)), spoken)
