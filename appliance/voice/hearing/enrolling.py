"""Enrolment at the kiosk ("learn my voice"): the appliance says each phrase, the person says it
back, and each take is checked and kept in their voice profile; last, the person talks freely
and then the room is listened to with no one speaking. Said again later, it goes on where it
stopped: phrases that already have their takes are skipped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from appliance.voice.errors import BadTake
from appliance.voice.hearing.closed_set import closed_set
from appliance.voice.hearing.profile import FREE_SPEECH, THE_ROOM, TakeKind, VoiceProfile

LONGEST_PHRASE_WORDS = 8
"""A phrase longer than this is not one command."""
LONGEST_NAME_WORDS = 3
"""The longest name a phrase may give a control ("tick the urgent box": "the urgent box")."""
WAKE_TAKES = 5
"""Takes of the wake phrase asked for."""
COMMAND_TAKES = 3
"""Takes of each command asked for."""
TRIES = 3
"""Takes that cannot be learned from before a phrase is skipped."""
ENROLLED_COMMANDS = 15
"""Commands asked for at one enrolment: with the wake phrase, about five minutes."""
STARTING_COMMANDS = (
    "yes", "no", "stop", "cancel", "undo that", "show numbers", "hide numbers", "scroll up",
    "scroll down", "read it", "what is on the screen", "click send", "click one", "click two",
    "click three",
)
"""What a person is asked to say when their journal has no commands of their own yet."""
FREE_SPEECH_S = 30.0
"""Seconds of the person talking freely asked for, last: what their wake phrase is not."""
TALK_FREELY = ("Now talk to me for about half a minute, about anything you like: your day, the "
               "weather, someone you love. I will tell you when that is enough.")
ROOM_S = 30.0
"""Seconds of the room's own sound listened to, at the very end."""
LISTEN_TO_ROOM = ("Last, please stay quiet for half a minute while I listen to the room, so that "
                  "I know you when it is noisy. I will tell you when I have heard enough.")
NO_ROOM = "I could not hear the room, so let's leave that for another time."
BEGIN = ("Let's learn your voice. I will say a phrase; say it back to me the way you usually "
         "would, after I finish. This takes about five minutes.")
AGAIN = "Let's try that once more."
SKIPPED = "Let's skip that one."


def sayable(phrase: str) -> bool:
    """Whether some screen's closed set could hold `phrase`: a command of the grammar whose
    names are taken from its own words (a longer phrase is never one name said bare)."""
    said = phrase.casefold().split()
    if not said or len(said) > LONGEST_PHRASE_WORDS:
        return False
    spans = {(i, j) for i in range(len(said))
             for j in range(i + 1, min(len(said), i + LONGEST_NAME_WORDS) + 1)}
    if len(said) > 1:
        spans.discard((0, len(said)))
    names = tuple(sorted({" ".join(said[i:j]) for i, j in spans}))
    return " ".join(said) in closed_set(names, names, names)


@dataclass(frozen=True)
class Phrase:
    """A phrase to take: `takes` still wanted, or for free speech `seconds` of it."""

    said: str
    kind: TakeKind
    takes: int
    seconds: float = 0.0


@dataclass
class Enrolling:
    """One enrolment: the phrases still to take, and the tries on the current one."""

    profile: VoiceProfile
    phrases: list[Phrase]
    tries: int = 0
    learned: dict[str, int] = field(default_factory=dict)  # takes kept this time, by phrase

    @classmethod
    def plan(cls, profile: VoiceProfile, wake_phrase: str,
             commands: Sequence[str] = STARTING_COMMANDS) -> Enrolling:
        """What still needs takes: the wake phrase, then the commands, each as far as the
        profile already has them."""
        wanted = [Phrase(wake_phrase, TakeKind.WAKE, WAKE_TAKES)] + [
            Phrase(c, TakeKind.COMMAND, COMMAND_TAKES) for c in dict.fromkeys(commands)]
        have: dict[str, int] = {}
        talked = 0.0
        for take in profile.takes():
            if not take.pending:
                have[take.phrase] = have.get(take.phrase, 0) + 1
            if take.kind == TakeKind.SPEECH:
                talked += take.seconds
        left = [Phrase(p.said, p.kind, p.takes - have.get(p.said, 0)) for p in wanted
                if have.get(p.said, 0) < p.takes]
        if talked < FREE_SPEECH_S:
            left.append(Phrase(FREE_SPEECH, TakeKind.SPEECH, 1, FREE_SPEECH_S - talked))
        if THE_ROOM not in have:
            left.append(Phrase(THE_ROOM, TakeKind.ROOM, 1, ROOM_S))
        return cls(profile, left)

    @property
    def done(self) -> bool:
        return not self.phrases

    @property
    def listening_to_room(self) -> bool:
        """Whether the room's own sound is wanted now, rather than a phrase."""
        return bool(self.phrases) and self.phrases[0].kind == TakeKind.ROOM

    def opening(self) -> str:
        if self.done:
            return "I already know your voice for every phrase I would ask. Thank you."
        return f"{BEGIN} {self.prompt()}"

    def prompt(self) -> str:
        if not self.phrases:
            return self.closing()
        if self.phrases[0].kind == TakeKind.SPEECH:
            return TALK_FREELY
        if self.phrases[0].kind == TakeKind.ROOM:
            return LISTEN_TO_ROOM
        return f"Say: {self.phrases[0].said}."

    def closing(self) -> str:
        count = len(self.learned)
        return (f"Thank you. I learned {count} phrase{'' if count == 1 else 's'} in your voice. "
                "Say 'learn my voice' again any time to go on.")

    def take(self, pcm: bytes) -> str:
        """What to say after this take: the phrase again, the next one, or the closing words;
        nothing while the person talks freely and has more to say."""
        current = self.phrases[0]
        if current.kind == TakeKind.SPEECH:
            return self._talked(current, pcm)
        if current.kind == TakeKind.ROOM:
            return self._heard_room(current, pcm)
        try:
            self.profile.add(current.said, current.kind, pcm)
        except BadTake:
            self.tries += 1
            if self.tries < TRIES:
                return f"{AGAIN} {self.prompt()}"
            return self.skip()
        self.tries = 0
        self.learned[current.said] = self.learned.get(current.said, 0) + 1
        if current.takes > 1:
            self.phrases[0] = Phrase(current.said, current.kind, current.takes - 1)
            return self.prompt()
        return self._next("")

    def _talked(self, current: Phrase, pcm: bytes) -> str:
        try:
            kept = self.profile.add(current.said, current.kind, pcm)
        except BadTake:  # a cough, a breath: the person talks on
            return ""
        self.learned[current.said] = self.learned.get(current.said, 0) + 1
        left = current.seconds - kept.seconds
        if left > 0:
            self.phrases[0] = Phrase(current.said, current.kind, 1, left)
            return ""
        return self._next("")

    def _heard_room(self, current: Phrase, pcm: bytes) -> str:
        try:
            self.profile.add(current.said, current.kind, pcm)
        except BadTake:  # a microphone that gives nothing: the takes keep their made-up noise
            return self._next(NO_ROOM)
        self.learned[current.said] = 1
        return self._next("")

    def skip(self) -> str:
        """The phrase asked for is left for another time; the next one is asked."""
        return self._next(SKIPPED)

    def _next(self, lead: str) -> str:
        self.phrases.pop(0)
        self.tries = 0
        return " ".join(filter(None, [lead, self.prompt()]))

    def stop(self) -> str:
        self.phrases.clear()
        return self.closing()
