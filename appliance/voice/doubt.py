"""Transcripts whose meaning a small recogniser may have flipped.

Whisper tiny.en hears "uncheck urgent" as "and check Urgent" and "untick" as "and tick": the
opposite action. A command cannot begin with "and", so one that does may only act after a yes
("Did you mean tick Urgent? Say yes or no.").
"""

from __future__ import annotations

from appliance.voice.sink import Utterance
from appliance.voice.wake import words


def heard_clearly(text: str) -> bool:
    ws = words(text)
    return not (len(ws) > 1 and ws[0] == "and")


def acts_unasked(utterance: Utterance) -> bool:
    """Whether a turn may act on `utterance` without a yes: neither its words nor the
    recogniser's own doubt (the closed set's ask band) say it may be misheard."""
    return heard_clearly(utterance.text) and not utterance.doubtful
