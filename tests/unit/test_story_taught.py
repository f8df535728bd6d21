"""The story's sentences for what a person taught (spots, names for elements, takes of their
voice) and for the page's newer web events: the caregiver page, the report, the CSV and the
central's timeline all read them from appliance/audit/story.py."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest

from appliance.audit.story import happening_words, told

BASE = {"seq": 1, "time": "2026-12-01T10:00:00+00:00", "turn": "", "detail": ""}
SPOT = {"id": "t1", "app": "TkForm", "window": "Clinic form", "name": "Save",
        "offset": [1, 2, 3, 4], "text": "", "fingerprint": "0"}


def _row(event: str, data: dict[str, Any], aggregate: str = "Device") -> dict[str, Any]:
    return {**BASE, "aggregate": aggregate, "event": event, "device": "", "data": data}


def _takes_added(takes: int, source: str, by: str, phrase: str = "click send",
                 kind: str = "command") -> dict[str, Any]:
    """A `VoiceTakesAdded` event's data."""
    return {"phrase": phrase, "kind": kind, "takes": takes, "source": source, "by": by}


@pytest.mark.parametrize(("event", "data", "said"), [
    ("TargetTaught", {"target": SPOT, "by": "voice turn 1a2b3c4d5e6f"},
     "The person taught the spot \u201cSave\u201d in TkForm (Clinic form) (in turn 1a2b3c4d)"),
    ("TargetUsed", {"target": "t9", "hit": True},
     "A taught spot was clicked, and the screen changed"),
    ("TargetUsed", {"target": "t9", "hit": False},
     "A taught spot was clicked, but nothing changed"),
    ("TargetForgotten", {"target": "t9", "by": "Carol"}, "Carol removed a taught spot"),
    ("VoiceTakesAdded", _takes_added(3, "enrolled", "Carol"),
     "Carol added 3 takes of \u201cclick send\u201d to the person's voice"),
    ("VoiceTakesAdded", _takes_added(1, "enrolled", "the person", "hey juniper", "wake"),
     "The person added 1 take of the wake phrase \u201chey juniper\u201d to their voice"),
    ("VoiceTakesAdded", _takes_added(1, "learned", "the person's yes"),
     "Learned how the person says \u201cclick send\u201d from their yes"),
    ("VoiceTakesAdded", _takes_added(1, "approved", "Carol"),
     "Carol approved a take of \u201cclick send\u201d learned from the person's yes"),
    ("VoiceTakesRemoved", {"phrase": "click send", "takes": 2, "by": "Carol"},
     "Carol removed 2 takes of \u201cclick send\u201d from the person's voice"),
    ("VoiceTakesRemoved", {"phrase": "", "takes": 12, "by": "Carol"},
     "Carol removed every recording of the person's voice (12 takes)"),
    ("AliasTaught", {"alias": "a1", "app": "Messages", "element": "Doctor Patel", "role": "",
                     "name": "my doctor", "by": "voice", "turn": "9f8e7d6c5b4a"},
     "The person called Doctor Patel in Messages \u201cmy doctor\u201d (in turn 9f8e7d6c)"),
    ("AliasForgotten", {"alias": "a1", "app": "Messages", "element": "Doctor Patel",
                        "name": "my doctor", "by": "Carol", "turn": ""},
     "Carol took back the name \u201cmy doctor\u201d (it meant Doctor Patel in Messages)"),
    ("WebAccess", {"what": "withdrew_an_invitation", "caregiver": "Carol", "address": "10.0.0.2"},
     "Carol withdrew an invitation before it was used (from 10.0.0.2)"),
    ("WebAccess", {"what": "ended_one_of_their_sessions", "caregiver": "Carol",
                   "address": "10.0.0.2"},
     "Carol logged out one of their devices (from 10.0.0.2)"),
])
def test_each_newer_event_is_a_plain_sentence(event: str, data: dict[str, Any],
                                              said: str) -> None:
    assert happening_words(_row(event, data)) == said
    [happening] = told([_row(event, data)], ZoneInfo("UTC")).happenings
    assert happening.text == said


def test_a_taught_spot_is_named_by_what_taught_it_earlier() -> None:
    rows = [_row("TargetTaught", {"target": SPOT, "by": "voice turn 1a2b3c4d"}),
            {**_row("TargetUsed", {"target": "t1", "hit": True}), "seq": 2},
            {**_row("TargetForgotten", {"target": "t1", "by": "Carol"}), "seq": 3}]
    told_ = [h.text for h in told(rows, ZoneInfo("UTC")).happenings]
    assert told_[1:] == ["The taught spot \u201cSave\u201d was clicked, and the screen changed",
                         "Carol removed the taught spot \u201cSave\u201d"]
