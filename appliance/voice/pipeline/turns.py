"""The turn as a pipeline step: a command goes to the sink, its reply on to be spoken."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from pipecat.frames.frames import Frame, TTSSpeakFrame
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from appliance.voice.audio.clock import AudioClock
from appliance.voice.pipeline.frames import (
    AnsweringFrame,
    CommandFrame,
    NotCaughtFrame,
    OpenWindowFrame,
    ReplyDoneFrame,
    SettledFrame,
)
from appliance.voice.sink import Reply, TurnSink

log = logging.getLogger(__name__)

NOT_CAUGHT = "Sorry, I didn't catch that. Please say it again."


class TurnProcessor(FrameProcessor):
    """Runs each CommandFrame through the sink; a reply with words goes to the TTS."""

    def __init__(
        self,
        sink: TurnSink,
        clock: AudioClock,
        on_event: Callable[[Reply], None] | None = None,
    ) -> None:
        super().__init__()
        self._sink = sink
        self._clock = clock
        self._on_event = on_event

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, CommandFrame):
            try:
                await self._turn(frame)
            except Exception:
                # A failing turn must not leave the microphone muted or the file on hold.
                log.exception("turn failed")
                await self.push_frame(SettledFrame(answered=True))
        elif isinstance(frame, NotCaughtFrame):
            # Said like a question: the reply ends by opening a window for the command again,
            # and settles the heard segment.
            await self._say(Reply("", NOT_CAUGHT, True), segment=True)
        else:
            await self.push_frame(frame, direction)

    async def _turn(self, frame: CommandFrame) -> None:
        # From here the appliance is answering: the mic is not listening.
        await self.push_frame(AnsweringFrame())
        reply = await asyncio.to_thread(self._sink.handle, frame.utterance)
        timings = {**frame.utterance.timings, "action_done": round(self._clock.ms(), 1)}
        if self._on_event is not None:
            self._on_event(reply)
        if reply.spoken.strip():
            await self.push_frame(TTSSpeakFrame(reply.spoken))
            await self.push_frame(ReplyDoneFrame(reply=reply, timings=timings))
            return
        if reply.expects_answer:
            listen = OpenWindowFrame(at_s=self._clock.clock_s)
            await self.push_frame(listen, FrameDirection.UPSTREAM)
        await asyncio.to_thread(self._sink.spoke, reply.turn_id, "", timings)
        await self.push_frame(SettledFrame(answered=True))

    async def announce(self, text: str) -> None:
        """Speak words that come from elsewhere (the switch: scan items, its turns' replies) the
        way a reply is spoken: queued behind any reply, with the microphone muted meanwhile."""
        if text.strip():
            await self._say(Reply("", text, False), segment=False)

    async def _say(self, reply: Reply, segment: bool) -> None:
        """Words with no turn behind them, queued behind any reply, the microphone muted."""
        await self.push_frame(AnsweringFrame())
        await self.push_frame(TTSSpeakFrame(reply.spoken))
        await self.push_frame(ReplyDoneFrame(reply=reply, segment=segment))
