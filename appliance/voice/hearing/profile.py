"""The person's voice profile: their own takes of the wake phrase, of their commands and of them
talking freely, and the sound of their room, kept on the device only, in a SQLite file of its
own beside the journal (mode 0600). Never in the journal, never in a fleet batch: the journal
records only that takes were added or removed.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from appliance.voice.audio.rate import PIPELINE_RATE
from appliance.voice.errors import BadTake

if TYPE_CHECKING:
    from appliance.voice.hearing.templates import TemplateSet

# The audio work (take_audio.py, templates.py: numpy, openWakeWord) is imported where it is used:
# the caregiver's web page reads this file's takes, and its service's system-call filter kills a
# process that loads numpy (OpenBLAS calls mbind).

KEPT_PER_PHRASE = 10
"""Takes kept of one phrase: the oldest learned one goes when another is learned."""
KEPT_SPEECH_S = 60.0
"""Free speech kept, in seconds: the oldest takes go beyond it (talk comes in many short takes)."""
PAUSE_FLOOR_S = 0.35
"""The shortest wait for the end of speech (the pipeline's default)."""
PAUSE_CEILING_S = 1.6
"""The longest wait for the end of speech a profile may ask for."""
PAUSE_MARGIN = 1.25
"""How many times the person's longest pause between words to wait, before PAUSE_EXTRA_S."""
PAUSE_EXTRA_S = 0.1
"""Added to the wait: the VAD hears the end of a word a little later than its level drops."""


class TakeKind(StrEnum):
    WAKE = "wake"
    COMMAND = "command"
    SPEECH = "speech"  # the person talking freely: what their wake phrase is not
    ROOM = "room"  # the room's own sound, no one speaking: the noise every take is also kept in


HEARD_IN_ROOM = (TakeKind.WAKE, TakeKind.COMMAND)
"""The takes also kept in the room's sound: free speech keeps made-up noise only, so that what
it tells the wake verifier in a noisy room stays as it was measured."""
FREE_SPEECH = "talking freely"
"""The phrase the person's free speech is kept under."""
THE_ROOM = "the room"
"""The phrase the room's own sound is kept under (one recording: a new one replaces it)."""


def longest_take_s(kind: TakeKind) -> float:
    """How long one take of this kind may be."""
    from appliance.voice.hearing.take_audio import LONGEST_ROOM_S, LONGEST_S, LONGEST_SPEECH_S

    return {TakeKind.SPEECH: LONGEST_SPEECH_S, TakeKind.ROOM: LONGEST_ROOM_S}.get(kind, LONGEST_S)


class TakeSource(StrEnum):
    ENROLLED = "enrolled"  # said when asked to, at enrolment or with `appliance enroll`
    LEARNED = "learned"  # heard in use and confirmed by the person's yes


@dataclass(frozen=True)
class Take:
    """One recording of the person saying `phrase`; `pending` until confirmed or approved."""

    id: int
    phrase: str
    kind: TakeKind
    source: TakeSource
    pending: bool
    created: float  # seconds since the epoch
    seconds: float
    longest_pause_s: float


_SCHEMA = """
CREATE TABLE IF NOT EXISTS takes (
    id INTEGER PRIMARY KEY,
    phrase TEXT NOT NULL,
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    pending INTEGER NOT NULL,
    created REAL NOT NULL,
    seconds REAL NOT NULL,
    longest_pause_s REAL NOT NULL,
    audio BLOB NOT NULL,
    clean BLOB NOT NULL,
    noisy BLOB NOT NULL,
    frames INTEGER NOT NULL,
    noisy_frames INTEGER NOT NULL,
    in_room BLOB NOT NULL DEFAULT X'',
    in_room_frames INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_COLUMNS = "id, phrase, kind, source, pending, created, seconds, longest_pause_s"


class VoiceProfile:
    """The takes in one profile file; every change bumps a generation other processes see."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cached: tuple[int, TemplateSet] | None = None

    @contextmanager
    def _db(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        if not self.path.exists():
            if not write:
                raise FileNotFoundError(self.path)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        db = sqlite3.connect(self.path, timeout=10)
        try:
            if write:
                db.executescript(_SCHEMA)
                _add_room_columns(db)
            with db:
                yield db
        finally:
            db.close()

    def exists(self) -> bool:
        return self.path.is_file()

    def generation(self) -> int:
        """Changes with every write to the profile (0: no profile)."""
        if not self.exists():
            return 0
        try:
            with self._db() as db:
                row = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        except sqlite3.Error:
            return 0
        return int(row[0]) if row else 0

    def _bump(self, db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE "
                   "SET value = CAST(value AS INTEGER) + 1")

    def add(self, phrase: str, kind: TakeKind, pcm: bytes,
            source: TakeSource = TakeSource.ENROLLED, pending: bool = False) -> Take:
        """Learn one take (BadTake, and nothing added, when it cannot be learned from); the
        room's sound replaces the one before, and every take gets a copy in it."""
        if kind == TakeKind.ROOM:
            return self._add_room(pcm)
        phrase = " ".join(phrase.casefold().split())
        if not phrase:
            raise BadTake("the phrase is empty")
        from appliance.voice.hearing.take_audio import learnable

        take = learnable(pcm, longest_take_s(kind), self.room() if kind in HEARD_IN_ROOM else None)
        row = (phrase, kind.value, source.value, int(pending), time.time(), take.seconds,
               take.longest_pause_s, take.said, take.clean, take.noisy, take.frames,
               take.noisy_frames, take.in_room, take.in_room_frames)
        with self._db(write=True) as db:
            take_id = _insert(db, row)
            if kind == TakeKind.SPEECH:
                self._keep_newest_talk(db)
            else:
                self._keep_newest(db, phrase)
            self._bump(db)
        return Take(take_id, phrase, kind, source, pending, row[4], row[5], row[6])

    def _add_room(self, pcm: bytes) -> Take:
        from appliance.voice.hearing.take_audio import check_room

        room = check_room(pcm)
        row = (THE_ROOM, TakeKind.ROOM.value, TakeSource.ENROLLED.value, 0, time.time(),
               len(room) / 2 / PIPELINE_RATE, 0.0, room, b"", b"", 0, 0, b"", 0)
        with self._db(write=True) as db:
            db.execute("DELETE FROM takes WHERE kind = ?", (TakeKind.ROOM.value,))
            take_id = _insert(db, row)
            self._in_room(db, room)
            self._bump(db)
        return Take(take_id, THE_ROOM, TakeKind.ROOM, TakeSource.ENROLLED, False, row[4], row[5],
                    0.0)

    def room(self) -> bytes | None:
        """The room's own sound as recorded (None: not recorded)."""
        if not self.exists():
            return None
        with self._db() as db:
            row = db.execute("SELECT audio FROM takes WHERE kind = ?",
                             (TakeKind.ROOM.value,)).fetchone()
        return bytes(row[0]) if row else None

    def _in_room(self, db: sqlite3.Connection, room: bytes | None) -> None:
        """Every take's copy in the room's sound made again (None: the room's copies go)."""
        from appliance.voice.hearing.take_audio import blob, room_features

        if room is None:
            db.execute("UPDATE takes SET in_room = X'', in_room_frames = 0")
            return
        rows = db.execute("SELECT id, audio FROM takes WHERE kind IN (?, ?)",
                          tuple(k.value for k in HEARD_IN_ROOM)).fetchall()
        for take_id, audio in rows:
            in_room = room_features(bytes(audio), room)
            db.execute("UPDATE takes SET in_room = ?, in_room_frames = ? WHERE id = ?",
                       (blob(in_room), len(in_room), take_id))

    def _keep_newest(self, db: sqlite3.Connection, phrase: str) -> None:
        """At most KEPT_PER_PHRASE takes of a phrase: learned ones go first, oldest first."""
        ids = [r[0] for r in db.execute(
            "SELECT id FROM takes WHERE phrase = ? ORDER BY source = 'enrolled', created DESC",
            (phrase,))]
        # Sorted learned (newest first), then enrolled: drop from the learned end's oldest.
        excess = len(ids) - KEPT_PER_PHRASE
        if excess <= 0:
            return
        learned = [r[0] for r in db.execute(
            "SELECT id FROM takes WHERE phrase = ? AND source = 'learned' ORDER BY created",
            (phrase,))]
        for take_id in (learned + ids[::-1])[:excess]:
            db.execute("DELETE FROM takes WHERE id = ?", (take_id,))

    def _keep_newest_talk(self, db: sqlite3.Connection) -> None:
        """At most KEPT_SPEECH_S of free speech: the oldest takes go first."""
        kept = 0.0
        for take_id, seconds in db.execute("SELECT id, seconds FROM takes WHERE kind = ? "
                                           "ORDER BY created DESC, id DESC",
                                           (TakeKind.SPEECH.value,)).fetchall():
            kept += seconds
            if kept > KEPT_SPEECH_S:
                db.execute("DELETE FROM takes WHERE id = ?", (take_id,))

    def takes(self, phrase: str | None = None) -> list[Take]:
        if not self.exists():
            return []
        query = f"SELECT {_COLUMNS} FROM takes"
        args: tuple[str, ...] = ()
        if phrase is not None:
            query, args = query + " WHERE phrase = ?", (" ".join(phrase.casefold().split()),)
        with self._db() as db:
            return [Take(r[0], r[1], TakeKind(r[2]), TakeSource(r[3]), bool(r[4]), r[5], r[6],
                         r[7]) for r in db.execute(query + " ORDER BY phrase, created", args)]

    def audio(self, take_id: int) -> bytes:
        """The take's PCM16 at 16 kHz (for the caregiver to play); empty when it is gone."""
        if not self.exists():
            return b""
        with self._db() as db:
            row = db.execute("SELECT audio FROM takes WHERE id = ?", (take_id,)).fetchone()
        return bytes(row[0]) if row else b""

    def forget(self, phrase: str | None = None) -> int:
        """Every take of `phrase` (all of them when None) deleted; how many there were."""
        if not self.exists():
            return 0
        with self._db(write=True) as db:
            if phrase is None:
                count = db.execute("DELETE FROM takes").rowcount
            else:
                count = self._delete(db, "phrase = ?", " ".join(phrase.casefold().split()))
            self._bump(db)
        if phrase is None:
            with self._db(write=True) as db:
                db.execute("VACUUM")  # the deleted audio must not linger in free pages
        return int(count)

    def delete_take(self, take_id: int) -> bool:
        if not self.exists():
            return False
        with self._db(write=True) as db:
            gone = self._delete(db, "id = ?", take_id) > 0
            self._bump(db)
        return gone

    def _delete(self, db: sqlite3.Connection, where: str, value: str | int) -> int:
        """The takes `where` says deleted; when the room's sound was one of them, the others'
        copies in it go too."""
        room = db.execute(f"SELECT COUNT(*) FROM takes WHERE kind = ? AND {where}",
                          (TakeKind.ROOM.value, value)).fetchone()[0]
        count = int(db.execute(f"DELETE FROM takes WHERE {where}", (value,)).rowcount)
        if room:
            self._in_room(db, None)
        return count

    def approve(self, take_id: int) -> bool:
        """A learned take confirmed by a caregiver: used from now on."""
        if not self.exists():
            return False
        with self._db(write=True) as db:
            done = db.execute("UPDATE takes SET pending = 0 WHERE id = ? AND pending = 1",
                              (take_id,)).rowcount > 0
            self._bump(db)
        return done

    def learn(self, phrase: str, pcm: bytes, kind: TakeKind = TakeKind.COMMAND) -> Take:
        """A take heard in use and confirmed by a yes: pending, unless a pending take of the
        same phrase was confirmed before (a second confirmation promotes both)."""
        earlier = [t for t in self.takes(phrase) if t.pending]
        take = self.add(phrase, kind, pcm, TakeSource.LEARNED, pending=not earlier)
        if earlier:
            for t in earlier:
                self.approve(t.id)
        return take

    def prune_learned(self, older_than_s: float) -> int:
        """Learned takes older than `older_than_s` deleted (the transcript retention)."""
        if not self.exists():
            return 0
        with self._db(write=True) as db:
            count = db.execute("DELETE FROM takes WHERE source = 'learned' AND created < ?",
                               (time.time() - older_than_s,)).rowcount
            if count:
                self._bump(db)
        return int(count)

    def template_set(self) -> TemplateSet:
        """The takes in use (not pending) as templates, read again only after a change."""
        from appliance.voice.hearing.take_audio import embeddings
        from appliance.voice.hearing.templates import Template, TemplateSet

        generation = self.generation()
        if self._cached is not None and self._cached[0] == generation:
            return self._cached[1]
        kept: dict[TakeKind, list[Template]] = {kind: [] for kind in TakeKind}
        if self.exists():
            with self._db() as db:
                in_room = ("in_room, in_room_frames" if _has_room_columns(db)
                           else "X'', 0")  # a profile from before rooms, not written since
                rows = db.execute(f"SELECT id, phrase, kind, source, clean, frames, noisy, "
                                  f"noisy_frames, {in_room} FROM takes "
                                  f"WHERE pending = 0 AND kind != ?",
                                  (TakeKind.ROOM.value,)).fetchall()
            for (take, phrase, kind, source, clean, frames, noisy, noisy_frames, room,
                 room_frames) in rows:
                into = kept[TakeKind(kind)]
                learned = source == TakeSource.LEARNED.value
                into.append(Template(phrase, embeddings(clean, frames), take=take,
                                     learned=learned))
                into.append(Template(phrase, embeddings(noisy, noisy_frames), noisy=True,
                                     take=take, learned=learned))
                if room_frames:
                    into.append(Template(phrase, embeddings(room, room_frames), noisy=True,
                                         take=take, learned=learned))
        templates = TemplateSet.of(kept[TakeKind.COMMAND], kept[TakeKind.WAKE],
                                   kept[TakeKind.SPEECH])
        self._cached = (generation, templates)
        return templates

    def wake_takes(self) -> list[Take]:
        """The wake phrase's takes in use (not pending)."""
        return [t for t in self.takes() if t.kind == TakeKind.WAKE and not t.pending]

    def end_of_speech_s(self) -> float | None:
        """How long a silence ends this person's speech: their longest pause between words
        in their takes, and a margin; None with no takes."""
        pauses = [t.longest_pause_s for t in self.takes()
                  if not t.pending and t.kind in (TakeKind.WAKE, TakeKind.COMMAND)]
        # Free speech pauses to think; the room is no speech.
        if not pauses:
            return None
        return min(PAUSE_CEILING_S,
                   max(PAUSE_FLOOR_S, max(pauses) * PAUSE_MARGIN + PAUSE_EXTRA_S))


def _insert(db: sqlite3.Connection, row: tuple[object, ...]) -> int:
    """One take's row stored; its id."""
    cursor = db.execute(
        "INSERT INTO takes (phrase, kind, source, pending, created, seconds, longest_pause_s, "
        "audio, clean, noisy, frames, noisy_frames, in_room, in_room_frames) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
    return int(cursor.lastrowid or 0)


def _has_room_columns(db: sqlite3.Connection) -> bool:
    return "in_room" in {row[1] for row in db.execute("PRAGMA table_info(takes)")}


def _add_room_columns(db: sqlite3.Connection) -> None:
    """A profile made before the room's sound was kept gets its columns."""
    if not _has_room_columns(db):
        db.execute("ALTER TABLE takes ADD COLUMN in_room BLOB NOT NULL DEFAULT X''")
        db.execute("ALTER TABLE takes ADD COLUMN in_room_frames INTEGER NOT NULL DEFAULT 0")
