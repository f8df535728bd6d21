"""The voice steps one at a time, talking only through frames (no models, no audio)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from pipecat.frames.frames import Frame, TranscriptionFrame, TTSSpeakFrame
from pipecat.tests.utils import run_test

from appliance.voice.audio.clock import AudioClock
from appliance.voice.hearing.vad import VadSettings
from appliance.voice.hearing.wake import WakeGate
from appliance.voice.pipeline.frames import (
    AnsweringFrame,
    CommandFrame,
    OpenWindowFrame,
    ReplyDoneFrame,
    Segment,
    SegmentFrame,
    SettledFrame,
)
from appliance.voice.pipeline.gate import GateProcessor
from appliance.voice.pipeline.speech_output import SpeechOutput
from appliance.voice.pipeline.turns import TurnProcessor
from appliance.voice.sink import Reply, Utterance


def heard(text: str, start_s: float, seconds: float = 1.5,
          engine: str = "whisper") -> list[Frame]:
    segment = Segment(start_s * 1000, (start_s + seconds) * 1000, start_s, start_s + seconds)
    return [SegmentFrame(segment=segment),
            TranscriptionFrame(text, "", "", result={"engine": engine, "confidence": 0.8})]


def test_gate_sends_commands_on_and_settles_the_rest() -> None:
    gate = GateProcessor(WakeGate(), VadSettings(), AudioClock())
    frames = [*heard("open messages", 1.0), *heard("hey juniper", 4.0),
              *heard("click send", 6.0), *heard("hey juniper, tick urgent", 20.0)]
    down, _up = asyncio.run(run_test(gate, frames_to_send=frames))
    commands = [f.utterance for f in down if isinstance(f, CommandFrame)]
    assert [u.text for u in commands] == ["click send", "tick urgent"]
    assert commands[0].timings["audio_start_s"] == 6.0 and commands[0].engine == "whisper"
    assert len([f for f in down if isinstance(f, SettledFrame)]) == 2
    assert (gate.ignored, gate.wake_only) == (1, 1)
    assert [(h["decision"], h.get("via")) for h in gate.heard] == [
        ("ignored", "none"), ("wake_only", "wake"), ("command", "window"), ("command", "wake")]


def test_a_question_from_downstream_opens_the_gate() -> None:
    gate = GateProcessor(WakeGate(window_s=5.0), VadSettings(), AudioClock())
    # Upstream in the pipeline; the gate takes it from either side and keeps it.
    frames = [OpenWindowFrame(at_s=10.0), *heard("yes", 12.0), *heard("yes", 13.0)]
    down, _up = asyncio.run(run_test(gate, frames_to_send=frames))
    assert not any(isinstance(f, OpenWindowFrame) for f in down)
    assert [f.utterance.text for f in down if isinstance(f, CommandFrame)] == ["yes"]
    assert [(h["decision"], h["via"]) for h in gate.heard] == [
        ("command", "window"), ("ignored", "none")]  # one answer closes the window


def test_a_questions_window_awaits_an_answer_until_it_is_used_or_runs_out() -> None:
    """The STT asks the gate whether speech is likely an answer ("no" may then end at its
    pause): only in a window a question opened, and only until something is heard there."""
    clock = AudioClock()
    wake = WakeGate(window_s=5.0)
    gate = GateProcessor(wake, VadSettings(), clock)

    async def awaited_after(*frames: Frame) -> tuple[bool, bool]:
        await run_test(gate, frames_to_send=list(frames))
        return gate.awaiting_answer(), wake.window_open(clock.clock_s)

    async def steps() -> list[tuple[bool, bool]]:  # one event loop for the one processor
        return [await awaited_after(*heard("hey juniper", 0.0)),
                await awaited_after(OpenWindowFrame(at_s=0.0)),
                await awaited_after(*heard("no", 2.0)),
                await awaited_after(OpenWindowFrame(at_s=-10.0))]

    assert asyncio.run(steps()) == [
        (False, True),  # the wake phrase's window: no question asked
        (True, True),
        (False, False),  # the answer used it up
        (False, False)]  # a window that has run out awaits nothing


def test_a_short_word_counts_only_when_the_persons_takes_heard_it() -> None:
    """Under min_speech_secs Whisper's word may be a click; the person's own takes matched
    theirs whole, so a quick "no" is an answer."""
    from appliance.voice.hearing.personal import TEMPLATE_ENGINE

    gate = GateProcessor(WakeGate(window_s=5.0), VadSettings(), AudioClock())
    frames = [OpenWindowFrame(at_s=0.0), *heard("no", 1.0, 0.25, "closed:whisper"),
              *heard("no", 2.0, 0.25, TEMPLATE_ENGINE)]
    down, _up = asyncio.run(run_test(gate, frames_to_send=frames))
    assert [(h["decision"], h["engine"]) for h in gate.heard] == [
        ("too short", "closed:whisper"), ("command", TEMPLATE_ENGINE)]
    assert [f.utterance.engine for f in down if isinstance(f, CommandFrame)] == [TEMPLATE_ENGINE]


class Sink:
    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.spoken: list[tuple[str, str]] = []

    def vocabulary(self) -> list[str]:
        return []

    def handle(self, utterance: Utterance) -> Reply:
        return self.reply

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        self.spoken.append((turn_id, text))


def test_turn_sends_its_reply_to_be_spoken() -> None:
    sink = Sink(Reply("t1", "Pressed Send.", False))
    turns = TurnProcessor(sink, AudioClock())
    command = CommandFrame(utterance=Utterance("click send", "whisper", 0.8, {"speech_end": 1.0}))
    down, up = asyncio.run(run_test(turns, frames_to_send=[command]))
    assert [type(f) for f in down] == [AnsweringFrame, TTSSpeakFrame, ReplyDoneFrame]
    done = down[-1]
    assert isinstance(done, ReplyDoneFrame) and done.reply.turn_id == "t1" and done.segment
    assert set(done.timings) == {"speech_end", "action_done"}
    assert sink.spoken == [] and up == []  # `spoke` waits for the audio


def test_a_silent_question_opens_the_gate_and_settles() -> None:
    sink = Sink(Reply("t2", "", True))
    turns = TurnProcessor(sink, AudioClock())
    command = CommandFrame(utterance=Utterance("send it", "whisper", 0.8, {}))
    down, up = asyncio.run(run_test(turns, frames_to_send=[command]))
    assert [type(f) for f in down] == [AnsweringFrame, SettledFrame]
    assert [type(f) for f in up] == [OpenWindowFrame]
    assert sink.spoken == [("t2", "")]


def test_output_alone_owns_answering_and_settled(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="appliance.voice.pipeline.speech_output")
    sink = Sink(Reply("", "", False))
    output = SpeechOutput(sink, None, AudioClock(), lambda: None)
    asked = Reply("t3", "Send it?", True)
    frames = [AnsweringFrame(), SettledFrame(), AnsweringFrame(),
              ReplyDoneFrame(reply=asked, timings={"action_done": 5.0})]
    _down, up = asyncio.run(run_test(output, frames_to_send=frames))
    assert output.settled == 2 and not output.speaking and output.idle(2)
    assert not output.idle(3)
    assert [type(f) for f in up] == [OpenWindowFrame]
    assert sink.spoken == [("t3", "Send it?")]
    # The device's log says the reply ended (the booted-image test waits on it), not its words.
    assert [r.getMessage() for r in caplog.records] == ["said 0.0 s of speech"]
