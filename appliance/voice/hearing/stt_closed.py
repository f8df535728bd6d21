"""The closed-set path as a pipecat STT service: Whisper's segmenting and speculation, with each
segment heard against the sentences the current screen allows (closed_whisper.py), and first
against the person's own takes when they enrolled their voice (templates.py, profile.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any

from pipecat.frames.frames import Frame, VADUserStartedSpeakingFrame
from pipecat.processors.frame_processor import FrameDirection

from appliance.voice.hearing.closed_set import SentenceSet, closed_set
from appliance.voice.hearing.closed_whisper import ClosedWhisperRecognizer
from appliance.voice.hearing.personal import PersonalHearing, PersonalOptions
from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.stt_whisper import (
    RATE,
    EndOfSpeechFrame,
    SpeculatedFrame,
    SpeculateFrame,
    Transcript,
    WhisperSTTService,
)
from appliance.voice.hearing.wake_spotter import HEARD_BYTES
from appliance.voice.sink import (
    EnrolAction,
    EnrolState,
    Reply,
    ScreenNames,
    TurnSink,
    names_reader,
    vocabulary_of,
)

log = logging.getLogger(__name__)

WARM_BYTES = int(0.5 * RATE) * 2
"""How much more speech the person's takes embed ahead at a time, while the person speaks."""

QUIET_LOOK_BYTES = int(2.0 * RATE) * 2
"""How much quiet passes between two looks at the profile for a change to work out ahead."""



def screen_reader(
    sink: TurnSink,
) -> tuple[Callable[[], ScreenNames], Callable[[ScreenNames], list[str]]]:
    """How one read of the sink's screen gives both the sentences and the prompt's words: its
    names, and the words for them (a vocabulary-only sink's are its vocabulary)."""
    if callable(getattr(sink, "screen_names", None)):
        return names_reader(sink), vocabulary_of
    return names_reader(sink), lambda read: list(read.targets)


class ClosedSetSTTService(WhisperSTTService):
    """One transcript per VAD segment, closed-set first (`engine` "closed:whisper"), open
    Whisper under a fixed prompt second ("open:whisper"); `wake` said for every segment."""

    def __init__(
        self,
        recognizer: ClosedWhisperRecognizer,
        names: Callable[[], ScreenNames],
        words_of: Callable[[ScreenNames], list[str]],
        replying: Callable[[], bool] = lambda: False,
        awaiting_answer: Callable[[], bool] = lambda: False,
        profile: VoiceProfile | None = None,
        person: PersonalOptions | None = None,
        **kwargs: Any,
    ) -> None:
        """`words_of`: the open path's prompt words for the names read (one read of the
        screen gives both, per segment); `replying`: whether the appliance is speaking;
        `awaiting_answer`: whether a question's listening window is open; `profile`: the
        person's takes, heard before Whisper (personal.py), as `person` says."""
        super().__init__(
            recognizer.engine, lambda: words_of(names()), recognizer.wake_phrase, **kwargs
        )
        self.recognizer = recognizer
        self._names = names
        self._words_of = words_of
        self._spotted = 0  # bytes of this segment the wake spotter scored while it was spoken
        self._read: ScreenNames | None = None  # the screen as read when this segment began
        self._replying = replying
        self._over_reply = False  # this segment began while the appliance was speaking
        self._awaiting_answer = awaiting_answer
        self._answering = False  # this segment began in a question's listening window
        self.personal = None if profile is None else PersonalHearing(
            profile, recognizer, self._hearing.submit, self._tell_vad, person or PersonalOptions())
        if self.personal is not None:  # on the hearing thread, before the person first speaks
            self._hearing.submit(self.personal.ready)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._warmed = 0  # bytes of this segment the takes have embedded ahead
        self._warming: asyncio.Future[None] | None = None
        self._quiet = 0  # bytes heard with no one speaking since the profile was last looked at
        self._readying: asyncio.Future[None] | None = None

    def set_speaker(self, say: Callable[[str], None]) -> None:
        """How enrolment's prompts are said (queued as a reply is, the microphone muted)."""
        if self.personal is not None:
            self.personal.say = say

    def enrol(self, action: EnrolAction) -> bool:
        """Enrolment started, paused, skipped on or stopped from outside the voice (the switch,
        the caregiver's page), on the hearing thread; False when there is no profile to enrol
        into, or no way to speak."""
        personal = self.personal
        if personal is None or personal.say is None:
            return False
        self._hearing.submit(_quietly_run, personal.control, action)
        return True

    def enrolment(self) -> EnrolState:
        return "off" if self.personal is None else self.personal.enrolment

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        self._loop = asyncio.get_running_loop()
        if isinstance(frame, SpeculateFrame) and self.personal and self.personal.enrolling:
            # A take is heard whole: no early transcript, and no pause ends it early.
            if not frame.cancel:
                await self.push_frame(SpeculatedFrame(pause=frame.pause), FrameDirection.UPSTREAM)
            return
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._spotted, self._read, self._warmed = 0, None, 0
            self._over_reply = self._replying()
            self._answering = self._awaiting_answer()
            asyncio.get_running_loop().run_in_executor(self._hearing, self._prepare)
        await super().process_frame(frame, direction)

    def _prepare(self) -> None:
        """Read the screen and build its sentences while the person speaks, on the hearing
        thread: after an action the screen is new, and its set takes about 300 ms to build."""
        try:
            names = self._names()
            closed_set(*names).prepare()
        except Exception as e:  # then `_hear` reads it, and says what went wrong
            log.warning("reading the screen early failed: %s", e)
            return
        self._read = names

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame | None, None]:
        personal = self.personal
        if personal is not None and personal.listening_to_room and not self._replying():
            # All of it, speech or not: the room's sound is whatever it holds when no one
            # is asked to speak (its prompt, said with the microphone muted, left out).
            self._hearing.submit(_quietly_run, personal.room_sound, audio)
        async for frame in super().run_stt(audio):
            yield frame
        self._ready_in_quiet(len(audio))
        self._warm_templates()
        spotter = self.recognizer.spotter
        heard = min(len(self._buffer), HEARD_BYTES)
        if (spotter is not None and self._speaking and not self._over_reply
                and (heard == HEARD_BYTES > self._spotted
                     or heard >= self._spotted + WARM_BYTES)):
            # The spotter reads only the first 2.2 s: scored as they come in, on the hearing
            # thread, only the last half second's embeddings are left when the person stops.
            self._spotted = heard
            asyncio.get_running_loop().run_in_executor(
                self._hearing, _quietly, spotter.score, bytes(self._buffer[:heard]))

    def _ready_in_quiet(self, heard: int) -> None:
        """While no one speaks, the profile is looked at now and then on the hearing thread: a
        change (the caregiver's enrolment, a take learned from use) is worked out before the
        person next speaks, not while they do."""
        personal = self.personal
        if personal is None or self._speaking or personal.enrolling:
            self._quiet = 0
            return
        self._quiet += heard
        if self._quiet < QUIET_LOOK_BYTES or (self._readying is not None
                                              and not self._readying.done()):
            return
        self._quiet = 0
        self._readying = asyncio.get_running_loop().run_in_executor(self._hearing, personal.ready)

    def _warm_templates(self) -> None:
        """Every WARM_BYTES of speech, the person's takes embed it so far, on the hearing thread:
        at the end only its last words are left to embed."""
        personal = self.personal
        if (personal is None or not self._speaking or personal.enrolling or self._over_reply
                or len(self._buffer) < self._warmed + WARM_BYTES
                or (self._warming is not None and not self._warming.done())):
            return
        self._warmed = len(self._buffer)
        self._warming = asyncio.get_running_loop().run_in_executor(
            self._hearing, personal.warm, bytes(self._buffer))

    async def _worth_hearing_early(self, pcm: bytes) -> bool:
        personal = self.personal
        if personal is None or personal.enrolling or self._over_reply:
            return True
        # After the wake phrase alone, Whisper's decode would hold the one hearing thread while
        # the command is said, and keep the command's own pause from ending it.
        alone = await asyncio.get_running_loop().run_in_executor(
            self._hearing, personal.wake_alone, pcm)
        return not alone

    def sentences(self) -> SentenceSet:
        return closed_set(*self._names())

    def _hear(self, pcm: bytes) -> Transcript:
        names = self._names() if self._read is None else self._read
        sentences = closed_set(*names)
        personal = self.personal
        if personal is None:
            return self.recognizer.transcribe(pcm, sentences, self._words_of(names),
                                              self._over_reply)
        if personal.enrolling:
            return personal.enrol_take(pcm, sentences, self._words_of(names))
        heard = personal.transcribe(pcm, sentences, self._words_of(names), self._over_reply,
                                    self._answering)
        return personal.after(heard, pcm, sentences)

    def replied(self, reply: Reply) -> None:
        """The turn's reply to the last transcript: the person's hearing learns whether it acted."""
        if self.personal is not None:
            self.personal.replied(reply.acted)

    def _tell_vad(self, stop_secs: float) -> None:
        """From the hearing thread: the VAD waits `stop_secs` of silence from now on."""
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(
                self.push_frame(EndOfSpeechFrame(stop_secs=stop_secs), FrameDirection.UPSTREAM),
                self._loop)


def _quietly(score: Callable[[bytes], float], pcm: bytes) -> None:
    """An early score that fails is only not early: `hear` scores the utterance again."""
    try:
        score(pcm)
    except Exception as e:
        log.warning("the wake spotter failed early: %s", e)


def _quietly_run(step: Callable[[Any], None], given: Any) -> None:
    """Enrolment that cannot be steered, or cannot keep the room's sound, is logged: the
    person goes on being heard."""
    try:
        step(given)
    except Exception as e:
        log.warning("enrolment could not go on: %s", e)
