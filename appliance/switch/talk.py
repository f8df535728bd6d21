"""Push-to-talk: the switch lets speech through without the wake phrase.

Tap mode: a tap opens a window; the next utterance that begins in it is a command (the window
closes at the end of that speech). Hold mode: speech that begins while the switch is held is a
command; speech outside a hold still needs the wake phrase. Times are `time.monotonic()` seconds,
the clock of switch edges and of `AudioClock.monotonic_at` (appliance/voice/audio/clock.py).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

from appliance.settings import Settings
from appliance.voice.hearing.wake import WINDOW_S
from appliance.voice.sink import Reply, ScreenNames, TurnSink, Utterance, names_reader

TAP_WINDOW_S = WINDOW_S  # as long as the wake phrase's window
# Speech the VAD dates a little before the press still counts: people start talking as they
# press, and the VAD's start is an estimate.
LEAD_S = 0.5
KEEP_S = 120.0  # held periods older than this cannot match speech still being transcribed


@dataclass
class _Held:
    down: float
    up: float | None = None


class PushToTalk:
    """Told about presses by the switch side (any thread); asked by the voice pipeline."""

    def __init__(
        self, mode: Literal["tap", "hold"], window_s: float = TAP_WINDOW_S, lead_s: float = LEAD_S
    ) -> None:
        self.mode = mode
        self.window_s = window_s
        self.lead_s = lead_s
        self._lock = threading.Lock()
        self._tap: float | None = None
        self._held: list[_Held] = []

    @classmethod
    def from_settings(cls, settings: Settings) -> PushToTalk:
        return cls(settings.switch_talk)

    def tap(self, t: float) -> None:
        """Tap mode: listen for one utterance from now (a second tap restarts the window)."""
        with self._lock:
            self._tap = t

    def down(self, t: float) -> None:
        """Hold mode: the switch went down (an accepted edge, not the later hold press)."""
        with self._lock:
            if not (self._held and self._held[-1].up is None):
                self._held.append(_Held(t))
            self._held = [h for h in self._held if h.up is None or h.up > t - KEEP_S]

    def up(self, t: float) -> None:
        with self._lock:
            if self._held and self._held[-1].up is None:
                self._held[-1].up = t

    def cancel(self) -> None:
        """Forget an open tap window (a long hold cancelled, or the user went on scanning)."""
        with self._lock:
            self._tap = None

    def listening(self, now: float) -> bool:
        """Whether the next words will be taken without the wake phrase (for the panel)."""
        with self._lock:
            if self.mode == "tap":
                return self._tap is not None and now <= self._tap + self.window_s
            return bool(self._held) and self._held[-1].up is None

    def claims(self, start_t: float, end_t: float) -> bool:
        """The pipeline's question (voice.pipeline.gate.TalkHook): is this speech a command?

        `end_t` is not needed by either mode: both go by when the speech began.
        """
        with self._lock:
            if self.mode == "hold":
                return any(
                    h.down - self.lead_s <= start_t and (h.up is None or start_t <= h.up)
                    for h in self._held
                )
            if self._tap is None or start_t < self._tap - self.lead_s:
                return False  # no tap, or speech from before it
            opened, self._tap = self._tap, None  # one utterance per tap, or the window lapsed
            return start_t <= opened + self.window_s


class TalkingSink:
    """A TurnSink with push-to-talk attached: hand it to `run_voice` instead of the sink."""

    def __init__(self, sink: TurnSink, talk: PushToTalk) -> None:
        self.sink = sink
        self.talk = talk

    def vocabulary(self) -> list[str]:
        return self.sink.vocabulary()

    def screen_names(self) -> ScreenNames:
        """The inner sink's, so a command after a press is heard against the same closed set
        (its applications too) as one after the wake phrase."""
        return names_reader(self.sink)()

    def handle(self, utterance: Utterance) -> Reply:
        return self.sink.handle(utterance)

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        self.sink.spoke(turn_id, text, timings)

    def fault(self, message: str) -> None:
        report = getattr(self.sink, "fault", None)
        if callable(report):
            report(message)
