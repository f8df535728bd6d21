"""The wake phrase gate: which transcripts are commands, and the listening windows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz

_WORD = re.compile(r"[\w']+")
STRAY_WORD_SCORE = 90.0


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class WakeDecision:
    """`command`: text to run; `wake_only`: window opened; `ignored`: no wake, no window."""

    kind: Literal["command", "wake_only", "ignored"]
    text: str
    via: Literal["wake", "window", "switch", "none"] = "none"


WINDOW_S = 8.0
"""How long after the wake phrase (or a question) speech is taken without it: time to breathe."""


class WakeGate:
    """Accepts speech that starts with the wake phrase, falls in an open window, or is claimed by
    the push-to-talk switch (`talking`).

    Times are seconds on the audio clock (samples fed), so a file paced faster than real time
    opens the same windows as a live microphone.
    """

    def __init__(
        self, phrase: str = "hey juniper", window_s: float = WINDOW_S, threshold: float = 72.0
    ) -> None:
        self.phrase_words = words(phrase)
        if not self.phrase_words:
            raise ValueError("the wake phrase needs at least one word")
        self.window_s = window_s
        self.threshold = threshold
        self._window_until: float | None = None

    def open_window(self, now_s: float) -> None:
        self._window_until = now_s + self.window_s

    def window_open(self, now_s: float) -> bool:
        return self._window_until is not None and now_s <= self._window_until

    def split(self, text: str) -> str | None:
        """The words after the wake phrase, or None if the text does not start with it."""
        score, end = self.match(text)
        if score < self.threshold:
            return None
        return " ".join(words(text)[end:])

    def match(self, text: str) -> tuple[float, int]:
        """How well the start of `text` spells the wake phrase (rapidfuzz ratio, 0-100), and
        how many of its words that start is."""
        ws = words(text)
        target = " ".join(self.phrase_words)
        n = len(self.phrase_words)
        best: tuple[float, int] = (0.0, 0)
        # The wake phrase may be heard with one word too many or too few ("hey juni per", "a
        # juniper"), and may follow one stray word: a short filler ("so", "uh") or, if the
        # phrase itself is heard clearly, anything (Whisper sometimes invents a first word).
        for skip in (0, 1):
            for k in (n - 1, n, n + 1):
                if k < 1 or skip + k > len(ws):
                    continue
                score = fuzz.ratio(" ".join(ws[skip : skip + k]), target)
                if skip and len(ws[0]) > 3 and score < STRAY_WORD_SCORE:
                    continue
                if score > best[0]:
                    best = (score, skip + k)
        return best

    def strip_wake_start(self, ws: list[str]) -> list[str]:
        """A command in a window may start with part of the wake phrase again ("hey, check
        urgent"): that part is not the command."""
        i = 0
        while i < len(ws) - 1 and i < len(self.phrase_words):
            if fuzz.ratio(ws[i], self.phrase_words[i]) < 80:
                break
            i += 1
        return ws[i:]

    def decide(
        self,
        text: str,
        speech_start_s: float,
        wake_heard: bool | None = None,
        talking: bool = False,
    ) -> WakeDecision:
        """`wake_heard`: a dedicated spotter's verdict on the same audio, when there is one;
        `talking`: the switch says this speech is a command (push-to-talk)."""
        # A spotter that heard no wake phrase has the last word: the text may still spell it
        # (the closed path's best sentence, or words Whisper made into it).
        rest = self.split(text) if wake_heard is not False else None
        if rest is None and wake_heard:
            rest = " ".join(words(text)[len(self.phrase_words) :])
        if rest is not None:
            if rest:
                self._window_until = None
                return WakeDecision("command", rest, "wake")
            self.open_window(speech_start_s)
            return WakeDecision("wake_only", "", "wake")
        if talking and words(text):
            self._window_until = None
            return WakeDecision("command", " ".join(self.strip_wake_start(words(text))), "switch")
        if self.window_open(speech_start_s) and words(text):
            self._window_until = None
            return WakeDecision("command", " ".join(self.strip_wake_start(words(text))), "window")
        return WakeDecision("ignored", "")
