"""Sentences for what a person taught the appliance: taught spots, names given to elements, and
takes of their voice. story.py tells them on the caregiver page, the report and the CSV (and the
central's timeline); timeline.py in `appliance audit`'s table. Each sentence is read from the
event's own fields, so it reads the same wherever the event is shown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TAUGHT = frozenset({"TargetTaught", "TargetUsed", "TargetForgotten", "AliasTaught",
                    "AliasForgotten", "VoiceTakesAdded", "VoiceTakesRemoved"})
"""The events told here."""

_PERSON = {"voice": "The person", "switch": "The person, with the switch,",
           "text": "Someone typing at the kiosk", "the person": "The person"}
"""How a teaching is said by how it came (a turn's trigger), else by whom it names."""


def _quoted(text: Any) -> str:
    return f"\u201c{text}\u201d"


def _who(by: str) -> str:
    """Who did it: the person (by voice or switch), someone typing, or the caregiver named."""
    by = by.strip()
    return _PERSON.get(by.casefold(), by[:1].upper() + by[1:] if by else "Someone")


def _by_and_turn(by: str, turn: str = "") -> tuple[str, str]:
    """`by` as a taught target records it ("voice turn 1a2b..."), or as given, and the turn."""
    how, _, rest = by.partition(" turn ")
    return (how, rest or turn) if rest else (by, turn)


def _in_turn(turn: str) -> str:
    return f" (in turn {turn[:8]})" if turn else ""


def _takes(count: Any) -> str:
    return f"{count} take{'' if count == 1 else 's'}"


def taught_words(event: str, data: Mapping[str, Any],
                 spots: Mapping[str, str] | None = None) -> str:
    """One event of `TAUGHT` in a sentence; `spots`: taught spots' names by id, from earlier
    events (a use or a removal names only its id). "" for any other event."""
    spots = spots or {}
    match event:
        case "AliasTaught":
            how, turn = _by_and_turn(str(data.get("by", "")), str(data.get("turn", "")))
            return (f"{_who(how)} called {data.get('element', '')} in {data.get('app', '')} "
                    f"{_quoted(data.get('name', ''))}{_in_turn(turn)}")
        case "AliasForgotten":
            how, turn = _by_and_turn(str(data.get("by", "")), str(data.get("turn", "")))
            return (f"{_who(how)} took back the name {_quoted(data.get('name', ''))} (it meant "
                    f"{data.get('element', '')} in {data.get('app', '')}){_in_turn(turn)}")
        case "TargetTaught":
            given = data.get("target")
            target: Mapping[str, Any] = given if isinstance(given, dict) else {}
            how, turn = _by_and_turn(str(data.get("by", "")))
            window = str(target.get("window", ""))
            where = f"{target.get('app', '')}" + (f" ({window})" if window else "")
            return (f"{_who(how)} taught the spot {_quoted(target.get('name', ''))} in "
                    f"{where}{_in_turn(turn)}")
        case "TargetUsed":
            name = spots.get(str(data.get("target", "")))
            spot = f"The taught spot {_quoted(name)}" if name else "A taught spot"
            if data.get("hit"):
                return f"{spot} was clicked, and the screen changed"
            return f"{spot} was clicked, but nothing changed"
        case "TargetForgotten":
            name = spots.get(str(data.get("target", "")))
            how, turn = _by_and_turn(str(data.get("by", "")))
            spot = f"the taught spot {_quoted(name)}" if name else "a taught spot"
            return f"{_who(how)} removed {spot}{_in_turn(turn)}"
        case "VoiceTakesAdded":
            return _takes_added(data)
        case "VoiceTakesRemoved":
            phrase, count = str(data.get("phrase", "")), data.get("takes", 0)
            who = _who(str(data.get("by", "")))
            if not phrase:
                return f"{who} removed every recording of the person's voice ({_takes(count)})"
            return f"{who} removed {_takes(count)} of {_quoted(phrase)} from the person's voice"
    return ""


def _takes_added(data: Mapping[str, Any]) -> str:
    phrase, count = str(data.get("phrase", "")), data.get("takes", 0)
    what = (f"the wake phrase {_quoted(phrase)}" if data.get("kind") == "wake"
            else _quoted(phrase))
    by, source = str(data.get("by", "")), str(data.get("source", ""))
    if source == "learned":
        return f"Learned how the person says {what} from their yes"
    if source == "approved":
        return f"{_who(by)} approved a take of {what} learned from the person's yes"
    who = _who(by)
    whose = "their" if who == _PERSON["the person"] else "the person's"
    return f"{who} added {_takes(count)} of {what} to {whose} voice"
