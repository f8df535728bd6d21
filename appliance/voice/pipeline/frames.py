"""The pipeline's own frames: how the VAD, the wake gate, the turn and the speech output talk."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipecat.frames.frames import ControlFrame, DataFrame, SystemFrame

from appliance.voice.sink import Reply, Utterance


@dataclass
class Segment:
    """Where one stretch of speech was: wall-clock ms since the run began, audio-clock seconds;
    and the silence after it before the VAD ended it (`early`: ended before its stop_secs,
    because the STT had heard a command said in full)."""

    start_ms: float
    end_ms: float
    start_s: float
    end_s: float
    silence_s: float = 0.0
    early: bool = False


@dataclass
class SegmentFrame(SystemFrame):
    """From the VAD, ahead of its stop frame, so it reaches the gate before its transcript."""

    segment: Segment = field(default_factory=lambda: Segment(0.0, 0.0, 0.0, 0.0))


@dataclass
class CommandFrame(DataFrame):
    """From the gate: speech that is a command, to run as a turn."""

    utterance: Utterance = field(default_factory=lambda: Utterance("", "", None))
    # The wake phrase said over a reply interrupts it and is still a command: keep it.
    interruptible: bool = field(default=False, init=False)


@dataclass
class NotCaughtFrame(DataFrame):
    """From the gate: the wake phrase was heard, then words the recogniser could not make out."""

    # Like CommandFrame: the wake phrase over a reply interrupts it, and this must still be said.
    interruptible: bool = field(default=False, init=False)


@dataclass
class AnsweringFrame(SystemFrame):
    """The appliance is answering (a turn runs, or words are queued): the microphone is muted."""


@dataclass
class SettledFrame(SystemFrame):
    """A heard segment is done with without a reply to speak (`segment`), and/or the appliance
    stopped answering (`answered`)."""

    segment: bool = True
    answered: bool = False


@dataclass
class ReplyDoneFrame(ControlFrame):
    """Follows a reply's TTSSpeakFrame; pipecat's TTS queues it behind all of that reply's audio.

    The reply ends here, not at a TTSStoppedFrame: pipecat also sends one when synthesis goes
    quiet for a while, which a loaded CPU can cause in the middle of a reply. `segment`: the
    reply answers a heard segment (not words announced from elsewhere).
    """

    reply: Reply = field(default_factory=lambda: Reply("", "", False))
    timings: dict[str, float] = field(default_factory=dict)
    segment: bool = True
    # A reply cut short by barge-in still ends (and is journaled) with this frame.
    interruptible: bool = field(default=False, init=False)


@dataclass
class ResumeReplyFrame(SystemFrame):
    """From the gate (barge-in): speech over the reply was not "stop" or the wake phrase, so the
    reply paused when that speech began goes on."""


@dataclass
class OpenWindowFrame(SystemFrame):
    """Upstream to the gate: a question was asked; take speech without the wake phrase from
    `at_s` on the audio clock."""

    at_s: float = 0.0
