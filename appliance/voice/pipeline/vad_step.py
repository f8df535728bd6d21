"""The VAD step: pipecat's VADProcessor on webrtcvad, sending each segment's times and telling the
STT of each pause, so that a command said in full may end its segment early."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection

from appliance.voice.audio.clock import AudioClock
from appliance.voice.hearing.stt_whisper import EndOfSpeechFrame, SpeculatedFrame, SpeculateFrame
from appliance.voice.hearing.vad import FRAME_MS, VadSettings, WebRTCVADAnalyzer
from appliance.voice.pipeline.frames import Segment, SegmentFrame


class TrackedVADProcessor(VADProcessor):
    """pipecat's VADProcessor, also sending each segment's times and counting what it read.

    It tells the STT of each pause (SpeculateFrame); an STT that `answers` them
    (SpeculatedFrame) may end the segment there, when it heard a command said in full (or a
    little later, one likely said in full), and until it answers a file is not fed further
    (`awaiting`): what the file's pauses do then does not depend on how fast the machine hears.
    """

    def __init__(
        self, settings: VadSettings, clock: AudioClock, notify: Callable[[], None],
        answers: bool = False,
    ) -> None:
        self._analyzer = WebRTCVADAnalyzer(settings)
        super().__init__(vad_analyzer=self._analyzer, audio_idle_timeout=0)
        self._settings = settings
        self._clock = clock
        self._notify = notify
        self._answers = answers
        self._open_start: tuple[float, float] | None = None
        self._speculating = False
        self._speculate_frames = round(settings.speculate_secs * 1000 / FRAME_MS)
        self._stop_frames = round(settings.stop_secs * 1000 / FRAME_MS)
        self._pause = 0
        self._end_after: int | None = None  # frames of silence that end this pause's segment
        self.awaiting: int | None = None  # the pause whose early transcript is not in yet
        self.frames_read = 0
        self.segments = 0

    async def broadcast_frame(self, frame_cls: type[Frame], **kwargs: Any) -> None:
        clock = self._clock
        if frame_cls is VADUserStartedSpeakingFrame:
            # The VAD decides `start_secs` after the speech began.
            # The wall clock says when the VAD knew; the audio clock where speech began.
            self._open_start = (clock.ms(), max(0.0, clock.clock_s - self._settings.start_secs))
        elif frame_cls is VADUserStoppedSpeakingFrame:
            start_ms, start_s = self._open_start or (clock.ms(), clock.clock_s)
            self._open_start = None
            silent = self._analyzer.trailing_unvoiced
            segment = Segment(start_ms, clock.ms(), start_s, clock.clock_s,
                              silence_s=silent * FRAME_MS / 1000, early=silent < self._stop_frames)
            # Ahead of the stop frame, after which the STT sends this segment's transcript.
            await self.push_frame(SegmentFrame(segment=segment))
            self.segments += 1
            self._notify()
        await super().broadcast_frame(frame_cls, **kwargs)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, SpeculatedFrame):
            self._answered(frame)
            return
        if isinstance(frame, EndOfSpeechFrame):
            self._wait_after_speech(frame.stop_secs)
            return
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            await self._speculate()
            self.frames_read += 1
            self._notify()

    def _wait_after_speech(self, stop_secs: float) -> None:
        """From the next segment on, `stop_secs` of silence ends speech."""
        self._settings = replace(self._settings, stop_secs=stop_secs)
        self._analyzer.set_params(self._analyzer.params.model_copy(update={"stop_secs": stop_secs}))
        self._analyzer.settings = self._settings
        self._stop_frames = round(stop_secs * 1000 / FRAME_MS)

    def _answered(self, frame: SpeculatedFrame) -> None:
        """The STT's early transcript of a pause: a command said in full, in the pause still
        going on, ends the segment now; one likely said in full, after `likely_end_share` of
        the wait."""
        if frame.pause == self.awaiting:
            self.awaiting = None
            self._notify()
        if (frame.pause != self._pause or not self._speculating
                or not self._settings.end_when_said_in_full):
            return
        if frame.said_in_full:
            self._analyzer.end_now()
        elif frame.likely_in_full:
            self._end_after = round(self._settings.likely_end_share * self._stop_frames)

    async def _speculate(self) -> None:
        """Tell the STT when the user pauses mid-segment, and when they go on speaking."""
        if self._open_start is None or self._speculate_frames <= 0:
            self._speculating = False
            return
        silent = self._analyzer.trailing_unvoiced
        if not self._speculating and silent >= self._speculate_frames:
            self._speculating = True
            self._pause += 1
            self._end_after = None
            if self._answers:
                self.awaiting = self._pause
            await self.push_frame(SpeculateFrame(pause=self._pause))
        elif self._speculating and silent == 0:
            self._speculating = False
            await self.push_frame(SpeculateFrame(cancel=True, pause=self._pause))
        elif self._speculating and self._end_after is not None and silent >= self._end_after:
            self._end_after = None
            self._analyzer.end_now()
