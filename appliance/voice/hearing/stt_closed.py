"""The closed-set path as a pipecat STT service: Whisper's segmenting and speculation, with each
segment heard against the sentences the current screen allows (closed_whisper.py), and first
against the person's own takes when they enrolled their voice (templates.py, profile.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any

import numpy as np
from pipecat.frames.frames import Frame, VADUserStartedSpeakingFrame
from pipecat.processors.frame_processor import FrameDirection
from rapidfuzz import fuzz

from appliance.policy.doubts import Doubt
from appliance.voice.hearing.closed_set import SentenceSet, closed_set
from appliance.voice.hearing.closed_whisper import SPOTTER_VETO, ClosedWhisperRecognizer
from appliance.voice.hearing.enrolling import (
    ENROLLED_COMMANDS,
    STARTING_COMMANDS,
    Enrolling,
    sayable,
)
from appliance.voice.hearing.learning import Learning
from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.stt_whisper import (
    PREROLL_S,
    RATE,
    EndOfSpeechFrame,
    SpeculatedFrame,
    SpeculateFrame,
    Transcript,
    WhisperSTTService,
)
from appliance.voice.hearing.templates import TemplateMatch
from appliance.voice.hearing.wake_spotter import HEARD_BYTES
from appliance.voice.sink import Reply, ScreenNames, TurnSink, names_reader, vocabulary_of

log = logging.getLogger(__name__)

TEMPLATE_ENGINE = "closed:templates"
"""The engine a command heard by the person's own takes is recorded under."""
NEAR_SPELLING = 75.0
"""A sentence of the screen spelt this close to an enrolled one, itself not enrolled, is one
the takes cannot tell apart from it ("click save" beside an enrolled "click send")."""
LEARN_VOICE = "learn_voice"
"""The grammar's intent that starts enrolment at the kiosk ("hey juniper, learn my voice")."""
STOP_WORDS = ("stop", "cancel", "stop that")
"""Said instead of the phrase asked for, these end enrolment (to be resumed later)."""
ENROLLING_STOP_S = 1.2
"""Silence that ends a take while enrolling: the person's own pauses are not known yet."""


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
        profile: VoiceProfile | None = None,
        learning: bool = True,
        on_learned: Callable[[str], None] | None = None,
        on_enrolled: Callable[[str, str, int], None] | None = None,
        stop_secs: Callable[[], float] = lambda: 0.35,
        frequent: Callable[[], list[str]] | None = None,
        **kwargs: Any,
    ) -> None:
        """`words_of`: the open path's prompt words for the names read (one read of the
        screen gives both, per segment); `replying`: whether the appliance is speaking;
        `profile`: the person's takes, heard first; `learning`: a yes to "did you mean"
        offers the doubted audio to the profile as a take, and `on_learned` hears of it;
        `on_enrolled` hears of each phrase enrolled at the kiosk (phrase, kind, takes), and
        `stop_secs` says how much silence ends speech once the profile changed; `frequent`
        gives the commands the person says most, enrolled first."""
        super().__init__(
            recognizer.engine, lambda: words_of(names()), recognizer.wake_phrase, **kwargs
        )
        self.recognizer = recognizer
        self._names = names
        self._words_of = words_of
        self._spotted = False  # the wake spotter has scored this segment while it was spoken
        self._read: ScreenNames | None = None  # the screen as read when this segment began
        self._replying = replying
        self._over_reply = False  # this segment began while the appliance was speaking
        self.profile = profile
        self._learning = (Learning(profile, self._hearing.submit, on_learned)
                          if profile is not None and learning else None)
        self._take = 0  # the take that heard the last utterance the templates matched
        self._spotter_knows: tuple[int, bool] | None = None  # (profile generation, verdict)
        self._on_enrolled = on_enrolled
        self._stop_secs = stop_secs
        self._frequent = frequent
        self._enrolling: Enrolling | None = None
        self._say: Callable[[str], None] | None = None  # set once the pipeline can speak
        self._loop: asyncio.AbstractEventLoop | None = None

    def set_speaker(self, say: Callable[[str], None]) -> None:
        """How enrolment's prompts are said (queued as a reply is, the microphone muted)."""
        self._say = say

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        self._loop = asyncio.get_running_loop()
        if isinstance(frame, SpeculateFrame) and self._enrolling is not None:
            # A take is heard whole: no early transcript, and no pause ends it early.
            if not frame.cancel:
                await self.push_frame(SpeculatedFrame(pause=frame.pause), FrameDirection.UPSTREAM)
            return
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._spotted, self._read = False, None
            self._over_reply = self._replying()
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
        async for frame in super().run_stt(audio):
            yield frame
        spotter = self.recognizer.spotter
        if spotter is not None and self._speaking and not self._spotted and not self._over_reply:
            # The spotter reads only the first 2.2 s: scored now, on the hearing thread, its
            # 45 ms are not spent after the person stops.
            self._spotted = len(self._buffer) >= HEARD_BYTES
            if self._spotted:
                asyncio.get_running_loop().run_in_executor(
                    self._hearing, _quietly, spotter.score, bytes(self._buffer[:HEARD_BYTES]))

    def sentences(self) -> SentenceSet:
        return closed_set(*self._names())

    def _hear(self, pcm: bytes) -> Transcript:
        names = self._names() if self._read is None else self._read
        sentences = closed_set(*names)
        if self._enrolling is not None:
            return self._enrol_take(pcm, sentences, names)
        heard = self._heard(pcm, sentences, names)
        if (heard.wake and self.profile is not None and self._say is not None
                and sentences.intent_of(self.recognizer.command_words(heard.text, True))
                == LEARN_VOICE):
            return self._start_enrolling(heard)
        return heard

    def _heard(self, pcm: bytes, sentences: SentenceSet, names: ScreenNames) -> Transcript:
        personal = self._personal(pcm, sentences)
        if personal is not None and not personal.doubt:
            return self._noted(personal, pcm, sentences, self._take)
        heard = self.recognizer.transcribe(pcm, sentences, self._words_of(names),
                                           self._over_reply)
        if personal is not None and (heard.engine != "closed:whisper" or heard.doubt):
            # Whisper is no surer than the takes, which a near sentence may also fit: ask.
            return self._noted(personal, pcm, sentences, self._take)
        return self._noted(heard, pcm, sentences)

    def _start_enrolling(self, heard: Transcript) -> Transcript:
        """"Learn my voice": the phrases still to take, the first said, speech waited for longer."""
        assert self.profile is not None and self._say is not None
        self._enrolling = Enrolling.plan(self.profile, self.recognizer.wake_phrase,
                                         self._commands_to_enrol())
        self._say(self._enrolling.opening())
        if self._enrolling.done:
            self._enrolling = None
        else:
            self._tell_vad(ENROLLING_STOP_S)
        return Transcript("", None, heard.stt_ms, heard.audio_s)

    def _commands_to_enrol(self) -> list[str]:
        """The person's most said commands that the grammar can say, then the starting set."""
        try:
            said = self._frequent() if self._frequent is not None else []
        except Exception as e:  # no history to go by: the starting set alone
            log.warning("the commands said most could not be read: %s", e)
            said = []
        ours = [c for c in said if sayable(c)][:ENROLLED_COMMANDS]
        return list(dict.fromkeys([*ours, *STARTING_COMMANDS]))[:ENROLLED_COMMANDS]

    def _enrol_take(self, pcm: bytes, sentences: SentenceSet, names: ScreenNames) -> Transcript:
        """One take of the phrase asked for; "stop" (when that is not the phrase) ends it."""
        enrolling = self._enrolling
        assert enrolling is not None and self._say is not None
        asked = enrolling.phrases[0].said
        heard = self.recognizer.transcribe(pcm, sentences, self._words_of(names))
        said = self.recognizer.command_words(heard.text, bool(heard.wake))
        if said in STOP_WORDS and asked not in STOP_WORDS:
            reply = enrolling.stop()
        else:
            reply, finished = enrolling.take(pcm)
            if finished is not None and self._on_enrolled is not None:
                kind = "wake" if finished == self.recognizer.wake_phrase else "command"
                self._on_enrolled(finished, kind, enrolling.learned.get(finished, 0))
        if enrolling.done:  # the reply is its closing words
            self._enrolling = None
            self._tell_vad(self._stop_secs())
        self._say(reply)
        return Transcript("", None, 0.0, len(pcm) / 2 / RATE)

    def _tell_vad(self, stop_secs: float) -> None:
        """From the hearing thread: the VAD waits `stop_secs` of silence from now on."""
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(
                self.push_frame(EndOfSpeechFrame(stop_secs=stop_secs), FrameDirection.UPSTREAM),
                self._loop)

    def _personal(self, pcm: bytes, sentences: SentenceSet) -> Transcript | None:
        """The sentence the person's own takes hear, or None; doubtful when the screen has a
        sentence, not enrolled, spelt so near that the takes cannot tell the two apart."""
        if self.profile is None or self._over_reply:
            return None
        start = time.monotonic()
        try:
            templates = self.profile.template_set()
            found = templates.hear(pcm, lambda phrase: phrase in sentences)
        except Exception as e:  # a damaged profile: Whisper alone hears, as before enrolment
            log.warning("the voice profile could not be used: %s", e)
            return None
        if found is None or (found.wake and not self._wake_spotted(pcm)):
            return None
        self._take = found.take
        enrolled = set(templates.phrases)
        near = [s for s in sentences.nearest(found.phrase, 6)
                if s not in enrolled and fuzz.ratio(s, found.phrase) >= NEAR_SPELLING
                and not sentences.means_alike(s, found.phrase)]
        if near:
            log.info("heard %r by the person's takes, but %r is spelt too near", found.phrase,
                     near[0])
        return self._transcript(found, pcm, (time.monotonic() - start) * 1000,
                                Doubt.LESS_SURE if near else "")

    def _wake_spotted(self, pcm: bytes) -> bool:
        """The wake spotter does not veto the wake phrase the takes heard ("hey junior" is as
        near to them as the person's own), unless it vetoes the person's own wake takes too:
        then it does not know their voice, and the takes alone decide."""
        spotter = self.recognizer.spotter
        if spotter is None or self.profile is None:
            return True
        generation = self.profile.generation()
        if self._spotter_knows is None or self._spotter_knows[0] != generation:
            scores = [spotter.score(bytes(int(PREROLL_S * RATE) * 2) + take)
                      for take in self.profile.wake_audio()]
            knows = bool(scores) and float(np.median(scores)) >= SPOTTER_VETO
            self._spotter_knows = (generation, knows)
        return not self._spotter_knows[1] or spotter.score(pcm) >= SPOTTER_VETO

    def _transcript(self, found: TemplateMatch, pcm: bytes, ms: float,
                    doubt: str) -> Transcript:
        lead = self.recognizer.wake_phrase + " " if found.wake else ""
        # Never said in full: a pause in slow speech must not end the segment on a match.
        return Transcript(lead + found.phrase, found.sureness, ms, len(pcm) / 2 / RATE,
                          engine=TEMPLATE_ENGINE, wake=found.wake, doubt=doubt)

    def replied(self, reply: Reply) -> None:
        """The turn's reply to the last transcript: learning hears whether it acted."""
        if self._learning is not None:
            self._learning.replied(reply.acted)

    def _noted(self, heard: Transcript, pcm: bytes, sentences: SentenceSet,
               take: int = 0) -> Transcript:
        """What the transcript may teach the profile (learning.py), on this thread."""
        if self._learning is not None and heard.engine in ("closed:whisper", TEMPLATE_ENGINE):
            said = self.recognizer.command_words(heard.text, bool(heard.wake))
            self._learning.heard(said, pcm, sentences.intent_of(said), bool(heard.doubt), take)
        return heard


def _quietly(score: Callable[[bytes], float], pcm: bytes) -> None:
    """An early score that fails is only not early: `hear` scores the utterance again."""
    try:
        score(pcm)
    except Exception as e:
        log.warning("the wake spotter failed early: %s", e)
