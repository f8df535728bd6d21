"""Why a recogniser's words may be misheard: each makes acting need a yes and is kept in the
turn's reasons (the caregiver's trace says why the appliance asked). Given by the voice layer
(appliance/voice/hearing/clarity.py, closed_whisper.py), read by the validator and the replies."""

from __future__ import annotations

from enum import StrEnum


class Doubt(StrEnum):
    BEGAN_WITH_AND = "it began with 'and', often a misheard 'un'"
    LESS_SURE = "the sentence was heard less surely than one acted on at once"
    VALUE_NOT_HEARD = "the sentence names a value Whisper did not write"
    LETTER_ALIKE = "the key named sounds like another"
    WORDS_UNSURE = "the words to write were heard less surely than ones written at once"
    """Read back in the question ("Did you mean type the lord grandma into Message?")."""
    UNDO_ALIKE = "a no with no question open, said like an undo"
    OTHER_ANSWER = "the answer sounded more like the person's own takes of the other answer"


HEARD_DOUBTFULLY = "heard doubtfully"
"""The reason's head, followed by the doubt."""


def doubt_reason(doubt: str) -> str:
    return f"{HEARD_DOUBTFULLY}: {doubt}"
