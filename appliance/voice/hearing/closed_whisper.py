"""Closed-set recognition with Whisper itself: one encoder pass, a greedy decode under a fixed
prompt (the wake decision and the open transcript), then the screen's nearest sentences scored.
When the wake spotter is sure of the wake phrase, a short utterance is heard first through a 10 s
encoder window, a third of Whisper's cost; only a sentence of the screen it heard freely is
taken from it, all else is heard again through the full 30 s window.

The fixed prompt never holds the screen's names, so whether the wake phrase is heard does not
change with the screen. It does hold the wake phrase, which makes near misses ("hey jennifer")
into it: a second opinion with no prompt at all (`wake_evidence`) confirms it.

The greedy text picks a short list of the screen's sentences by spelling; CTranslate2 scores
each of them as a forced transcript of the same audio (`Whisper.align`'s token probabilities).
The best one is taken if Whisper finds it about as likely as what it heard freely; otherwise the
greedy text goes on as open transcription.
"""

from __future__ import annotations

import itertools
import math
import re
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz

from appliance.intents.keys import letters_alike
from appliance.policy.doubts import Doubt
from appliance.settings import WakeCheckName
from appliance.voice.hearing.clarity import heard_clearly, letter_alike
from appliance.voice.hearing.closed_set import SentenceSet, values_named
from appliance.voice.hearing.early import checkpoint
from appliance.voice.hearing.stt_whisper import (
    MAX_COMPRESSION_RATIO,
    MAX_TOKENS,
    MIN_AVG_LOGPROB,
    NO_SPEECH_MAX,
    RATE,
    Transcript,
    WhisperEngine,
    bias_prompt,
    speech_of,
)
from appliance.voice.hearing.wake import WakeGate, words
from appliance.voice.hearing.wake_spotter import WakeSpotter

# The tuned constants, one line each. How each was tuned, with its counts, and the runs that
# measured it: docs/measurements/closed-set-tuning.md.
FULL_WINDOW = 3000
"""Feature frames (30 s) Whisper's encoder was trained on."""
QUICK_WINDOW = 1000
"""Feature frames (10 s) of the quick pass (`_quick`), for an utterance with a second to spare."""
CHOICE_WINDOW = 400
"""Feature frames (4 s) Whisper chooses between sentences through (`choose_among`), likewise."""
SHORTLIST = 8
"""Sentences scored per utterance (nearest by spelling to what was heard)."""
FRAMED = 3
"""Dictation sentences scored as well: Whisper's words with the frame's around them."""
ALIGN_BATCH = 3
"""Sequences forced per CTranslate2 align call (the same scores; small batches are faster)."""
MARGIN = 1.3
"""How far below the free transcript's mean token log-probability a sentence may score."""
FLOOR = -1.9
"""A sentence scoring below this is not taken as said, however poor the free transcript."""
ASK_MARGIN = 0.9
"""As MARGIN, for a sentence taken as doubtful: acting on it needs a yes."""
ASK_FLOOR = -2.8
"""As FLOOR, for a sentence taken as doubtful: acting on it needs a yes."""
LETTER_MARGIN = 0.5
"""A letter key is asked about when a letter whose name rhymes with it scores within this."""
DICTATION_FLOOR = -0.43
"""Words to write heard less surely than this (e^-0.43 = 0.65) are read back and asked about."""
WAKE_MARGIN = -6.0
"""How far "Juniper" forced after "Hey" (no prompt) may score below the free words there."""
WAKE_WORD_SCORE = 72.0
"""How closely a written word must spell the wake word when the spotter heard the wake phrase."""
FIRST_WAKE_MARGIN = -2.25
"""The first tuning's margin, on the whole phrase, a no-speech verdict rejecting (`strict`)."""
SPOTTER_VETO = -2.0
"""The wake spotter's log-odds below which it overrules the `command` check's yes."""
SPOTTER_SURE = 8.0
"""The wake spotter's log-odds at or above which it wakes on its own, whatever Whisper wrote."""


@dataclass(frozen=True)
class WakeEvidence:
    """The second opinion's scores of one utterance (no prompt): the forced wake phrase's mean
    token log-probability less that of the free decode, whole and for the wake word alone."""

    phrase: float
    word: float
    no_speech: bool  # the free decode called the audio no speech


@dataclass(frozen=True)
class Choice:
    """A sentence's mean token log-probability as the transcript, and how far above its
    likeliest rival's, over the tokens each rival differs in (`apart`)."""

    score: float
    margin: float


@dataclass(frozen=True)
class WakeCheck:
    """A margin on the evidence: whether only the wake word's tokens count (not "Hey"), and
    whether the free decode's no-speech verdict rejects outright."""

    margin: float
    word_only: bool
    no_speech_rejects: bool

    def passes(self, evidence: WakeEvidence) -> bool:
        if self.no_speech_rejects and evidence.no_speech:
            return False
        return (evidence.word if self.word_only else evidence.phrase) >= self.margin


LENIENT = WakeCheck(WAKE_MARGIN, word_only=True, no_speech_rejects=False)
STRICT = WakeCheck(FIRST_WAKE_MARGIN, word_only=False, no_speech_rejects=True)


@dataclass(frozen=True)
class WakeRule:
    """Woken when `sure` passes; when only `if_command` does, woken only if what follows is
    taken as a sentence of the screen, sure or doubtful (talk in the room seldom is one), or
    if nothing follows. With a wake spotter: below `spotter_veto` neither counts, and at
    `spotter_sure` or above the spotter wakes on its own."""

    sure: WakeCheck
    if_command: WakeCheck | None = None
    spotter_veto: float | None = None
    spotter_sure: float | None = None

    @property
    def spots(self) -> bool:
        return self.spotter_veto is not None or self.spotter_sure is not None

    def spotted(self, spot: float | None) -> bool:
        return spot is not None and self.spotter_sure is not None and spot >= self.spotter_sure

    def vetoed(self, spot: float | None) -> bool:
        return spot is not None and self.spotter_veto is not None and spot < self.spotter_veto


WAKE_CHECKS: dict[WakeCheckName, WakeRule] = {
    # Misses few wake phrases, but conversation often wakes it.
    "lenient": WakeRule(LENIENT),
    # Conversation rarely wakes it, but it misses more wake phrases (female voices most).
    "strict": WakeRule(STRICT),
    # Strict, or lenient before a sentence of the screen or before nothing: its misses are
    # mostly words heard wrong or not at all.
    "command": WakeRule(STRICT, if_command=LENIENT),
    # `command` with the wake spotter's two opinions (SPOTTER_VETO, SPOTTER_SURE), for the
    # phrase it was trained for; `wake_rule` gives any other phrase `command`.
    "spotter": WakeRule(STRICT, if_command=LENIENT, spotter_veto=SPOTTER_VETO,
                        spotter_sure=SPOTTER_SURE),
}
"""The caregiver's choice (the `wake_check` setting); figures in
docs/measurements/voice-corpus.md."""


def wake_rule(name: WakeCheckName, phrase: str) -> tuple[WakeCheckName, WakeRule]:
    """The rule the caregiver chose, or `command` when it needs a spotter and none was trained
    for this wake phrase (the name says which is used)."""
    spots = WAKE_CHECKS[name].spots
    if spots and WakeSpotter.load(" ".join(WakeGate(phrase).phrase_words)) is None:
        return "command", WAKE_CHECKS["command"]
    return name, WAKE_CHECKS[name]


_HOP = RATE // 100  # samples per feature frame: Whisper's frames are 10 ms
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_PERCENT_SIGN = re.compile(r"(?<=\d)\s*%")
_PERCENT_SAID = re.compile(r"(\d) percent\b")


@dataclass(frozen=True)
class Heard:
    """What one utterance became, and why (for the journal and the bench)."""

    text: str  # with the canonical wake phrase first when it was heard
    path: str  # "closed" | "open"
    wake: bool
    greedy: str
    score: float | None  # the best sentence's, taken or not
    greedy_score: float | None
    best: str = ""  # the best sentence of the set, taken or not
    confidence: float | None = None  # e^(mean token log-probability) of the text given
    evidence: WakeEvidence | None = None  # the second opinion's, when the fixed pass heard it
    doubt: str = ""  # why the closed set's sentence was taken with doubt: act only after a yes
    not_caught: bool = False  # the wake phrase, then words too doubtful to pass on
    spot: float | None = None  # the wake spotter's log-odds, when the rule has one
    window_s: float = FULL_WINDOW / 100  # the encoder's window this was heard through
    framed: bool = False  # a dictation sentence: the template's words around Whisper's

    @property
    def doubtful(self) -> bool:
        return bool(self.doubt)


@dataclass
class FixedPass:
    """The audio encoded and its greedy decode under the fixed prompt; the decode with the
    screen's names in the prompt is made once, when first needed (the words after a doubtful
    wake phrase may be heard twice: as a command, then as no wake phrase)."""

    scorer: WhisperScorer
    encoded: Any
    frames: int
    text: str
    tokens: list[int]
    logprob: float
    no_speech: float  # Whisper's probability that the audio holds no speech
    screen_prompt: str | None  # the screen's words and the wake phrase; None: no screen words

    @property
    def silent(self) -> bool:
        """Nothing heard, or Whisper finds no speech in it."""
        return not self.tokens or self.no_speech > NO_SPEECH_MAX

    @cached_property
    def screen(self) -> tuple[str, float]:
        """That decode and its mean token log-probability; the fixed prompt's if it loops."""
        if self.screen_prompt is not None:
            heard, _tokens, logprob, _ = self.scorer.greedy(
                self.encoded, self.scorer.prompt(self.screen_prompt))
            if not looping(heard):
                return heard, logprob
        return self.text, self.logprob


class WhisperScorer:
    """The parts of faster-whisper's model used directly: encode, greedy decode, align."""

    def __init__(self, engine: WhisperEngine) -> None:
        from faster_whisper.tokenizer import Tokenizer  # type: ignore[import-untyped]

        self._fw: Any = engine._model
        self._ct2: Any = self._fw.model
        self.tokenizer: Any = Tokenizer(self._fw.hf_tokenizer, self._ct2.is_multilingual,
                                        task="transcribe", language="en")
        # The last encoding, for the next reader of the same audio: Whisper's choice between
        # near sentences, then its quick pass, read one utterance through the same window.
        self._last: tuple[tuple[int, bytes], tuple[Any, int]] | None = None

    def encode(self, audio: npt.NDArray[np.float32],
               window: int = FULL_WINDOW) -> tuple[Any, int]:
        """The audio's encoding through `window` feature frames (padded, as faster-whisper
        pads, or cut), and how many frames hold the audio."""
        from faster_whisper.audio import pad_or_trim  # type: ignore[import-untyped]

        checkpoint()
        key = (window, audio.tobytes())
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        features = self.features(audio)
        frames = min(features.shape[-1], FULL_WINDOW)
        width = min(FULL_WINDOW, max(window, frames))
        encoded = self.encode_features(pad_or_trim(features, width + width % 2)), frames
        self._last = (key, encoded)
        return encoded

    def features(self, audio: npt.NDArray[np.float32]) -> Any:
        """The audio's log-Mel features, as faster-whisper computes them."""
        return self._fw.feature_extractor(audio)

    def encode_features(self, features: Any) -> Any:
        """The encoder's output for features already padded or cut to a window."""
        return self._fw.encode(features)

    def prompt(self, text: str | None) -> list[int]:
        tok = self.tokenizer
        head = [tok.sot_prev, *tok.encode(" " + text.strip())[-223:]] if text else []
        return [*head, *tok.sot_sequence, tok.no_timestamps]

    beam_size = 1
    """Greedy: beam search in every decode cost more time than it gained (the tuning record)."""

    def greedy(self, encoded: Any, prompt: list[int]) -> tuple[str, list[int], float, float]:
        """(text, tokens, mean token log-probability, no-speech probability); see beam_size."""
        checkpoint()
        result = self._ct2.generate(
            encoded, [prompt], beam_size=self.beam_size, max_length=len(prompt) + MAX_TOKENS,
            return_scores=True, return_no_speech_prob=True, suppress_blank=True,
            suppress_tokens=[-1],
        )[0]
        tokens = [t for t in result.sequences_ids[0] if t < self.tokenizer.eot]
        text = self.tokenizer.decode(tokens).strip()
        return text, tokens, float(result.scores[0]), float(result.no_speech_prob)

    def score(self, encoded: Any, frames: int, prompt: list[int],
              texts: list[list[int]]) -> list[float]:
        """Mean log-probability of each token sequence as the transcript of the audio."""
        return [_mean(t) for t in self.token_logprobs(encoded, frames, prompt, texts)]

    def token_logprobs(self, encoded: Any, frames: int, prompt: list[int],
                       texts: list[list[int]]) -> list[list[float]]:
        """Each token's log-probability, each sequence forced as the transcript of the audio."""
        import ctranslate2  # type: ignore[import-untyped]

        out: list[list[float]] = []
        for i in range(0, len(texts), ALIGN_BATCH):
            checkpoint()
            part = texts[i:i + ALIGN_BATCH]
            batch = np.repeat(np.asarray(encoded), len(part), axis=0)
            results = self._ct2.align(ctranslate2.StorageView.from_array(batch), prompt, part,
                                      [frames] * len(part))
            out += [[math.log(max(p, 1e-9)) for p in r.text_token_probs] for r in results]
        return out


def _fits(audio: npt.NDArray[np.float32], window: int) -> bool:
    """Whether the utterance fits `window` feature frames with a second to spare."""
    return len(audio) + RATE <= window * _HOP


def _mean(logprobs: Sequence[float]) -> float:
    return sum(logprobs) / max(1, len(logprobs))


def apart(own: tuple[list[int], list[float]], rival: tuple[list[int], list[float]]) -> float:
    """How much likelier (mean token log-probability) a forced transcript is than a rival. A
    rival as long in tokens is scored only from the first token they differ in: the words both
    begin with score alike and would thin the difference ("scroll up" against "scroll down").
    Tails of unequal length do not line up, so such a rival is scored on the whole."""
    (own_tokens, own_probs), (rival_tokens, rival_probs) = own, rival
    same = 0
    if len(own_tokens) == len(rival_tokens):
        while same < len(own_tokens) and own_tokens[same] == rival_tokens[same]:
            same += 1
    return _mean(own_probs[same:]) - _mean(rival_probs[same:])


def compression_ratio(text: str) -> float:
    """faster-whisper's mark of a repetition loop ("hit, hit, hit, ...")."""
    data = text.encode()
    return len(data) / max(1, len(zlib.compress(data)))


LOOP_LETTERS = 5
"""A letter written this many times in a row is a loop, not speech. Only a letter: "no no no
no no" may be someone who wants something stopped."""


def looping(text: str) -> bool:
    """A repetition loop: faster-whisper's mark, or one letter over and over in a text too
    short for that to see (a held-out voice's "type c u s h u h h h h h h h h h h" was typed)."""
    said = words(text)
    return compression_ratio(text) > MAX_COMPRESSION_RATIO or any(
        len(said[i]) == 1 and len(set(said[i:i + LOOP_LETTERS])) == 1
        for i in range(len(said) - LOOP_LETTERS + 1))


def final_numbers(command: str) -> set[str]:
    """The number a command ends with, as Whisper wrote it ("volume to 80 percent": 80), the
    only one a sentence of the set may say ("volume 2 a d" says none). "280" is also "to 80",
    Whisper's way of writing "to eighty"; no slider takes 280."""
    said = command.split()
    if said[-1:] == ["percent"]:
        said = said[:-1]
    if not said or not said[-1].isdigit():
        return set()
    number = said[-1]
    if len(number) == 3 and number[0] == "2" and number[1] != "0":
        return {number, number[1:]}
    return {number}


def written(sentence: str, heard: str, lead: str) -> str:
    """A sentence of the set written the way Whisper would write it: each word cased as in what
    it heard, else lower case, after the wake phrase or capitalized, with a full stop."""
    seen = {w.casefold(): w for w in _WORD.findall(heard)}
    out = " ".join(seen.get(w, w) for w in sentence.split())
    out = _PERCENT_SAID.sub(r"\1%", out)  # "volume to 80%", as Whisper writes it
    if not lead:
        out = out[:1].upper() + out[1:]
    return lead + out + "."


class ClosedWhisperRecognizer:
    """Recognizes one utterance against a screen's sentences, or transcribes it openly."""

    name = "closed:whisper"
    quick_window: int | None = QUICK_WINDOW
    """None: every utterance through the full window (appliance_lab.tuning.closed_set_variants)."""
    full_window: int = FULL_WINDOW
    """Fewer frames are faster and lose words (the tuning record)."""
    choice_window: int | None = CHOICE_WINDOW
    """None: Whisper chooses through the quick window (or the full one, if it does not fit)."""

    def __init__(self, engine: WhisperEngine, wake_phrase: str = "hey juniper",
                 wake_check: WakeRule | None = WAKE_CHECKS["command"]) -> None:
        """`wake_check`: the second opinion's rule, or None for the fixed pass alone (the
        trade: docs/measurements/voice-corpus.md, "The wake phrase's second opinion")."""
        self.engine = engine
        self.wake_check = wake_check
        self.scorer = WhisperScorer(engine)
        self.gate = WakeGate(wake_phrase)
        self.wake_phrase = " ".join(self.gate.phrase_words)
        spots = wake_check is not None and wake_check.spots
        self.spotter = WakeSpotter.load(self.wake_phrase) if spots else None
        if spots and self.spotter is None:
            raise ValueError(f"no wake spotter was trained for {self.wake_phrase!r}")
        self._prompt = self.scorer.prompt(bias_prompt([], wake_phrase))
        # Sentences are scored without the prompt: half the cost, and as far apart.
        self._plain = self.scorer.prompt(None)
        self._wake_tokens: list[int] = self.scorer.tokenizer.encode(
            " " + self.wake_phrase.title())
        # The wake phrase's first word ("Hey") is every near miss's too: its tokens are skipped.
        head: list[int] = self.scorer.tokenizer.encode(" " + self.gate.phrase_words[0].title())
        fits = len(head) < len(self._wake_tokens) and self._wake_tokens[:len(head)] == head
        self._wake_head = len(head) if fits else 0

    @property
    def fixed_prompt(self) -> list[int]:
        """The fixed prompt's tokens (the wake phrase, never the screen's names)."""
        return self._prompt

    @property
    def plain_prompt(self) -> list[int]:
        """No prompt at all: sentences are scored, and the wake phrase weighed, under it."""
        return self._plain

    def wake_evidence(self, encoded: Any, frames: int) -> WakeEvidence:
        """How much less likely Whisper finds the wake phrase at the start of the audio than what
        it hears there with no prompt: the fixed prompt holds "Hey Juniper" and makes "hey
        jennifer" or "hey junior" into it, this does not. The wake tokens come first, so their
        forced probabilities do not depend on the rest."""
        scorer = self.scorer
        _text, tokens, logprob, no_speech = scorer.greedy(encoded, self._plain)
        if not tokens:
            return WakeEvidence(-math.inf, -math.inf, True)
        forced = scorer.token_logprobs(encoded, frames, self._plain, [self._wake_tokens])[0]
        word = forced[self._wake_head:]
        return WakeEvidence(sum(forced) / len(forced) - logprob, sum(word) / len(word) - logprob,
                            no_speech > NO_SPEECH_MAX)

    def choose(self, pcm: bytes, sentence: str, rivals: Sequence[str], wake: bool) -> Choice:
        """Whisper's choice between a sentence and its rivals, each forced as the transcript of
        the utterance (no prompt; the choice window when the utterance fits it)."""
        return self.choose_among(pcm, [sentence], rivals, wake)[1]

    def choose_among(self, pcm: bytes, candidates: Sequence[str], rivals: Sequence[str],
                     wake: bool) -> tuple[str, Choice]:
        """The candidate Whisper finds likeliest, and how much likelier than every other
        candidate and rival (as `choose`; one encoding for them all)."""
        audio = speech_of(pcm)
        window = next((w for w in (self.choice_window, self.quick_window)
                       if w is not None and _fits(audio, w)), self.full_window)
        encoded, frames = self.scorer.encode(audio, window)
        lead = self.wake_phrase.title() + ", " if wake else ""
        texts = [self.scorer.tokenizer.encode(" " + written(s, "", lead))
                 for s in [*candidates, *rivals]]
        scored = list(zip(texts, self.scorer.token_logprobs(encoded, frames, self._plain, texts),
                          strict=True))
        choices = [Choice(_mean(scored[i][1]), min(
            (apart(scored[i], other) for j, other in enumerate(scored) if j != i),
            default=math.inf)) for i in range(len(candidates))]
        best = max(range(len(candidates)), key=lambda i: choices[i].margin)
        return candidates[best], choices[best]

    def hear(
        self, pcm: bytes, sentences: SentenceSet, vocabulary: Sequence[str] = (),
        over_reply: bool = False,
    ) -> Heard:
        """`vocabulary`: the screen's words, for the open path's prompt (never the wake's).
        `over_reply`: said over the appliance's own voice, so the spotter has no say (below)."""
        audio = speech_of(pcm)
        # The spotter never heard the echo canceller's leftovers in training: over a reply Piper's
        # "Hey juniper." scores 6.4 to 12.6 with where the echo falls, 11.9 alone
        # (docs/barge-in.md). Whisper's evidence decides there, as the command check does.
        spot = None if self.spotter is None or over_reply else self.spotter.score(pcm)
        rule, window = self.wake_check, self.quick_window
        if (rule is not None and rule.spotted(spot) and window is not None
                and self._fits_quick(audio)):
            quick = self._quick(audio, window, spot, sentences)
            if quick is not None:
                return quick
        fixed = self.fixed_pass(audio, self.full_window, vocabulary)
        window_s = self.full_window / 100
        if fixed.silent:
            return Heard("", "open", False, fixed.text, None, None, spot=spot, window_s=window_s)
        return replace(self._wake(fixed, spot, sentences), spot=spot, window_s=window_s)

    def fixed_pass(self, audio: npt.NDArray[np.float32], window: int,
                   vocabulary: Sequence[str]) -> FixedPass:
        """The audio encoded through `window` feature frames and decoded under the fixed
        prompt."""
        encoded, frames = self.scorer.encode(audio, window)
        greedy, tokens, logprob, no_speech = self.scorer.greedy(encoded, self._prompt)
        return FixedPass(self.scorer, encoded, frames, greedy, tokens, logprob, no_speech,
                         bias_prompt(list(vocabulary), self.wake_phrase) if vocabulary else None)

    def _fits_quick(self, audio: npt.NDArray[np.float32]) -> bool:
        """Whether the utterance fits the quick window with a second to spare."""
        return self.quick_window is not None and _fits(audio, self.quick_window)

    def _quick(self, audio: npt.NDArray[np.float32], window: int, spot: float | None,
               sentences: SentenceSet) -> Heard | None:
        """After a wake phrase the spotter was sure of (so the window cannot change the wake
        decision): a sentence of the screen Whisper heard freely through the quick window, or
        None. Nothing is scored: through this window Whisper often starts over after the
        sentence ("Hey Juniper, undo that. Hey Juniper, do that."), and "don't do that" then
        scored best."""
        fixed = self.fixed_pass(audio, window, ())
        if fixed.silent or fixed.logprob < MIN_AVG_LOGPROB:
            return None
        said = self.woken(fixed).text
        first = _SENTENCE_END.split(said, maxsplit=1)
        if len(first) == 2 and self.gate.split(first[1]) is not None:
            said = first[0]  # the first saying is what was said; then Whisper started over
        command = self.command_words(said, True)
        # A key named by a letter ("control c") is heard again through the full window: the
        # quick one wrote espeak-ng's "c" as "z" where the full one did not.
        if command not in sentences or not heard_clearly(command) or sentences.keys_said(command):
            return None
        return Heard(f"{self.wake_phrase} {command}", "closed", True, fixed.text, None, None,
                     command, math.exp(fixed.logprob), spot=spot, window_s=window / 100)

    def _wake(self, fixed: FixedPass, spot: float | None, sentences: SentenceSet) -> Heard:
        """The wake decision (the rule on the fixed pass, its second opinion and the spotter's
        log-odds), and the words after it."""
        rule, heard_wake = self.wake_check, self.gate.split(fixed.text) is not None
        if rule is not None and rule.spotted(spot):
            # Sure from the sound alone, whatever Whisper wrote for the wake phrase.
            return self._rest(self.woken(fixed), True, None, sentences)
        if not heard_wake or rule is None or rule.vetoed(spot):
            woken = heard_wake and rule is None  # no rule: the fixed pass alone decides
            return self._rest(fixed, woken, None, sentences)
        evidence = self.wake_evidence(fixed.encoded, fixed.frames)
        if rule.sure.passes(evidence):
            return self._rest(fixed, True, evidence, sentences)
        if rule.if_command is not None and rule.if_command.passes(evidence):
            heard = self._rest(fixed, True, evidence, sentences)
            # A sentence of the screen, sure or to be asked about (not a dictation sentence,
            # which talk after a near miss would fit: "hey jenna, tell him ..."); or the wake
            # phrase alone, its command to come in the window it opens (people pause after it).
            listed = heard.path == "closed" and not heard.framed
            if listed or not self.command_words(fixed.text, True):
                return heard
        return self._rest(fixed, False, evidence, sentences)

    def _rest(self, fixed: FixedPass, wake: bool, evidence: WakeEvidence | None,
              sentences: SentenceSet) -> Heard:
        """The words after the wake decision: a sentence of the set, or open transcription."""
        scorer = self.scorer
        encoded, frames, greedy = fixed.encoded, fixed.frames, fixed.text
        tokens, logprob = fixed.tokens, fixed.logprob
        command = self.command_words(greedy, wake)
        lead = self.wake_phrase + " " if wake else ""
        if not command:  # the wake phrase alone
            return Heard(lead, "open", wake, greedy, None, None, "", math.exp(logprob),
                         evidence)
        if not heard_clearly(command):
            # "uncheck urgent" heard as "and check urgent": the nearest sentence would be the
            # opposite action, done without a question. Open, the validator asks first.
            return Heard(lead + command, "open", wake, greedy, None, None, "", math.exp(logprob),
                         evidence)
        wake_text = self.wake_phrase.title() + ", " if wake else ""
        if command in sentences and logprob >= MIN_AVG_LOGPROB:
            # Heard freely as a sentence of the set: nothing to weigh it against but the
            # letters that sound like a letter it names.
            return Heard(lead + command, "closed", wake, greedy, None, None, command,
                         math.exp(logprob), evidence,
                         doubt=self._letter_rivalled(fixed, command, sentences, wake_text))
        # With the screen's names in the prompt Whisper spells them better ("click send", not
        # "click and"), and invents them more: that decode only proposes sentences, which are
        # scored without it, and is the open transcript, as on the open path.
        screen, screen_logprob = fixed.screen
        screen_command = self.command_words(screen, wake)
        shortlist = list(dict.fromkeys(itertools.chain.from_iterable(zip(
            sentences.nearest(command, SHORTLIST), sentences.nearest(screen_command, SHORTLIST),
            strict=False,
        ))))[:SHORTLIST]
        # A number said to a slider is never guessed: "volume to eighty", written "Volume 280.",
        # scored best as "volume 20" (a short prefix's tokens are likelier on average).
        heard_numbers = final_numbers(command) | final_numbers(screen_command)
        shortlist = [s for s in shortlist
                     if (n := sentences.number(s)) is None or n.split()[0] in heard_numbers]
        # Dictation keeps the words open transcription would take (the screen's decode, which
        # spells the screen's names, unless Whisper doubts it); the words around them are the
        # template's ("send grandma a message saying ..." where it wrote "send grandma message
        # settings ...").
        dictated = screen_command if screen_logprob >= MIN_AVG_LOGPROB else command
        dictation = sentences.framed(dictated, FRAMED)  # the words fit a dictation template
        framed = [s for s in dictation if s not in shortlist]
        shortlist += framed
        # Every sentence is written as Whisper wrote freely: the screen's prompt capitalizes
        # its words as names ("Click Send."), and so does the screen ("Send", "Urgent"),
        # where Whisper writes "click send.", which scores 0.3-0.5 higher.
        texts = [tokens] + [
            scorer.tokenizer.encode(" " + written(s, greedy, wake_text)) for s in shortlist]
        scores = scorer.score(encoded, frames, self._plain, texts)
        greedy_score, best, score = scores[0], "", None
        ranked = sorted(range(len(shortlist)), key=lambda i: -scores[1 + i])
        if ranked and shortlist[ranked[0]] in framed:
            best, score = shortlist[ranked[0]], scores[1 + ranked[0]]
            if best.split() != dictated.split() and score >= max(FLOOR, greedy_score - MARGIN):
                return Heard(lead + best, "closed", wake, greedy, score, greedy_score, best,
                             math.exp(score), evidence, framed=True,
                             doubt=Doubt.WORDS_UNSURE if score < DICTATION_FLOOR else "")
            # A frame that changes nothing Whisper wrote is open transcription, as before; and
            # dictation Whisper is unsure of is not asked about word for word: the sentences of
            # the screen are weighed as if it had not been scored, then open transcription.
        ranked = [i for i in ranked if shortlist[i] not in framed]
        # A value Whisper did not write is never acted on unasked: "press control plus" scored
        # best where it wrote "press control lass" for "... s", and "set the volume to the
        # maximum" where it wrote "... minimum" (a sentence the capped set does not list). The
        # best sentence naming only values it wrote is weighed first; one that supplies a key,
        # a direction or an extreme is at most asked about.
        heard = values_named(command.split()) | values_named(screen_command.split())
        as_heard = next((i for i in ranked if sentences.values(shortlist[i]) <= heard), None)
        weighed = {} if as_heard is None else {as_heard: True}  # index -> may act unasked
        for i in ranked[:1]:
            weighed.setdefault(i, False)
        for i, may_act in weighed.items():
            best, score = shortlist[i], scores[1 + i]
            sure = score >= max(FLOOR, greedy_score - MARGIN)
            if sure or score >= max(ASK_FLOOR, greedy_score - ASK_MARGIN):
                doubt = (Doubt.LESS_SURE if not sure else Doubt.VALUE_NOT_HEARD if not may_act
                         else self._letter_rivalled(fixed, best, sentences, wake_text))
                return Heard(lead + best, "closed", wake, greedy, score, greedy_score, best,
                             math.exp(score), evidence, doubt=doubt)
        # Open transcription, filtered as the open path filters it (stt_whisper.py). The
        # screen's decode first; when Whisper doubts it, the fixed prompt's ("type good night"
        # heard right there, its screen decode too unsure to keep: the command was lost).
        for said, said_logprob in ((screen_command, screen_logprob), (command, logprob)):
            if said_logprob >= MIN_AVG_LOGPROB and not looping(said):
                unsure = bool(dictation) and said_logprob < DICTATION_FLOOR
                return Heard(lead + said, "open", wake, greedy, score, greedy_score, best,
                             math.exp(said_logprob), evidence,
                             doubt=Doubt.WORDS_UNSURE if unsure else "")
        return Heard(lead, "open", wake, greedy, score, greedy_score, best,
                     math.exp(screen_logprob), evidence, not_caught=wake)

    def _letter_rivalled(self, fixed: FixedPass, sentence: str, sentences: SentenceSet,
                         lead: str) -> str:
        """Why a key the sentence names by a letter is doubtful ("": it is not): a rival letter
        of the set, its name alike, that Whisper scores within LETTER_MARGIN of it ("press
        control z", written for espeak-ng's "c", which scored 0.01 to 0.43 lower)."""
        said = sentence.split()
        keys = sentences.keys_said(sentence)
        for i, letter in enumerate(said):
            if letter not in keys:
                continue
            rivals = {other: rival for other in letters_alike(letter)
                      if (rival := " ".join([*said[:i], other, *said[i + 1:]])) in sentences}
            if not rivals:
                continue
            # Each rival's letter cased as Whisper cased this one, so only the sound differs.
            upper = letter.upper() in _WORD.findall(fixed.text)
            texts = [written(sentence, fixed.text, lead)] + [
                written(rival, f"{fixed.text} {other.upper() if upper else ''}", lead)
                for other, rival in rivals.items()]
            scores = self.scorer.score(fixed.encoded, fixed.frames, self._plain, [
                self.scorer.tokenizer.encode(" " + text) for text in texts])
            close = [other for other, score in zip(rivals, scores[1:], strict=True)
                     if score >= scores[0] - LETTER_MARGIN]
            if close:
                return letter_alike(letter, close)
        return ""

    def woken(self, fixed: FixedPass) -> FixedPass:
        """The fixed pass as if it had written the wake phrase the spotter heard: Whisper's
        words for it dropped ("thank you juniper, switch to ..."), or none when in noise it
        wrote only the command ("okay go ahead")."""
        if self.gate.split(fixed.text) is not None:
            return fixed
        said, last = words(fixed.text), self.gate.phrase_words[-1]
        near = said[:len(self.gate.phrase_words) + 2]
        cut = next((i + 1 for i, w in enumerate(near) if fuzz.ratio(w, last) >= WAKE_WORD_SCORE), 0)
        return replace(fixed, text=f"{self.wake_phrase.title()}, {' '.join(said[cut:])}")

    def command_words(self, text: str, wake: bool) -> str:
        """The words of `text` after the wake phrase (or after as many words, when the fixed
        pass heard it and this text did not), lower case."""
        text = _PERCENT_SIGN.sub(" percent", text)  # "80%": the set says "80 percent"
        rest = self.gate.split(text)
        if rest is None:
            said = words(text)
            rest = " ".join(said[len(self.gate.phrase_words):] if wake else said)
        return " ".join(_WORD.findall(rest.casefold()))

    def transcribe(
        self, pcm: bytes, sentences: SentenceSet, vocabulary: Sequence[str] = (),
        over_reply: bool = False,
    ) -> Transcript:
        start = time.monotonic()
        heard = self.hear(pcm, sentences, vocabulary, over_reply)
        return Transcript(
            heard.text.strip(), heard.confidence, (time.monotonic() - start) * 1000,
            len(pcm) / 2 / RATE,
            engine=f"{heard.path}:whisper", wake=heard.wake, doubt=heard.doubt,
            not_caught=heard.not_caught,
            # A sure sentence of the set that nothing the screen allows goes on from.
            said_in_full=(heard.path == "closed" and not heard.doubtful
                          and sentences.said_in_full(heard.best)),
        )
