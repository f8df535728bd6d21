"""The person's own takes as templates: an utterance is matched against them by dynamic time
warping over openWakeWord's speech embeddings, and acts only inside bounds the takes define.

Each phrase's bound comes from its own enrolment: the utterance must be no farther from its
nearest take than SPREAD_FACTOR times the farthest two takes of that phrase are from each other,
and is acted on when clearly nearer to it than to any other phrase (RIVAL_RATIO); when not, the
match names the phrases the takes cannot tell it from, for Whisper to choose among. A take
learned in use counts only where the phrase's enrolled takes are within its bound too. Anything
else falls through to Whisper. With the wake phrase enrolled, "hey juniper, click send" is split
where the person's wake takes end and their command takes begin.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np
import numpy.typing as npt

from appliance.voice.audio.pcm import float_to_pcm16, pcm16_to_float
from appliance.voice.errors import VoiceError
from appliance.voice.hearing.stt_whisper import trim_silence
from appliance.voice.hearing.wake_spotter import (
    LEAD_S,
    MEL_FRAMES,
    MEL_HOP,
    MEL_STEP,
    MEL_WINDOW,
    RATE,
    speech_embedding,
)

Floats = npt.NDArray[np.float32]

# The tuned constants, one line each; the evidence: docs/measurements/personal-templates.md.
SPREAD_FACTOR = 2.0
"""How many times its takes' own spread an utterance may be from a phrase's nearest take."""
WAKE_SPREAD_FACTOR = 1.0
"""As SPREAD_FACTOR, for the wake phrase: near misses ("hey jennifer") must not wake it."""
WAKE_ALONE = 0.5
"""An utterance within this many spreads of the person's nearest wake take, whole, is their
wake phrase said alone (with nothing after it)."""
RIVAL_RATIO = 0.7
"""How much nearer than to the next phrase an utterance must be to its nearest phrase."""
MIN_SPREAD = 0.05
"""The least spread a phrase is given: two takes nearly alike must not make its bound a pin."""
FIRST_AUDIBLE = 16
"""The first embedding whose 775 ms window reaches past the 2 s of silence put before speech."""
MIN_TAKES = 2
"""Takes a phrase needs before it is matched: one take has no spread to bound it."""
MIN_COMMAND_BYTES = int(0.25 * RATE) * 2
"""The least audio after the wake phrase that may hold a command."""
OTHER_SPEECH_STEP = 3
"""Every how many embeddings (240 ms) a stretch of the person's free speech is tried as the
start of an utterance."""


def speech(pcm: bytes) -> bytes:
    """The utterance without the silence before and after it."""
    return float_to_pcm16(trim_silence(pcm16_to_float(pcm)))


def features(pcm: bytes) -> Floats:
    """The speech embeddings (one per 80 ms) of PCM already trimmed, each of unit length; those
    of an earlier utterance that began the same are not computed again."""
    try:
        embedder = speech_embedding()
    except ImportError:
        raise VoiceError("learning a voice needs openWakeWord's models (the voice extra: "
                         "bash scripts/setup.sh)") from None
    with _RECENT_LOCK:
        kept = max((_reusable(old, embedded, pcm) for old, embedded in _RECENT),
                   key=len, default=np.zeros((0, 0), np.float32))
    fresh = embedder.embed(pcm, FIRST_AUDIBLE + len(kept))
    norms = np.linalg.norm(fresh, axis=1, keepdims=True)
    fresh = fresh / np.maximum(norms, 1e-6)
    found = np.asarray(np.concatenate([kept, fresh]) if len(kept) else fresh, dtype=np.float32)
    with _RECENT_LOCK:
        if all(old != pcm for old, _ in _RECENT):
            _RECENT.appendleft((pcm, found))
    return found


RECENT_KEPT = 4
"""Utterances whose embeddings are kept: the one being spoken, its words after the wake phrase,
and the last one heard (which the wake verifier weighs after the templates)."""
_RECENT: deque[tuple[bytes, Floats]] = deque(maxlen=RECENT_KEPT)
_RECENT_LOCK = threading.Lock()


def _reusable(old: bytes, embedded: Floats, pcm: bytes) -> Floats:
    """The embeddings of `old` that `pcm` has too: those whose windows end before the two differ
    (an embedding reads only the audio before its window's end)."""
    if old == pcm:
        return embedded
    size = min(len(old), len(pcm))
    differ = np.flatnonzero(np.frombuffer(old[:size], np.uint8) != np.frombuffer(pcm[:size],
                                                                              np.uint8))
    same = int(differ[0]) if len(differ) else size
    count = 0
    while count < len(embedded) and embedding_end(count) <= same:
        count += 1
    return embedded[:count]


def embedding_end(index: int) -> int:
    """Where in the speech (bytes of PCM16) the window of `features(...)[index]` ends."""
    padded_end = (index + FIRST_AUDIBLE) * MEL_STEP * MEL_HOP + (MEL_FRAMES - 1) * MEL_HOP \
        + MEL_WINDOW
    return max(0, padded_end - int(LEAD_S * RATE)) * 2


def warp(template: Floats, utterance: Floats) -> Floats:
    """Cost of aligning all of `template` with each prefix of `utterance` (entry j: its first
    j + 1 frames), every cell of the path counted (symmetric DTW), per step of the path."""
    return warps([template], utterance)[0][0]


def warps(templates: Sequence[Floats], utterance: Floats) -> list[tuple[Floats, Floats]]:
    """`warp` of each template (none empty), and the cost of aligning all of `utterance` with
    each prefix of it. The templates' rows are stepped through together: numpy's cost per call,
    not the arithmetic, is what a template at a time spent."""
    lengths = np.array([len(t) for t in templates])
    count, rows, cols = len(templates), int(lengths.max(initial=0)), len(utterance)
    cost = np.ones((count, rows, cols))
    for k, template in enumerate(templates):
        cost[k, :len(template)] = 1.0 - np.asarray(template @ utterance.T, dtype=np.float64)
    acc = np.cumsum(cost[:, 0], axis=1) if rows else np.zeros((count, cols))
    ends = np.zeros((count, rows))
    ends[:, :1] = acc[:, -1:]
    edge = np.full((count, 1), np.inf)
    for i in range(1, rows):
        row = cost[:, i]
        # Down or diagonal into each cell, then any run along the utterance within the row.
        into = np.minimum(acc, np.concatenate((edge, acc[:, :-1]), axis=1)) + row
        run = np.cumsum(row, axis=1)
        going = lengths > i  # a shorter template's last row is its answer
        acc[going] = (run + np.minimum.accumulate(into - run, axis=1))[going]
        ends[:, i] = acc[:, -1]
    return [(np.asarray(acc[k] / (n + np.arange(1, cols + 1)), dtype=np.float32),
             np.asarray(ends[k, :n] / (cols + np.arange(1, n + 1)), dtype=np.float32))
            for k, n in enumerate(lengths)]


def distance(template: Floats, utterance: Floats) -> float:
    """Both wholly aligned: the warped cost per step of the path."""
    return fit(template, utterance)[0]


def fit(template: Floats, utterance: Floats) -> tuple[float, float]:
    """`distance`, and how near the utterance comes to the template's start: all of it aligned
    with the template's nearest prefix ("scroll" said is near the start of "scroll down")."""
    return fits([template], utterance)[0]


def fits(templates: Sequence[Floats], utterance: Floats) -> list[tuple[float, float]]:
    """`fit` of each template (an empty one, or an empty utterance, fits nowhere: inf)."""
    out = [(math.inf, math.inf)] * len(templates)
    kept = [k for k, t in enumerate(templates) if len(t)] if len(utterance) else []
    for k, (whole, begun) in zip(kept, warps([templates[k] for k in kept], utterance),
                                 strict=True):
        out[k] = (float(whole[-1]), float(np.min(begun)))
    return out


@dataclass(frozen=True)
class Template:
    """One take's embeddings: the person saying `phrase` (`noisy`: mixed with noise;
    `learned`: heard in use, in whatever room the person was in)."""

    phrase: str
    embeddings: Floats
    noisy: bool = False
    take: int = 0  # the profile's id of the take it is (0: none)
    learned: bool = False


@dataclass(frozen=True)
class TemplateMatch:
    """What the templates heard: the phrase, whether the wake phrase came first, how far the
    nearest take was and the bound it had to be within."""

    phrase: str
    wake: bool
    distance: float
    bound: float
    rival: float  # the nearest other phrase's distance (inf: none)
    take: int = 0  # the nearest take's id in the profile
    close: tuple[str, ...] = ()  # other phrases not clearly farther (RIVAL_RATIO), nearest first
    start: float = math.inf  # how near it comes to the start of another phrase's take (`fit`)
    wake_start: float = math.inf  # and of a wake take, when heard without the wake phrase

    @property
    def decided(self) -> bool:
        """Whether the takes tell the phrase from every other."""
        return not self.close

    @property
    def sureness(self) -> float:
        """1 at a take, 0 at the bound."""
        return max(0.0, 1.0 - self.distance / self.bound)


@dataclass
class TemplateSet:
    """The person's command takes and wake takes, with each phrase's bound."""

    commands: list[Template]
    wake: list[Template] = field(default_factory=list)
    spreads: dict[str, float] = field(default_factory=dict)
    wake_spread: float | None = None
    others: list[Template] = field(default_factory=list)  # the person talking freely
    enrolled: frozenset[str] = frozenset()  # the phrases whose bounds enrolled takes set
    _other_fits: dict[bool, float | None] = field(default_factory=dict)
    # The last utterance's costs against the wake takes, and how near it comes to their start:
    # a pause's check for the wake phrase alone, the split after it and `hear`'s own check
    # all read the same ones (keyed by whether learned takes were left out, as the verifier's).
    _last_costs: dict[bool, tuple[Floats, Floats, float]] = field(default_factory=dict)

    @classmethod
    def of(cls, commands: Iterable[Template], wake: Iterable[Template] = (),
           others: Iterable[Template] = ()) -> TemplateSet:
        kept = list(commands)
        woken = list(wake)
        by_phrase: dict[str, list[Template]] = {}
        for t in kept:
            by_phrase.setdefault(t.phrase, []).append(t)
        spreads = {p: s for p, takes in by_phrase.items() if (s := bound_spread(takes)) is not None}
        enrolled = frozenset(p for p in spreads if _enrolled_bound(by_phrase[p]))
        if enrolled:  # a phrase learned from use alone is bounded no looser than any enrolled
            loosest = max(spreads[p] for p in enrolled)
            spreads = {p: min(s, loosest) for p, s in spreads.items()}
        wake_spread = bound_spread(woken)
        return cls([t for t in kept if t.phrase in spreads], woken if wake_spread else [],
                   spreads, wake_spread, list(others), enrolled)

    @property
    def phrases(self) -> list[str]:
        return sorted(self.spreads)

    def hear(self, pcm: bytes, allowed: Callable[[str], bool]) -> TemplateMatch | None:
        """The phrase the utterance is, within its bounds and allowed now, else None; after
        the person's wake phrase when their wake takes fit its start."""
        if not self.commands:
            return None
        whole, rest = self.embedded(pcm)
        if rest is not None:
            woken = self.match(rest, allowed, wake=True)
            if woken is not None:
                return woken
        if self._wake_alone(whole):  # "hey juniper" alone is no command, however near one
            return None
        return self.match(whole, allowed, wake=False)

    def wake_alone(self, pcm: bytes) -> bool:
        """Whether the utterance is the person's wake phrase and nothing after it, as their
        wake takes tell (False: no wake takes to tell by)."""
        return self._wake_alone(features(speech(pcm)))

    def _wake_alone(self, embedded: Floats) -> bool:
        if not self.wake or self.wake_spread is None or len(embedded) == 0:
            return False
        whole = float(self._wake_costs(embedded)[-1])
        return whole <= WAKE_ALONE * max(self.wake_spread, MIN_SPREAD)

    def embedded(self, pcm: bytes) -> tuple[Floats, Floats | None]:
        """The utterance's embeddings, and those of its words after the person's wake phrase
        (None: it does not start with it); while it is spoken, computed ahead for `hear`."""
        said = speech(pcm)
        whole = features(said)
        rest = self._after_wake(said, whole) if len(whole) else None
        return whole, None if rest is None else features(rest)

    def match(self, utterance: Floats, allowed: Callable[[str], bool],
              wake: bool = False) -> TemplateMatch | None:
        """The phrase these embeddings are nearest, within its bound and allowed now, else
        None; not `decided` when another phrase is nearly as near."""
        if len(utterance) == 0:
            return None
        nearest = self._nearest_takes(self.commands, utterance)
        ranked = sorted(nearest, key=lambda p: nearest[p].distance)
        if not ranked:
            return None
        phrase, best = ranked[0], nearest[ranked[0]].distance
        rival = nearest[ranked[1]].distance if len(ranked) > 1 else math.inf
        bound = self.bound(phrase)
        if best > bound or not allowed(phrase):
            return None
        close = tuple(other for other in ranked[1:]
                      if best > RIVAL_RATIO * nearest[other].distance)
        start = min((nearest[other].start for other in ranked[1:]), default=math.inf)
        wake_start = math.inf if wake or not self.wake else self._wake_warped(utterance)[1]
        return TemplateMatch(phrase, wake, best, bound, rival, nearest[phrase].take, close,
                             start, wake_start)

    def nearest_takes(self, pcm: bytes, phrases: Collection[str]) -> dict[str, float]:
        """How far the whole utterance is from each phrase's nearest take, bounds aside (a
        phrase without takes is left out)."""
        kept = [t for t in self.commands if t.phrase in phrases]
        nearest = self._nearest_takes(kept, features(speech(pcm)))
        return {phrase: near.distance for phrase, near in nearest.items()}

    def bound(self, phrase: str) -> float:
        """How far an utterance may be from the phrase's nearest take to be heard as it."""
        return SPREAD_FACTOR * max(self.spreads[phrase], MIN_SPREAD)

    def _nearest_takes(self, templates: Sequence[Template],
                       utterance: Floats) -> dict[str, _Nearest]:
        """`_nearest_takes`, a take learned in use counted only where the enrolled takes of its
        phrase are within its bound too: it makes a match surer, never makes one (noise, or
        another voice, can be nearer a take heard in use than anything the person enrolled)."""
        gated = [t.learned and t.phrase in self.enrolled for t in templates]
        learned = [t for t, g in zip(templates, gated, strict=True) if g]
        nearest = _nearest_takes([t for t, g in zip(templates, gated, strict=True) if not g],
                                 utterance)
        if not learned:
            return nearest
        for phrase, near in _nearest_takes(learned, utterance).items():
            was = nearest[phrase]
            if was.distance <= self.bound(phrase) and near.distance < was.distance:
                was = _Nearest(near.distance, near.take, was.start)
            nearest[phrase] = replace(was, start=min(was.start, near.start))
        return nearest

    @property
    def verifying(self) -> list[Template]:
        """The wake takes the wake verifier reads: the enrolled ones, as the wake phrase's bound
        is read (`bounding`); a wake take learned in use splits and matches, but never verifies."""
        return bounding(self.wake)

    def wake_fit(self, pcm: bytes) -> float | None:
        """How far the utterance's start is from the person's nearest wake take (`verifying`),
        in units of their wake takes' own spread (None: no wake takes to go by)."""
        if not self.wake or self.wake_spread is None:
            return None
        embedded = features(speech(pcm))
        if len(embedded) == 0:
            return math.inf
        fit = float(np.min(self._wake_costs(embedded, verifying=True)))
        return fit / max(self.wake_spread, MIN_SPREAD)

    def other_fit(self, noisy: bool) -> float | None:
        """How near the person's free speech ever comes to starting the way their wake takes
        do, as `wake_fit` measures it (`noisy`: its copy mixed with noise); None: no free
        speech or no wake takes. Computed once."""
        if noisy not in self._other_fits:
            self._other_fits[noisy] = self._nearest_other(noisy)
        return self._other_fits[noisy]

    def _nearest_other(self, noisy: bool) -> float | None:
        others = [t.embeddings for t in self.others if t.noisy == noisy]
        if not others or not self.wake or self.wake_spread is None:
            return None
        # A stretch twice the longest wake take is enough for the wake takes to fit its start.
        window = 2 * max(len(t.embeddings) for t in self.verifying)
        nearest = min(float(np.min(self._wake_costs(other[start:start + window], verifying=True)))
                      for other in others
                      for start in range(0, max(1, len(other) - window // 2), OTHER_SPEECH_STEP))
        return nearest / max(self.wake_spread, MIN_SPREAD)

    def _wake_costs(self, embedded: Floats, verifying: bool = False) -> Floats:
        """For each prefix of the utterance, its cost against the nearest wake take (of those
        the verifier reads, when `verifying`)."""
        return self._wake_warped(embedded, verifying)[0]

    def _wake_warped(self, embedded: Floats, verifying: bool = False) -> tuple[Floats, float]:
        """`_wake_costs`, and how near the utterance comes to the start of a wake take (`fit`)."""
        takes = self.verifying if verifying else self.wake
        fewer = len(takes) < len(self.wake)
        last = self._last_costs.get(fewer)
        if last is not None and np.array_equal(last[0], embedded):
            return last[1], last[2]
        warped = warps([t.embeddings for t in takes], embedded)
        costs = np.asarray(np.min(np.stack([whole for whole, _ in warped]), axis=0),
                           dtype=np.float32)
        start = min(float(np.min(begun)) for _, begun in warped)
        self._last_costs[fewer] = (embedded, costs, start)
        return costs, start

    def wake_split(self, pcm: bytes) -> tuple[bytes, bytes] | None:
        """The utterance's wake phrase and the words after it, split where the person's wake
        takes end in it (None: they do not fit its start)."""
        said = speech(pcm)
        embedded = features(said)
        end = self._wake_end(said, embedded) if len(embedded) else None
        return None if end is None else (said[:end], speech(said[end:]))

    def _after_wake(self, said: bytes, embedded: Floats) -> bytes | None:
        """The speech after the person's wake phrase, when one of their wake takes fits the
        utterance's start within the wake phrase's bound; else None."""
        end = self._wake_end(said, embedded)
        return None if end is None else speech(said[end:])

    def _wake_end(self, said: bytes, embedded: Floats) -> int | None:
        """Where (bytes) the person's wake phrase ends in the speech, when one of their wake
        takes fits its start within the wake phrase's bound, a command's length before its end."""
        if not self.wake or self.wake_spread is None:
            return None
        costs = self._wake_costs(embedded)
        ends = [j for j in range(len(costs)) if len(said) - embedding_end(j) >= MIN_COMMAND_BYTES]
        if not ends:
            return None
        end = min(ends, key=lambda j: float(costs[j]))
        if costs[end] > WAKE_SPREAD_FACTOR * max(self.wake_spread, MIN_SPREAD):
            return None
        return embedding_end(end)


@dataclass(frozen=True)
class _Nearest:
    """A phrase's nearest take to an utterance, and how near the utterance comes to the start
    of any of its takes (`fit`)."""

    distance: float
    take: int
    start: float


def _nearest_takes(templates: Sequence[Template], utterance: Floats) -> dict[str, _Nearest]:
    """For each phrase among the templates, its nearest take to the utterance."""
    nearest: dict[str, _Nearest] = {}
    for template, (found, begun) in zip(
            templates, fits([t.embeddings for t in templates], utterance), strict=True):
        was = nearest.get(template.phrase, _Nearest(math.inf, 0, math.inf))
        if found < was.distance:
            was = _Nearest(found, template.take, was.start)
        nearest[template.phrase] = _Nearest(was.distance, was.take, min(begun, was.start))
    return nearest


def bound_spread(takes: Sequence[Template]) -> float | None:
    """The spread of a phrase's clean `bounding` takes; None with too few."""
    chosen = [t for t in bounding(takes) if not t.noisy]
    return spread([t.embeddings for t in chosen]) if len(chosen) >= MIN_TAKES else None


def bounding(takes: Sequence[Template]) -> list[Template]:
    """The takes a phrase's bound is read from: its enrolled ones when MIN_TAKES of them are
    clean, else all. Takes learned in use may be matched, but never widen a bound: one heard in
    a noisy room keeps that noise in its own "clean" copy."""
    return [t for t in takes if not t.learned] if _enrolled_bound(takes) else list(takes)


def _enrolled_bound(takes: Sequence[Template]) -> bool:
    return sum(not t.noisy and not t.learned for t in takes) >= MIN_TAKES


def spread(takes: Sequence[Floats]) -> float:
    """The farthest two takes of one phrase are from each other."""
    return max((distance(a, b) for a, b in combinations(takes, 2)), default=0.0)
