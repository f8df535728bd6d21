"""The sentence templates and what each means beyond its words (hassil `metadata:`).

An intent's `metadata:` applies to each of its data blocks; a block's own `metadata:` overrides
it key by key. Each block's meaning is checked here once, at load, and read back from the match
result (`RecognizeResult.intent_metadata`).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml
from hassil import Intents, RecognizeResult, merge_dict
from pydantic import BaseModel, ConfigDict, Field

from appliance.desktop.resolve import MIN_SCORE
from appliance.desktop.roles import (
    PRESSABLE_ROLES,
    SELECTABLE_ROLES,
    SPOKEN_CHOICE_ROLES,
    SPOKEN_NUMBER_ROLES,
    TEXT_FIELD_ROLES,
    TOGGLE_ROLES,
)

RoleFamily = Literal["pressable", "selectable", "spoken_choice", "spoken_number", "text_field",
                     "toggle"]
ROLE_FAMILIES: dict[RoleFamily, frozenset[str]] = {
    "pressable": PRESSABLE_ROLES,
    "selectable": SELECTABLE_ROLES,
    "spoken_choice": SPOKEN_CHOICE_ROLES,
    "spoken_number": SPOKEN_NUMBER_ROLES,
    "text_field": TEXT_FIELD_ROLES,
    "toggle": TOGGLE_ROLES,
}
"""The role families of desktop/roles.py by the names the templates give them."""


class TemplateMeaning(BaseModel):
    """What a block of templates means beyond its words."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    priority: int
    """Between parses with as much literal text: the lower first (the more specific reading)."""
    prefer: tuple[RoleFamily, ...] = ()
    """Roles the named element should have."""
    require: Literal["any", "only", "best"] = "any"
    """only: nothing but `prefer`; best: `prefer`, if about as good a match as any element."""
    floor: float = Field(default=MIN_SCORE, ge=0.0, le=1.0)
    """Least score of a name guessed from the words (an exact screen name is always 1.0)."""
    exact_names_only: bool = False
    """A name must be said exactly as on screen, never guessed."""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    """Of what the template builds without naming it: a question, steps it adds itself."""
    in_use_confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    """Of opening the app that is in use already: something in it was likelier meant."""

    @property
    def roles(self) -> frozenset[str] | None:
        return family_roles(self.prefer)


@cache
def family_roles(families: tuple[RoleFamily, ...]) -> frozenset[str] | None:
    return frozenset().union(*(ROLE_FAMILIES[f] for f in families)) if families else None


@cache
def load_intents() -> Intents:
    """Every sentences/*.yaml of the installed package, merged, each block's meaning checked."""
    root = resources.files("appliance.intents.sentences")
    data: dict[str, Any] = {}
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            merge_dict(data, yaml.safe_load(entry.read_text(encoding="utf-8")))
    for intent in data["intents"].values():
        shared = intent.pop("metadata", None) or {}
        for block in intent["data"]:
            merged = {**shared, **(block.get("metadata") or {})}
            block["metadata"] = TemplateMeaning.model_validate(merged).model_dump()
    return Intents.from_dict(data)


def meaning(result: RecognizeResult) -> TemplateMeaning:
    """The meaning of the block that matched (checked at load)."""
    return TemplateMeaning.model_validate(result.intent_metadata or {})


def priority(result: RecognizeResult) -> int:
    """The block's priority, read without building its whole meaning: every parse is ranked."""
    return int((result.intent_metadata or {})["priority"])
