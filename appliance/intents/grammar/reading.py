"""One parse of the words on one screen, as the intent builders read it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from hassil import RecognizeResult
from hassil.models import MatchEntity

from appliance.desktop.model import Snapshot
from appliance.intents.grammar.targets import Require, Target, Unresolved, resolve
from appliance.intents.grammar.templates import TemplateMeaning, meaning
from appliance.intents.grammar.wording import EDGE_PUNCT


@dataclass(frozen=True)
class Reading:
    """A hassil match, the words it matched, the screen, and whether the names it holds may be
    of a screen still to come (a step after one that changes the screen)."""

    result: RecognizeResult
    text: str
    snapshot: Snapshot
    not_on_screen_yet: bool = False

    @property
    def slots(self) -> dict[str, MatchEntity]:
        return self.result.entities

    @cached_property
    def meaning(self) -> TemplateMeaning:
        return meaning(self.result)

    def spoken(self, slot: str) -> str:
        """A slot's name as said, with the role word said after it ("send button")."""
        entity = self.slots.get(slot)
        if entity is None:
            return ""
        role = self.slots.get("role")
        base = str(entity.value) if not entity.is_wildcard else entity.text
        return f"{base} {role.text}".strip() if role is not None else base.strip()

    def said(self, slot: str) -> str:
        """A wildcard's words as said (with the speaker's punctuation), from the input text."""
        entity = self.slots.get(slot)
        if entity is None:
            return ""
        if entity.text_span is not None:
            start, end = entity.text_span
            return EDGE_PUNCT.sub("", self.text[start:end]) or entity.text.strip()
        return entity.text.strip()

    @property
    def floor(self) -> float:
        """A name from the exact list means that very element; a guessed one the template's
        floor."""
        target = self.slots.get("target")
        return 1.0 if target is not None and not target.is_wildcard else self.meaning.floor

    def resolve(
        self,
        words: str,
        prefer: frozenset[str] | None = None,
        require: Require = "any",
        floor: float | None = None,
    ) -> Target:
        return resolve(words, self.snapshot, prefer, require,
                       self.floor if floor is None else floor, self.not_on_screen_yet)

    def target(self) -> Target:
        """The element the target slot names, with the roles the template prefers."""
        m = self.meaning
        if m.exact_names_only and self.slots["target"].is_wildcard:
            raise Unresolved("a name must be said exactly")
        return self.resolve(self.spoken("target"), m.roles, m.require)
