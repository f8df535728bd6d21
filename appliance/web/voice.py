"""The person's voice profile and what they taught, as the caregiver page shows them: the phrases
enrolled (the wake phrase first), each take in words, a take as a WAV to play, and the taught
names by application. Nothing here logs: a phrase or a recording never reaches a log line."""

from __future__ import annotations

import io
import wave
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, tzinfo

from appliance.desktop.seeing.taught import TaughtTarget
from appliance.journal.alias_log import Alias
from appliance.voice.audio.rate import PIPELINE_RATE
from appliance.voice.hearing.profile import Take, TakeKind, TakeSource
from appliance.web.shared import plural


def when(at: datetime | float, zone: tzinfo) -> str:
    """"Tue 1 Dec 14:02"."""
    moment = at.astimezone(zone) if isinstance(at, datetime) else datetime.fromtimestamp(at, zone)
    return f"{moment:%a} {moment.day} {moment:%b %H:%M}"


@dataclass(frozen=True)
class TakeRow:
    """One take, as its row reads."""

    id: int
    number: int  # 1, 2, ... within its phrase, oldest first
    learned: bool  # heard in use and confirmed by a yes (else enrolled)
    pending: bool  # learned from one yes, waiting for a second (not used yet)
    seconds: float
    when: str

    @property
    def how(self) -> str:
        if not self.learned:
            return "Enrolled"
        if self.pending:
            return "Learned from a yes; waiting for a second yes (not used yet)"
        return "Learned from a yes"

    @property
    def length(self) -> str:
        return f"{self.seconds:.1f} seconds"


@dataclass(frozen=True)
class PhraseRow:
    """A phrase and its takes; `key` is a take's id, which names the phrase in a page's
    address, so the words said never appear in an address (nor in an access log)."""

    phrase: str
    kind: TakeKind
    takes: list[TakeRow]

    @property
    def wake(self) -> bool:
        return self.kind == TakeKind.WAKE

    @property
    def key(self) -> int:
        return self.takes[0].id

    @property
    def title(self) -> str:
        if self.kind == TakeKind.SPEECH:
            return "The person talking freely (the wake phrase is told apart from it)"
        if self.kind == TakeKind.ROOM:
            return "The sound of the room, no one speaking (every take is also learned in it)"
        return f"\u201c{self.phrase}\u201d" + (" (the wake phrase)" if self.wake else "")

    @property
    def counts(self) -> str:
        """"3 takes: 2 enrolled, 1 learned from a yes; 1 waiting for a second yes"."""
        enrolled = sum(not t.learned for t in self.takes)
        learned = len(self.takes) - enrolled
        parts = [f"{enrolled} enrolled"] if enrolled else []
        if learned:
            parts.append(f"{learned} learned from a yes")
        waiting = sum(t.pending for t in self.takes)
        more = f"; {waiting} waiting for a second yes" if waiting else ""
        return f"{plural(len(self.takes), 'take')}: {', '.join(parts)}{more}"


SHOWN_ORDER = (TakeKind.WAKE, TakeKind.COMMAND, TakeKind.SPEECH, TakeKind.ROOM)


def phrases(takes: Iterable[Take], zone: tzinfo) -> list[PhraseRow]:
    """The takes by phrase: the wake phrase first, then the commands in alphabetical order,
    then the person talking freely and the room's sound; each phrase's takes oldest first."""
    grouped: dict[tuple[int, str], list[Take]] = {}
    for take in takes:
        grouped.setdefault((SHOWN_ORDER.index(take.kind), take.phrase), []).append(take)
    rows = []
    for (order, phrase), group in sorted(grouped.items()):
        group.sort(key=lambda t: (t.created, t.id))
        rows.append(PhraseRow(phrase, SHOWN_ORDER[order], [
            TakeRow(t.id, n, t.source == TakeSource.LEARNED, t.pending, t.seconds,
                    when(t.created, zone)) for n, t in enumerate(group, 1)]))
    return rows


def wav_of(pcm: bytes, rate: int = PIPELINE_RATE) -> bytes:
    """PCM16 mono as a WAV file's bytes, for an <audio> element to play."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm[: len(pcm) // 2 * 2])
    return out.getvalue()


TAUGHT_HOW = {"voice": "by voice", "text": "by typing", "switch": "with the switch",
              "web": "from this page"}


@dataclass(frozen=True)
class TaughtRow:
    """One taught name, as its row reads."""

    id: str
    name: str
    window: str
    taught: str  # "Tue 1 Dec 14:02, by voice"
    turn: str  # the short id of the turn it was taught in ("" when not known)
    used: str  # "Worked 3 times; missed twice since it last worked"


def _taught_how(by: str) -> tuple[str, str]:
    """A target's `by` ("voice turn 0123abcd...") as words and the turn's short id."""
    words = by.split()
    how = TAUGHT_HOW.get(words[0], f"by {words[0]}") if words else ""
    turn = words[2][:8] if len(words) >= 3 and words[1] == "turn" else ""
    return how, turn


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def _used(target: TaughtTarget) -> str:
    worked = f"Worked {_times(target.hits)}" if target.hits else "Not worked yet"
    if target.misses_since_hit:
        since = "since it last worked" if target.hits else "so far"
        return f"{worked}; missed {_times(target.misses_since_hit)} {since}"
    return worked


def taught_by_app(targets: Iterable[TaughtTarget], taught_at: dict[str, datetime],
                  zone: tzinfo) -> list[tuple[str, list[TaughtRow]]]:
    """The taught names by application (in alphabetical order), each application's oldest
    first."""
    apps: dict[str, list[TaughtRow]] = {}
    for target in targets:
        how, turn = _taught_how(target.by)
        at = taught_at.get(target.id)
        taught = ", ".join(p for p in (when(at, zone) if at else "", how) if p) or "not known"
        apps.setdefault(target.app, []).append(TaughtRow(
            target.id, target.name, target.window, taught, turn, _used(target)))
    return sorted(apps.items(), key=lambda item: item[0].casefold())


@dataclass(frozen=True)
class AliasRow:
    """One name the person gave an element ("call Doctor Patel my doctor"), as its row reads."""

    id: str
    name: str
    element: str
    taught: str  # "Tue 1 Dec 14:02, by voice"
    turn: str  # the short id of the turn it was said in ("" when given elsewhere)


def aliases_by_app(aliases: Iterable[Alias],
                   zone: tzinfo) -> list[tuple[str, list[AliasRow]]]:
    """The names given to elements by application (in alphabetical order), oldest first."""
    apps: dict[str, list[AliasRow]] = {}
    for alias in aliases:
        how = TAUGHT_HOW.get(alias.by, f"by {alias.by}") if alias.by else ""
        taught = ", ".join(p for p in (when(alias.at, zone) if alias.at else "", how) if p)
        apps.setdefault(alias.app, []).append(AliasRow(
            alias.id, alias.name, alias.element, taught or "not known", alias.turn[:8]))
    return sorted(apps.items(), key=lambda item: item[0].casefold())
