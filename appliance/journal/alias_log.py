"""Aliases folded from their `AliasTaught` and `AliasForgotten` events, only those the keyed
chain vouches for (the journal passes no others): a name that decides which element is acted
on must be one a person really gave."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from appliance.desktop.resolve import name_key


class Alias(BaseModel):
    """One alias: the person's `name` for the element called `element` in `app`; who taught it
    (`by`), in which turn (`turn`, "" from the caregiver page) and when (`at`)."""

    model_config = ConfigDict(frozen=True)

    id: str
    app: str
    element: str
    role: str = ""
    name: str
    by: str = ""
    turn: str = ""
    at: datetime | None = None


def fold_aliases(events: Iterable[tuple[int, Any]]) -> list[Alias]:
    """The aliases taught and not forgotten, oldest first. A name taught again in the same
    application replaces the one it had there."""
    aliases: dict[str, Alias] = {}
    for _nid, event in events:
        kind = type(event).__name__
        if kind == "AliasTaught":
            try:
                alias = Alias(id=event.alias, app=event.app, element=event.element,
                              role=event.role, name=event.name, by=event.by, turn=event.turn,
                              at=event.timestamp)
            except (ValidationError, TypeError, AttributeError):
                continue  # vouched for but not an alias this version reads: left out
            same = (alias.app, name_key(alias.name))
            aliases = {k: a for k, a in aliases.items() if (a.app, name_key(a.name)) != same}
            aliases[alias.id] = alias
        elif kind == "AliasForgotten":
            aliases.pop(str(getattr(event, "alias", "")), None)
    return list(aliases.values())
