"""A pipecat VADAnalyzer on webrtcvad, with the knobs a kiosk installer needs."""

from __future__ import annotations

from dataclasses import dataclass

import webrtcvad  # type: ignore[import-untyped]
from pipecat.audio.vad.vad_analyzer import VADAnalyzer, VADParams, VADState

FRAME_MS = 20


@dataclass(frozen=True)
class VadSettings:
    """aggressiveness 0-3 (3 rejects most noise); start/stop are hangovers in seconds."""

    aggressiveness: int = 3
    start_secs: float = 0.1
    stop_secs: float = 0.35
    min_speech_secs: float = 0.3
    min_volume: float = 0.0
    # After this much silence the STT may start on the audio so far (0: wait for the stop).
    speculate_secs: float = 0.04
    # End the segment as soon as that early transcript is a command said in full (one that
    # nothing the screen allows goes on from with another meaning), not after stop_secs.
    end_when_said_in_full: bool = True
    # A command likely said in full (a match of the person's takes, less sure) ends after this
    # share of stop_secs of silence (1: as any other).
    likely_end_share: float = 0.5


class WebRTCVADAnalyzer(VADAnalyzer):
    """Each 20 ms frame is voiced (1.0) or not (0.0) per webrtcvad."""

    def __init__(self, settings: VadSettings | None = None, sample_rate: int | None = None) -> None:
        self.settings = settings or VadSettings()
        if not 0 <= self.settings.aggressiveness <= 3:
            raise ValueError("VAD aggressiveness must be 0-3")
        self._vad = webrtcvad.Vad(self.settings.aggressiveness)
        super().__init__(
            sample_rate=sample_rate,
            params=VADParams(
                confidence=0.5,
                start_secs=self.settings.start_secs,
                stop_secs=self.settings.stop_secs,
                min_volume=self.settings.min_volume,
            ),
        )

    def _get_smoothed_volume(self, audio: bytes) -> float:
        # pipecat measures BS.1770 loudness over 400 ms for every 20 ms frame; it only gates
        # speech against min_volume, so with none set it is work for nothing (a tenth of the
        # analyzer's time in the software-emulated device image; 0.18 ms a frame on a host CPU).
        if self.settings.min_volume <= 0:
            return 1.0
        return super()._get_smoothed_volume(audio)

    def num_frames_required(self) -> int:
        return int(self.sample_rate * FRAME_MS / 1000)

    trailing_unvoiced = 0  # frames since the last voiced one
    end_requested = False  # end the segment on the next unvoiced frame (`end_now`)

    def end_now(self) -> None:
        """End the segment being spoken on the next unvoiced frame, without waiting out
        stop_secs; a voiced frame first cancels it. Applied in the analyzer's own thread."""
        self.end_requested = True

    def voice_confidence(self, buffer: bytes) -> float:
        voiced = bool(self._vad.is_speech(buffer, self.sample_rate))
        self.trailing_unvoiced = 0 if voiced else self.trailing_unvoiced + 1
        if self.end_requested:
            self.end_requested = False
            if not voiced and self._vad_state == VADState.STOPPING:
                # pipecat's own count then reaches its stop on this frame.
                self._vad_stopping_count = max(self._vad_stopping_count,
                                               self._vad_stop_frames - 1)
        return 1.0 if voiced else 0.0

