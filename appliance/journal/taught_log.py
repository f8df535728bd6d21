"""Taught targets folded from their `TargetTaught`, `TargetUsed` and `TargetForgotten` events,
only those the keyed chain vouches for (the journal passes no others): a spot that decides a
click must be one a person really taught."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from appliance.desktop.seeing.taught import TaughtTarget


def fold_taught(events: Iterable[tuple[int, Any]]) -> list[TaughtTarget]:
    """The targets taught and not forgotten, oldest first, with their hits and misses."""
    targets: dict[str, TaughtTarget] = {}
    for _nid, event in events:
        kind = type(event).__name__
        if kind == "TargetTaught":
            try:
                target = TaughtTarget.model_validate({**event.target, "by": event.by})
            except (ValidationError, TypeError):
                continue  # vouched for but not a target this version reads: left out
            targets[target.id] = target
        elif kind == "TargetUsed" and event.target in targets:
            old = targets[event.target]
            update = ({"hits": old.hits + 1, "misses_since_hit": 0} if event.hit
                      else {"misses_since_hit": old.misses_since_hit + 1})
            targets[event.target] = old.model_copy(update=update)
        elif kind == "TargetForgotten":
            targets.pop(event.target, None)
    return list(targets.values())
