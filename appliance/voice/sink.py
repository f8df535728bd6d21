"""The seam between the voice layer and the rest: what was heard goes in, what to say comes out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

from appliance.desktop.roles import (
    SCROLL_BAR,
    SCROLL_PANE,
    SELECTABLE_ROLES,
    SPOKEN_NUMBER_ROLES,
    TOGGLE_ROLES,
)

if TYPE_CHECKING:
    from appliance.desktop.model import Snapshot


EnrolAction = Literal["start", "pause", "skip", "stop"]
"""What learning the person's voice is asked to do from outside the voice (the switch, the page)."""
EnrolState = Literal["off", "taking", "paused"]
"""Whether the voice is being learned now: takes heard, or paused where it was."""


@dataclass(frozen=True)
class Utterance:
    """One transcribed command (wake phrase already removed)."""

    text: str
    engine: str  # "vosk" | "whisper"
    confidence: float | None
    # Monotonic ms since the pipeline started: speech_start and speech_end (when the VAD
    # decided), transcript_ready; durations in ms: stt_ms, vad_ms (the VAD's stop hangover);
    # audio_start_s / audio_end_s: where the speech is in the input. `spoke` gets these plus
    # action_done, first_audio, spoke_done (ms) and spoken_s (length of the reply).
    timings: dict[str, float] = field(default_factory=dict)
    doubt: str = ""  # why the recogniser doubts the text (hearing/clarity.py): acting needs a yes


@dataclass(frozen=True)
class Reply:
    """What the turn wants said; `expects_answer` opens a listening window for yes/no."""

    turn_id: str
    spoken: str
    expects_answer: bool
    acted: bool = False  # the turn did what was said (an undo within a minute takes it back)


class ScreenNames(NamedTuple):
    """The names the grammar's {target} and {app} take on a screen, and the elements a number
    may be said to ("volume to 80": sliders, spin buttons, dials)."""

    targets: tuple[str, ...]
    apps: tuple[str, ...]
    numbered: tuple[str, ...] = ()
    percent_alike: tuple[str, ...] = ()
    """Of `numbered`, those that go from 0 to 100: "80 percent" is 80 on them."""
    toggles: tuple[str, ...] | None = None
    """The names of what can be ticked ("tick urgent"); None: not known, so any name may be."""
    selectable: tuple[str, ...] | None = None
    """The names of what can be selected (list items, tabs); None: not known."""
    panes: int | None = None
    """How many scroll panes the screen has; None: not known, or a scroll bar stands outside
    them (with one pane or none, "scroll down in contacts" scrolls what "scroll down" does)."""


def screen_names_of(snapshot: Snapshot) -> ScreenNames:
    """The names the grammar's {target} and {app} take on this screen, and those of what takes
    a number, a tick or a selection (the closed set's)."""
    takes = [n for n in snapshot.nodes if n.name and n.role in SPOKEN_NUMBER_ROLES]
    numbered = sorted({n.name for n in takes})
    # A name on two controls is alike only if both are 0..100.
    other = {n.name for n in takes if (n.minimum, n.maximum) != (0, 100)}
    alike = sorted({n.name for n in takes} - other)
    return ScreenNames(tuple(snapshot.names()), (*snapshot.applications, *snapshot.launchable),
                       tuple(numbered), tuple(alike), _named(snapshot, TOGGLE_ROLES),
                       _named(snapshot, SELECTABLE_ROLES), _panes(snapshot))


def _panes(snapshot: Snapshot) -> int | None:
    """The scroll panes, if every scroll bar is in one (a bar outside them is what scrolling
    an element outside them moves, where "scroll down" alone would press a key)."""
    panes = [n.id + "." for n in snapshot.nodes if n.role == SCROLL_PANE]
    loose = any(n.role == SCROLL_BAR and not n.id.startswith(tuple(panes))
                for n in snapshot.nodes)
    return None if loose else len(panes)


def _named(snapshot: Snapshot, roles: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted({n.name for n in snapshot.nodes if n.name and n.role in roles}))


# Words every command uses, so the recogniser is biased towards them as well as the screen.
COMMAND_WORDS = (
    "click",
    "press",
    "tap",
    "type",
    "into",
    "tick",
    "untick",
    "select",
    "open",
    "scroll",
    "undo",
    "that",
    "cancel",
    "yes",
    "no",
    "what is on the screen",
    "set",
    "to",
    "and then",
)


def vocabulary_of(names: ScreenNames) -> list[str]:
    """The recogniser's words for a screen whose (element, application) names are `names`."""
    return [*names.targets, *names.apps, *COMMAND_WORDS]


class TurnSink(Protocol):
    """Runs turns; the voice layer knows nothing about planning or the journal."""

    def vocabulary(self) -> list[str]: ...

    def handle(self, utterance: Utterance) -> Reply: ...

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None: ...


def names_reader(sink: TurnSink) -> Callable[[], ScreenNames]:
    """The sink's element and application names; a sink that only has a vocabulary gives that
    as its element names."""
    names = getattr(sink, "screen_names", None)
    if callable(names):
        return names  # type: ignore[no-any-return]
    return lambda: ScreenNames(tuple(sink.vocabulary()), ())
