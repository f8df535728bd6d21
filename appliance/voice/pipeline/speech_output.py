"""The speech output step: plays or records the reply, pauses and stops it for barge-in, and
says when every heard segment is answered."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from pipecat.frames.frames import (
    Frame,
    InterruptionFrame,
    TTSAudioRawFrame,
    TTSStoppedFrame,
    VADUserStartedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from appliance.voice.audio.clock import AudioClock
from appliance.voice.audio.pcm import PIPELINE_RATE, resample_pcm16
from appliance.voice.audio.playback import Playback
from appliance.voice.pipeline.frames import (
    AnsweringFrame,
    OpenWindowFrame,
    ReplyDoneFrame,
    ResumeReplyFrame,
    SettledFrame,
)
from appliance.voice.sink import TurnSink

log = logging.getLogger(__name__)

MUTE_TAIL_S = 0.3  # room echo after the last sample played


class SpeechSink(Protocol):
    """Where the appliance's voice goes: a speaker (play blocks while it sounds) or a WAV."""

    def play(self, pcm: bytes, rate: int) -> None: ...

    def reply_done(self) -> None: ...


class SpeechOutput(FrameProcessor):
    """Plays (or records) the reply audio, then unmutes the mic and reports `spoke` to the sink.

    The one owner of whether the appliance is answering and of how many heard segments are
    done with (settled), which the feeder reads to mute the mic and to pace a file. With a
    `playback` (barge-in), the reply is queued there instead: speech heard over it pauses it at
    once (the VAD's start), and the gate then stops it (InterruptionFrame) or resumes it.
    """

    def __init__(
        self,
        sink: TurnSink,
        speaker: SpeechSink | None,
        clock: AudioClock,
        notify: Callable[[], None],
        mute_while_speaking: bool = True,
        playback: Playback | None = None,
    ) -> None:
        super().__init__()
        self._sink = sink
        self._speaker = speaker
        self._clock = clock
        self._notify = notify
        self._mute_while_speaking = mute_while_speaking
        self._pcm = bytearray()  # the reply being spoken
        self._first_audio: tuple[float, float] | None = None  # (audio clock, ms)
        self._mute_until_s = 0.0
        self._playback = playback
        self._cut: tuple[float, float] | None = None  # (ms, audio clock) the reply was stopped
        self._silent_at: tuple[float, float] | None = None  # paused, and not resumed since
        self.speaking = False
        self.replying = False  # its audio is playing (or queued): barge-in may stop it
        self.settled = 0
        self.interruptions = 0
        self.resumed = 0  # replies paused for speech that was not "stop": how often

    def muted(self) -> bool:
        if not self._mute_while_speaking or self._playback is not None:
            return False
        return self.speaking or self._clock.clock_s < self._mute_until_s

    def idle(self, segments: int) -> bool:
        """Every one of the `segments` heard so far is answered, and nothing is being said."""
        return self.settled >= segments and not self.speaking

    def give_up(self, segments: int) -> None:
        """Take the `segments` heard so far as answered (a turn that never ended)."""
        self.speaking, self.settled = False, max(self.settled, segments)

    def _settle(self, segment: bool, answered: bool) -> None:
        if answered:
            self.speaking = False
        if segment:
            self.settled += 1
        self._notify()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, AnsweringFrame):
            self.speaking = True
        elif isinstance(frame, InterruptionFrame):
            self._interrupt()
            await self.push_frame(frame, direction)
        elif isinstance(frame, VADUserStartedSpeakingFrame) and self._playback is not None:
            if self.replying and self._cut is None and not self._playback.paused:
                self._playback.pause()
                self._silent_at = (self._clock.ms(), self._clock.clock_s)
            await self.push_frame(frame, direction)
        elif isinstance(frame, ResumeReplyFrame):
            if self._playback is not None and self._cut is None:
                self._playback.resume()
                self._silent_at = None
                self.resumed += 1
        elif isinstance(frame, SettledFrame):
            self._settle(frame.segment, frame.answered)
        elif isinstance(frame, TTSAudioRawFrame):
            if self._cut is not None:
                return  # the rest of a reply that was stopped
            if self._first_audio is None:
                self._first_audio = (self._clock.clock_s, self._clock.ms())
            pcm = resample_pcm16(frame.audio, frame.sample_rate, PIPELINE_RATE)
            self._pcm += pcm
            if self._playback is not None:
                self._playback.queue(pcm)
                if not self.replying:
                    self.replying = True
                    self._notify()  # a file waiting for the reply goes on while it plays
            elif self._speaker is not None:
                await asyncio.to_thread(self._speaker.play, pcm, PIPELINE_RATE)
        elif isinstance(frame, ReplyDoneFrame):
            if self._playback is not None:
                # The reply is queued, not yet heard: it is done when played out or stopped.
                playback = self._playback
                await self._wait(lambda: not playback.playing)
            duration = len(self._pcm) / 2 / PIPELINE_RATE
            first, self._pcm, self._first_audio = self._first_audio, bytearray(), None
            try:
                await self._finish(frame, duration, first)
            finally:
                # Even if recording `spoke` fails, the mic must unmute and the file go on.
                self._settle(frame.segment, answered=True)
        elif isinstance(frame, TTSStoppedFrame):
            return  # not the end of the reply (see ReplyDoneFrame)
        else:
            await self.push_frame(frame, direction)

    def _interrupt(self) -> None:
        """Barge-in: silence the speaker now; the reply ends when its ReplyDoneFrame comes."""
        if self._playback is None or not self.replying or self._cut is not None:
            return
        self._playback.stop()
        self._cut = (self._clock.ms(), self._clock.clock_s)
        self.interruptions += 1
        self._notify()

    async def _wait(self, done: Callable[[], bool]) -> None:
        # The playback drains as the feeder reads the microphone, in another task.
        while not done():
            await asyncio.sleep(0.005)

    async def _finish(
        self, done: ReplyDoneFrame, duration: float, first: tuple[float, float] | None
    ) -> None:
        clock = self._clock
        started = first[0] if first is not None else clock.clock_s
        ends = max(started + duration, clock.clock_s)
        self._mute_until_s = ends + MUTE_TAIL_S
        timings = dict(done.timings)
        if first is not None:
            timings["first_audio"] = round(first[1], 1)
        timings |= {"spoken_s": round(duration, 3), "spoke_done": round(clock.ms(), 1)}
        cut, self._cut = self._cut, None
        silent, self._silent_at = self._silent_at or cut, None
        if self._playback is not None:
            # What was heard, not what was synthesized: a reply cut short says where; the
            # speaker went silent when the speech began (paused), the cut came with its words.
            timings["spoken_s"] = round(self._playback.reply_done(), 3)
            if cut is not None and silent is not None:
                timings |= {"cut_short": 1.0, "stopped_at": round(silent[0], 1),
                            "stopped_at_s": round(silent[1], 3), "cut_at": round(cut[0], 1),
                            "cut_at_s": round(cut[1], 3), "synthesized_s": round(duration, 3)}
        elif self._speaker is not None:
            self._speaker.reply_done()
        self.speaking = self.replying = False
        # Its length only, as the gate logs only a count of words: a reply may read out a message.
        log.info("said %.1f s of speech", timings["spoken_s"])
        if done.reply.expects_answer:
            await self.push_frame(OpenWindowFrame(at_s=self._mute_until_s), FrameDirection.UPSTREAM)
        reply = done.reply
        await asyncio.to_thread(self._sink.spoke, reply.turn_id, reply.spoken, timings)
