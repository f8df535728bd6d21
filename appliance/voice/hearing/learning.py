"""What the person's use teaches their voice profile: the audio of a doubted sentence they then
confirmed with a yes, and of a command carried out that they did not undo within a minute,
becomes a take (pending until confirmed again); an undone command drops the take that heard it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from appliance.voice.hearing.profile import TakeKind, VoiceProfile
from appliance.voice.hearing.templates import MIN_TAKES

log = logging.getLogger(__name__)

UNDO_WINDOW_S = 60.0
"""A command carried out and not undone within this long is taken to have been heard right."""
YES = "confirm"
UNDO = "undo"
"""The grammar's intents for "yes" and "undo that"."""


@dataclass(frozen=True)
class Said:
    """One command as heard: its sentence, its audio, the take that heard it (0: Whisper), and
    the audio of the wake phrase said before it (b"": none)."""

    phrase: str
    pcm: bytes
    take: int
    at: float
    wake: bytes = b""


class Learning:
    """Heard on the hearing thread, told of replies from the pipeline's; learning runs later."""

    def __init__(self, profile: VoiceProfile, run_later: Callable[..., Any],
                 on_learned: Callable[[str], None] | None = None,
                 now: Callable[[], float] = time.monotonic, wake_phrase: str = "") -> None:
        self.profile = profile
        self._wake_phrase = wake_phrase
        self._run_later = run_later
        self._on_learned = on_learned
        self._now = now
        self._lock = threading.Lock()
        self._asked: Said | None = None  # doubted: a yes next confirms it
        self._waiting: Said | None = None  # heard surely: its reply says whether it acted
        self._acted: list[Said] = []  # carried out, not yet a minute old

    def heard(self, phrase: str, pcm: bytes, intent: str | None, doubted: bool,
              take: int = 0, wake: bytes = b"") -> None:
        """One transcript: `phrase` the sentence heard, `pcm` its audio (neither with the wake
        phrase), `intent` the grammar's; `wake` the wake phrase's audio before it."""
        said = Said(phrase, pcm, take, self._now(), wake)
        with self._lock:
            self._mature()
            asked, self._asked, self._waiting = self._asked, None, None
            if intent == YES and asked is not None:
                self._run_later(self._learn, asked)
            elif intent == UNDO and self._acted:
                undone = self._acted.pop()
                if said.at - undone.at <= UNDO_WINDOW_S and undone.take:
                    self._run_later(self._drop, undone)
            if not phrase:
                return
            if doubted:
                self._asked = said
            elif intent not in (YES, UNDO):
                self._waiting = said

    def replied(self, acted: bool) -> None:
        """The reply to the last transcript: whether its turn carried the command out."""
        with self._lock:
            waiting, self._waiting = self._waiting, None
            if acted and waiting is not None:
                self._acted.append(waiting)

    def _mature(self) -> None:
        """Commands carried out a minute ago and not undone: Whisper's become takes."""
        now = self._now()
        while self._acted and now - self._acted[0].at > UNDO_WINDOW_S:
            kept = self._acted.pop(0)
            if not kept.take:  # heard by a take already: nothing new to learn
                self._run_later(self._learn, kept)

    def _learn(self, said: Said) -> None:
        """The command's take, and the wake phrase's before it: a wake confirmed by use helps
        the takes find where the next command begins (the wake verifier reads enrolled ones)."""
        if said.pcm:
            self._learn_take(said.phrase, said.pcm, TakeKind.COMMAND)
        if said.wake and self._wake_phrase:
            self._learn_take(self._wake_phrase, said.wake, TakeKind.WAKE)

    def _learn_take(self, phrase: str, pcm: bytes, kind: TakeKind) -> None:
        try:
            self.profile.learn(phrase, pcm, kind)
        except Exception as e:  # a take that cannot be learned from is only not learned
            log.info("a take was not learned: %s", e)
            return
        if self._on_learned is not None:
            self._on_learned(phrase)

    def _drop(self, said: Said) -> None:
        """The take that heard an undone command, unless the phrase would then have too few
        takes to be heard at all."""
        left = [t.id for t in self.profile.takes(said.phrase) if not t.pending]
        if said.take in left and len(left) > MIN_TAKES:
            self.profile.delete_take(said.take)
            log.info("dropped a take: what it heard was undone")
