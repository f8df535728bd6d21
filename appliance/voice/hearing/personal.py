"""The person's own voice in front of Whisper: their takes heard first (templates.py), enrolment
at the kiosk (enrolling.py), and what their use teaches the profile (learning.py)."""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from rapidfuzz import fuzz

from appliance.policy.doubts import Doubt
from appliance.voice.hearing.closed_set import SentenceSet
from appliance.voice.hearing.closed_whisper import (
    SPOTTER_SURE,
    SPOTTER_VETO,
    ClosedWhisperRecognizer,
)
from appliance.voice.hearing.early import checkpoint
from appliance.voice.hearing.enrolling import (
    ENROLLED_COMMANDS,
    ROOM_S,
    STARTING_COMMANDS,
    Enrolling,
    sayable,
)
from appliance.voice.hearing.learning import Learning
from appliance.voice.hearing.profile import VoiceProfile
from appliance.voice.hearing.stt_whisper import PREROLL_S, RATE, Transcript, as_captured
from appliance.voice.hearing.take_audio import heard_in_noise
from appliance.voice.hearing.templates import TemplateMatch, TemplateSet
from appliance.voice.sink import EnrolAction, EnrolState

log = logging.getLogger(__name__)

TEMPLATE_ENGINE = "closed:templates"
"""The engine a command heard by the person's own takes is recorded under."""
NEAR_SPELLING = 75.0
"""A sentence of the screen spelt this close to an enrolled one, itself not enrolled, is one
the takes cannot tell apart from it ("click save" beside an enrolled "click send")."""
CHOICE_MARGIN = 1.75
"""How much likelier (mean token log-probability) Whisper must find what the takes heard than
each of its rivals (`choice_rivals`), for the takes' words to stand without a whole decode."""
ANSWERS = ("confirm", "deny")
"""Answers to a question are said without the wake phrase: after a wake phrase the takes heard,
one may be a near miss's ("hi jupiter, no"), and does not stand on the takes alone (`settled`)."""
LEARN_VOICE = "learn_voice"
"""The grammar's intent that starts enrolment at the kiosk ("hey juniper, learn my voice")."""
STOP_WORDS = ("stop", "cancel", "stop that")
"""Said instead of the phrase asked for, these end enrolment (to be resumed later)."""
TAKES_SPOTTER_FLOOR = 2.0
"""The wake spotter's least log-odds for the person's takes alone to act on a command after a
wake phrase (one it knows the voice of); below it, Whisper hears the utterance."""
WAKE_VERIFY_QUIET = 0.5
"""In a quiet room, how far (in spreads of the person's wake takes) a wake phrase Whisper heard
may start from their nearest wake take; farther, it is a near miss ("hey june")."""
WAKE_VERIFY_NOISY = 1.5
"""The same in a noisy room, where noise moves the person's own wake phrase as far as that."""
OTHER_SPEECH_SHARE = 1.2
"""The wake bound is at most this many times the nearest the person's own free speech comes to
their wake takes, in the same room (their talk heard as the wake phrase is turned away)."""
WAKE_VERIFY_LEAST = 0.35
"""The free speech never tightens the bound below this: it may hold the wake phrase itself."""
END_ON_MATCH = 0.5
"""How sure (1 at a take, 0 at the bound) a match of the takes must be to end the utterance at
a pause, when nothing the screen allows goes on from it: else after part of the person's wait."""
END_RIVAL_RATIO = 0.6
"""And how much nearer than to the next phrase: a first word alone can be near two phrases."""
END_START_RATIO = 0.8
"""And than to the start of another phrase: at a pause, "scroll" is near "stop" and is how
"scroll down" begins."""
ENROLLING_STOP_S = 1.2
"""Silence that ends a take while enrolling: the person's own pauses are not known yet."""
PAUSED = ("Paused. I will listen as usual until you go on learning your voice, from the switch "
          "or by saying 'learn my voice'.")
GOING_ON = "Let's go on."


@dataclass(frozen=True)
class PersonalOptions:
    """`learning`: use teaches the profile (`on_learned` hears of each take); `on_enrolled`
    hears of each phrase enrolled at the kiosk (phrase, kind, takes); `stop_secs` is the wait
    after speech once the profile changed; `frequent` the commands the person says most."""

    learning: bool = True
    on_learned: Callable[[str], None] | None = None
    on_enrolled: Callable[[str, str, int], None] | None = None
    stop_secs: Callable[[], float] = lambda: 0.35
    frequent: Callable[[], list[str]] | None = None


@dataclass(frozen=True)
class SpotterScores:
    """The wake spotter's log-odds for each of the person's wake takes in use, as of the
    profile's `generation`; a take is known by its id and when it was made (an id is reused
    once the last take is deleted)."""

    generation: int
    scores: dict[tuple[int, float], float]

    @property
    def knows_voice(self) -> bool:
        """The spotter takes the person's own wake takes: it would not veto their wake phrase."""
        return bool(self.scores) and float(np.median(list(self.scores.values()))) >= SPOTTER_VETO


def fits_wake(templates: TemplateSet, pcm: bytes) -> bool:
    """Whether the utterance starts the way the person says their wake phrase, as far as their
    wake takes tell (True: no wake takes to tell by)."""
    fit = templates.wake_fit(pcm)
    return fit is None or fit <= wake_bound(pcm, templates)


def wake_bound(pcm: bytes, templates: TemplateSet) -> float:
    """How far (in spreads of their wake takes) the person's wake phrase may be from their
    nearest wake take, in the room this utterance was said in; nearer than their own free
    speech ever comes, when they enrolled some."""
    noisy = heard_in_noise(pcm)
    bound = WAKE_VERIFY_NOISY if noisy else WAKE_VERIFY_QUIET
    other = templates.other_fit(noisy)
    if other is None:
        return bound
    return max(WAKE_VERIFY_LEAST, min(bound, OTHER_SPEECH_SHARE * other))


def spelt_near(phrase: str, sentences: SentenceSet, enrolled: Collection[str]) -> list[str]:
    """The screen's sentences, not enrolled, spelt so near `phrase` that the person's takes of
    it may be nearest when one of them is said ("tick send" beside an enrolled "click send")."""
    return [s for s in sentences.nearest(phrase, 6)
            if s not in enrolled and fuzz.ratio(s, phrase) >= NEAR_SPELLING
            and not sentences.means_alike(s, phrase)]


def choice_rivals(phrase: str, sentences: SentenceSet, enrolled: Collection[str],
                  near: list[str]) -> list[str]:
    """What Whisper is made to choose the takes' phrase over: the sentences spelt near it, and
    the person's other phrases on the screen that ask for the same kind of thing ("scroll up"
    beside "scroll down": the takes took "scroll joe up" for "scroll down")."""
    intent = sentences.intent_of(phrase)
    return [*near, *(other for other in enrolled
                     if other != phrase and other in sentences
                     and sentences.intent_of(other) == intent)]


def may_end_at_match(found: TemplateMatch, sentences: SentenceSet,
                     answering: bool = False) -> bool:
    """Whether the takes' match may end the utterance at the pause it was heard in, once the
    person has been quiet a while: not how another phrase begins, and no sentence of the screen
    goes on from it. An answer only when said alone and not how the person's wake phrase
    begins: in slow speech "hey" alone passes for "yes" (unknown without their wake takes).
    `answering`: in a question's listening window an answer is awaited, and ends even where a
    sentence runs on from it ("no" into "noisier"), after the wake phrase too."""
    answer = sentences.intent_of(found.phrase) in ANSWERS
    maybe_wake_start = not found.wake and (
        math.isinf(found.wake_start) or found.distance > END_START_RATIO * found.wake_start)
    if answer and (maybe_wake_start or (found.wake and not answering)):
        return False
    return (found.distance <= END_START_RATIO * found.start
            and sentences.said_in_full(found.phrase)
            and ((answer and answering) or not sentences.runs_on(found.phrase)))


def other_answer_nearer(heard: str, nearest: dict[str, float], sentences: SentenceSet) -> bool:
    """Whether the person's takes of the other answer are nearer the utterance than their takes
    of the answer `heard` (`nearest`: each phrase's nearest take); False without takes of both."""
    intent = sentences.intent_of(heard)
    by_intent: dict[str, float] = {}
    for phrase, found in nearest.items():
        of = sentences.intent_of(phrase)
        if of in ANSWERS:
            by_intent[of] = min(found, by_intent.get(of, math.inf))
    mine = by_intent.pop(intent, math.inf) if intent in ANSWERS else math.inf
    return bool(by_intent) and math.isfinite(mine) and min(by_intent.values()) < mine


def sure_at_once(found: TemplateMatch) -> bool:
    """Whether the match is sure, and clearly nearer than the next phrase: what ending at once
    needs beyond `may_end_at_match`."""
    return found.sureness >= END_ON_MATCH and found.distance <= END_RIVAL_RATIO * found.rival


def ends_at_match(found: TemplateMatch, sentences: SentenceSet, answering: bool = False) -> bool:
    """Whether it may end the utterance at once."""
    return sure_at_once(found) and may_end_at_match(found, sentences, answering)


class PersonalHearing:
    """Runs on the STT's hearing thread; `say` is set once the pipeline can speak."""

    def __init__(self, profile: VoiceProfile, recognizer: ClosedWhisperRecognizer,
                 run_later: Callable[..., Any], tell_vad: Callable[[float], None],
                 options: PersonalOptions) -> None:
        self.profile = profile
        self.recognizer = recognizer
        self.options = options
        self.say: Callable[[str], None] | None = None
        self._tell_vad = tell_vad
        self._learning = (Learning(profile, run_later, options.on_learned,
                                   wake_phrase=recognizer.wake_phrase)
                          if options.learning else None)
        self._take = 0  # the take that heard the last utterance the templates matched
        self._wake_scores: SpotterScores | None = None
        self._enrolling: Enrolling | None = None
        self._paused = False  # the enrolment is kept where it was while the person is heard
        self._room = bytearray()  # the room's sound heard so far, while it is listened to

    @property
    def enrolling(self) -> bool:
        """Whether each utterance is a take of the phrase asked for."""
        return self._enrolling is not None and not self._paused

    @property
    def listening_to_room(self) -> bool:
        """Whether the room's own sound is wanted now (enrolment's last step)."""
        return (self._enrolling is not None and not self._paused
                and self._enrolling.listening_to_room)

    @property
    def enrolment(self) -> EnrolState:
        if self._enrolling is None:
            return "off"
        return "paused" if self._paused else "taking"

    # -- hearing ---------------------------------------------------------------------------

    def transcribe(self, pcm: bytes, sentences: SentenceSet, vocabulary: Sequence[str],
                   over_reply: bool, answering: bool = False) -> Transcript:
        """What the takes and Whisper hear together: the takes' phrase when they are sure of
        it; else Whisper's words, its wake phrase verified against the person's wake takes and
        settled against the phrase the takes doubt. `answering`: said in a question's window."""
        by_takes = self.hear(pcm, sentences, over_reply, answering)
        if by_takes is not None and not by_takes.doubt:
            return by_takes
        checkpoint()  # at a pause the person spoke past, Whisper's decode is not wanted
        captured = as_captured(pcm)
        heard = self.verified(
            self.recognizer.transcribe(pcm, sentences, vocabulary, over_reply), captured)
        if by_takes is not None:
            heard = self.settled(by_takes, heard, captured, sentences)
        return self.weighed(heard, captured, sentences)

    def hear(self, pcm: bytes, sentences: SentenceSet, over_reply: bool,
             answering: bool = False) -> Transcript | None:
        """The sentence the person's own takes hear, or None; doubtful when the screen has a
        sentence, not enrolled, spelt so near that the takes cannot tell the two apart, and
        Whisper, made to choose, does not clearly prefer the takes'; or when it is an answer
        after the wake phrase outside a question's window (ANSWERS). When the takes find two of
        the person's phrases nearly as near, Whisper chooses between them, or the takes heard
        nothing."""
        if over_reply:
            return None
        start = time.monotonic()
        try:
            templates = self.profile.template_set()
            found = templates.hear(pcm, lambda phrase: phrase in sentences)
        except Exception as e:  # a damaged profile: Whisper alone hears, as before enrolment
            log.warning("the voice profile could not be used: %s", e)
            return None
        spot = self._spot(pcm) if found is not None and found.wake else None
        if found is None or (spot is not None and spot < TAKES_SPOTTER_FLOOR):
            return None  # near misses fit the person's wake takes too ("hey jupiter")
        undecided = not found.decided
        if undecided:
            # Whisper's choice weighs the command, not the wake phrase before it, which near
            # misses fit as well ("hey june, pepper, click send"): the spotter must be sure.
            if found.wake and (spot is None or spot < SPOTTER_SURE):
                return None
            found = self._decided(pcm, found, sentences, templates.phrases)
            if found is None:
                return None
        self._take = found.take
        # In a question's window an answer counts with or without a wake phrase before it, so
        # a near miss of the wake phrase ("hey judy, yes") acts no more than "yes" alone would.
        if found.wake and not answering and sentences.intent_of(found.phrase) in ANSWERS:
            return self._transcript(found, pcm, (time.monotonic() - start) * 1000,
                                    Doubt.LESS_SURE, False)
        # Whisper, choosing among the takes' phrases, also weighed those spelt near them.
        near = [] if undecided else spelt_near(found.phrase, sentences, templates.phrases)
        doubted = bool(near) and self._chosen(
            pcm, [found.phrase], choice_rivals(found.phrase, sentences, templates.phrases, near),
            found.wake) is None
        if doubted:  # the words themselves stay out of the log, as the gate's do
            log.info("heard by the person's takes, but a sentence not enrolled is spelt too "
                     "near: Whisper decides")
        likely = not (doubted or undecided) and may_end_at_match(found, sentences, answering)
        return self._transcript(found, pcm, (time.monotonic() - start) * 1000,
                                Doubt.LESS_SURE if doubted else "",
                                likely and sure_at_once(found), likely)

    def _decided(self, pcm: bytes, found: TemplateMatch, sentences: SentenceSet,
                 enrolled: Collection[str]) -> TemplateMatch | None:
        """The phrase Whisper, made to choose, clearly prefers among those the takes cannot
        tell apart ("scroll up" and "scroll down" in a noisy room) and everything spelt near
        them; None when it prefers none clearly (then Whisper hears it whole, as before)."""
        candidates = [found.phrase, *(p for p in found.close if p in sentences)]
        rivals = [p for p in dict.fromkeys(itertools.chain(
            found.close, *(choice_rivals(c, sentences, enrolled,
                                         spelt_near(c, sentences, enrolled))
                           for c in candidates))) if p not in candidates]
        phrase = self._chosen(pcm, candidates, rivals, found.wake)
        if phrase is None:
            return None
        # The nearest take is another phrase's when Whisper chose a farther one: none is named.
        return replace(found, phrase=phrase, close=(),
                       take=found.take if phrase == found.phrase else 0)

    def _chosen(self, pcm: bytes, candidates: list[str], rivals: list[str],
                wake: bool) -> str | None:
        """The candidate Whisper, made to choose, finds clearly likelier than every other
        candidate and rival ("show numbers", not "hide numbers"); None when none is."""
        try:
            phrase, choice = self.recognizer.choose_among(pcm, candidates, rivals, wake)
        except Exception as e:  # then Whisper hears it whole, as before
            log.warning("Whisper could not choose between near sentences: %s", e)
            return None
        return phrase if choice.margin >= CHOICE_MARGIN else None

    def wake_alone(self, pcm: bytes) -> bool:
        """Whether the utterance so far is the person's wake phrase alone: a pause after it is
        not worth Whisper's decode, which would keep the command's own pause waiting."""
        try:
            return self.profile.template_set().wake_alone(pcm)
        except Exception as e:  # a damaged profile: heard as before enrolment
            log.warning("the voice profile could not be used: %s", e)
            return False

    def settled(self, by_takes: Transcript, whisper: Transcript, pcm: bytes,
                sentences: SentenceSet) -> Transcript:
        """What is passed on when the takes heard a phrase they doubt and Whisper heard it too
        (the hearing took both their times): Whisper's sure words, after the wake phrase the
        takes heard when Whisper missed it (as in slow speech) and it fits the person's wake
        takes; else the takes' doubted phrase, to be asked about. An answer after the takes'
        wake phrase is never asked about: it stands as Whisper heard it, or, when only the takes
        know the person's wake phrase (slow speech), as the takes heard it if Whisper heard
        the same answer."""
        took = by_takes.stt_ms + whisper.stt_ms
        phrase = self.recognizer.command_words(by_takes.text, bool(by_takes.wake))
        sure = whisper.engine == "closed:whisper" and not whisper.doubt
        wake_missed = (sure and by_takes.wake and not whisper.wake
                       and phrase == self.recognizer.command_words(whisper.text, False)
                       and self._fits_wake(pcm))
        if by_takes.wake and sentences.intent_of(phrase) in ANSWERS:
            # Where the spotter knows the person's voice, Whisper hears their wake phrase,
            # and the takes would add only near misses ("hey judy, yes") to it.
            if wake_missed and not self.spotter_knows_voice():
                return replace(by_takes, doubt="", stt_ms=took)
            return replace(whisper, stt_ms=took)
        if wake_missed:
            return replace(by_takes, doubt="", stt_ms=took)
        if not sure:
            # Whisper is no surer than the takes, which a near sentence fits.
            return replace(by_takes, stt_ms=took)
        whispered = self.recognizer.command_words(whisper.text, bool(whisper.wake))
        if by_takes.wake and sentences.intent_of(whispered) in ANSWERS:
            # ANSWERS' mirror: after the wake phrase comes a command, and an answer heard
            # there ("don't do that" for "undo that") loses the command; the takes' is asked.
            return replace(by_takes, stt_ms=took)
        return replace(whisper, stt_ms=took)

    def weighed(self, heard: Transcript, pcm: bytes, sentences: SentenceSet) -> Transcript:
        """Whisper's answer said alone, doubted when the person's takes of the other answer are
        nearer than their takes of it: at 5 dB a "no" can be written "yeah", and a yes acts."""
        said = self.recognizer.command_words(heard.text, False)
        if (heard.wake or heard.doubt or not heard.engine.endswith(":whisper")
                or sentences.intent_of(said) not in ANSWERS):
            return heard
        try:
            templates = self.profile.template_set()
            answers = [p for p in templates.phrases if sentences.intent_of(p) in ANSWERS]
            nearest = templates.nearest_takes(pcm, answers) if answers else {}
        except Exception as e:  # a damaged profile: Whisper alone hears, as before enrolment
            log.warning("the voice profile could not be used: %s", e)
            return heard
        if not other_answer_nearer(said, nearest, sentences):
            return heard
        log.info("Whisper heard an answer the person's takes of the other answer are nearer to")
        return replace(heard, doubt=Doubt.OTHER_ANSWER)

    def ready(self) -> None:
        """Work out what the profile needs once a change (its templates, how near the person's
        free speech comes to their wake takes, whether the spotter knows their voice): before
        the first utterance, now and then in quiet, and while the person speaks."""
        try:
            templates = self.profile.template_set()
            for noisy in (False, True):
                templates.other_fit(noisy)
            self.spotter_knows_voice()
        except Exception as e:  # then `hear` works it out at the end, and says what failed
            log.debug("readying the voice profile failed: %s", e)

    def warm(self, pcm: bytes) -> None:
        """Embed the utterance so far while the person speaks (the takes keep what they
        embed), and ready the profile if it changed."""
        try:
            self.profile.template_set().embedded(pcm)
        except Exception as e:  # then `hear` embeds it all at the end, and says what failed
            log.debug("embedding ahead failed: %s", e)
        self.ready()

    def verified(self, heard: Transcript, pcm: bytes) -> Transcript:
        """What Whisper heard, its wake phrase vetoed when it fits none of the person's own wake
        takes (the person's wake verifier: one who enrolled says it their way)."""
        if not heard.wake or self._fits_wake(pcm):
            return heard
        log.info("a wake phrase Whisper heard fits none of the person's wake takes: not taken")
        return replace(heard, wake=False, not_caught=False)

    def _fits_wake(self, pcm: bytes) -> bool:
        """`fits_wake` with the person's profile (True when it cannot be read: Whisper alone
        decides, as before enrolment)."""
        try:
            return fits_wake(self.profile.template_set(), pcm)
        except Exception as e:
            log.warning("the voice profile could not be used: %s", e)
            return True

    def _spot(self, pcm: bytes) -> float | None:
        """The wake spotter's log-odds for the wake phrase the takes heard ("hey junior" is as
        near to them as the person's own); None when there is no spotter, or it does not know
        the person's voice (it vetoes their own wake takes), and the takes alone decide."""
        spotter = self.recognizer.spotter
        if spotter is None or not self.spotter_knows_voice():
            return None
        return spotter.score(pcm)

    def spotter_knows_voice(self) -> bool:
        """Whether the wake spotter takes the person's own wake takes. Each is scored once
        (about 0.1 s, while the person speaks, by `warm`): takes learned from use change the
        profile after many commands, and scoring them all again held the next one's hearing."""
        spotter = self.recognizer.spotter
        if spotter is None:
            return True
        generation = self.profile.generation()
        known = self._wake_scores
        if known is None or known.generation != generation:
            before = {} if known is None else known.scores
            lead = bytes(int(PREROLL_S * RATE) * 2)
            scores: dict[tuple[int, float], float] = {}
            for take in self.profile.wake_takes():
                key = (take.id, take.created)
                scores[key] = (before[key] if key in before
                               else spotter.score(lead + self.profile.audio(take.id)))
            known = self._wake_scores = SpotterScores(generation, scores)
        return known.knows_voice

    def _transcript(self, found: TemplateMatch, pcm: bytes, ms: float,
                    doubt: str, in_full: bool, likely: bool = False) -> Transcript:
        lead = self.recognizer.wake_phrase + " " if found.wake else ""
        return Transcript(lead + found.phrase, found.sureness, ms, len(pcm) / 2 / RATE,
                          engine=TEMPLATE_ENGINE, wake=found.wake, doubt=doubt,
                          said_in_full=in_full, likely_in_full=likely)

    def after(self, heard: Transcript, pcm: bytes, sentences: SentenceSet) -> Transcript:
        """The transcript as passed on: what it teaches noted, or enrolment begun by it."""
        said = self.recognizer.command_words(heard.text, bool(heard.wake))
        intent = sentences.intent_of(said)
        if heard.wake and intent == LEARN_VOICE and self.say is not None:
            return self._start_enrolling(heard)
        if self._learning is not None and heard.engine in ("closed:whisper", TEMPLATE_ENGINE):
            take = self._take if heard.engine == TEMPLATE_ENGINE else 0
            # Said in a noisy room, a take would keep the noise as the person's voice and be
            # near the next utterance in that noise, whatever its words: it teaches nothing.
            noisy = heard_in_noise(pcm)
            command, wake = (b"", b"") if noisy else self._parts(pcm, bool(heard.wake))
            self._learning.heard(said, command, intent, bool(heard.doubt), take, wake)
        return heard

    def _parts(self, pcm: bytes, woken: bool) -> tuple[bytes, bytes]:
        """The command's audio and the wake phrase's before it, split where the person's wake
        takes end; a command whose wake phrase is not found teaches nothing (b"", b"")."""
        if not woken:
            return pcm, b""
        try:
            split = self.profile.template_set().wake_split(pcm)
        except Exception as e:  # a damaged profile: nothing is learned from this utterance
            log.warning("the voice profile could not be used: %s", e)
            return b"", b""
        return (b"", b"") if split is None else (split[1], split[0])

    def replied(self, acted: bool) -> None:
        if self._learning is not None:
            self._learning.replied(acted)

    # -- enrolment at the kiosk ------------------------------------------------------------

    def _start_enrolling(self, heard: Transcript) -> Transcript:
        """"Learn my voice" said: enrolment begins, and the words are no turn."""
        self.start_enrolling()
        return Transcript("", None, heard.stt_ms, heard.audio_s)

    def control(self, action: EnrolAction) -> None:
        """Enrolment started, paused, a phrase skipped or stopped, as the switch or the
        caregiver's page asked (on the hearing thread)."""
        if action == "start":
            self.start_enrolling()
            return
        if self._enrolling is None or (action == "pause" and self._paused):
            return
        if action == "pause":
            self._pause()
            return
        if self._paused:  # a skip goes on with the next phrase; a stop ends it
            self._paused = False
            self._tell_vad(ENROLLING_STOP_S)
        self._reply_to_take(self._enrolling, action, None)

    def start_enrolling(self) -> None:
        """The phrases still to take, the first said, speech waited for longer (on the hearing
        thread: said, or asked for from the switch or the caregiver's page)."""
        assert self.say is not None
        if self._enrolling is not None:
            lead = GOING_ON + " " if self._paused else ""
            self._paused = False
            self._tell_vad(ENROLLING_STOP_S)
            self.say(lead + self._enrolling.prompt())
            return
        enrolling = Enrolling.plan(self.profile, self.recognizer.wake_phrase,
                                   self._commands_to_enrol())
        self.say(enrolling.opening())
        if not enrolling.done:
            self._enrolling = enrolling
            self._tell_vad(ENROLLING_STOP_S)

    def _commands_to_enrol(self) -> list[str]:
        """The person's most said commands that the grammar can say, then the starting set."""
        frequent = self.options.frequent
        try:
            said = frequent() if frequent is not None else []
        except Exception as e:  # no history to go by: the starting set alone
            log.warning("the commands said most could not be read: %s", e)
            said = []
        ours = [c for c in said if sayable(c)][:ENROLLED_COMMANDS]
        return list(dict.fromkeys([*ours, *STARTING_COMMANDS]))[:ENROLLED_COMMANDS]

    def enrol_take(self, pcm: bytes, sentences: SentenceSet,
                   vocabulary: Sequence[str]) -> Transcript:
        """One take of the phrase asked for; "stop" (when that is not the phrase) ends it.
        While the room is listened to, speech is only part of its sound, unless it is "stop"."""
        enrolling = self._enrolling
        assert enrolling is not None
        asked = enrolling.phrases[0].said
        heard = self.recognizer.transcribe(pcm, sentences, vocabulary)
        said = self.recognizer.command_words(heard.text, bool(heard.wake))
        stop = said in STOP_WORDS and asked not in STOP_WORDS
        if stop or not enrolling.listening_to_room:
            self._reply_to_take(enrolling, "stop" if stop else "take", pcm)
        return Transcript("", None, 0.0, len(pcm) / 2 / RATE)

    def room_sound(self, audio: bytes) -> None:
        """More of the room's sound while it is listened to (on the hearing thread); once there
        is enough, it is kept and what comes next is said."""
        enrolling = self._enrolling
        if enrolling is None or not self.listening_to_room:
            self._room.clear()
            return
        self._room += audio
        if len(self._room) >= int(ROOM_S * RATE) * 2:
            room, self._room = bytes(self._room), bytearray()
            self._reply_to_take(enrolling, "take", room)

    def _reply_to_take(self, enrolling: Enrolling, action: Literal["take", "skip", "stop"],
                       pcm: bytes | None) -> None:
        """A take kept (or tried again), the phrase skipped, or the enrolment stopped: a phrase
        left with takes kept is told of, and what comes next is said."""
        asked = enrolling.phrases[0]
        if action == "take" and pcm is not None:
            reply = enrolling.take(pcm)
        else:
            reply = enrolling.skip() if action == "skip" else enrolling.stop()
        kept = enrolling.learned.get(asked.said, 0)
        left = enrolling.done or enrolling.phrases[0].said != asked.said
        on_enrolled = self.options.on_enrolled
        if left and kept and on_enrolled is not None:
            on_enrolled(asked.said, asked.kind.value, kept)
        if enrolling.done:  # the reply is its closing words
            self._enrolling = None
            self._tell_vad(self.options.stop_secs())
        assert self.say is not None
        if reply:  # nothing is said while the person talks freely
            self.say(reply)

    def _pause(self) -> None:
        """Takes wait; the person is heard as usual (and may say "learn my voice" to go on)."""
        self._paused = True
        self._room.clear()
        self._tell_vad(self.options.stop_secs())
        assert self.say is not None
        self.say(PAUSED)
