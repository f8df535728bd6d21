"""The doubts an utterance's own words raise, and the closed set's (the vocabulary:
appliance/policy/doubts.py).

Whisper tiny.en hears "uncheck urgent" as "and check Urgent" and "untick" as "and tick": the
opposite action. A command cannot begin with "and", so one that does may only act after a yes
("Did you mean tick Urgent? Say yes or no.").
"""

from __future__ import annotations

from collections.abc import Iterable

from appliance.policy.doubts import Doubt
from appliance.voice.hearing.wake import words
from appliance.voice.sink import Utterance


def letter_alike(letter: str, rivals: Iterable[str]) -> str:
    """LETTER_ALIKE with the letters it may have been ("C may have been Z or T")."""
    others = " or ".join(r.upper() for r in sorted(rivals))
    return f"{Doubt.LETTER_ALIKE}: {letter.upper()} may have been {others}"


def heard_clearly(text: str) -> bool:
    ws = words(text)
    return not (len(ws) > 1 and ws[0] == "and")


def doubt_of(utterance: Utterance) -> str:
    """Why a turn may not act on `utterance` without a yes ("": it may): its words or the
    recogniser's own doubt (the closed set's ask band) say it may be misheard."""
    return utterance.doubt if heard_clearly(utterance.text) else Doubt.BEGAN_WITH_AND
