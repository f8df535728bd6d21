"""The element a parse's words name on the screen, or the names to ask between."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from appliance.desktop.model import Node, Snapshot
from appliance.desktop.resolve import (
    MIN_SCORE,
    SUBSET_SCORE,
    Match,
    find_targets,
    name_key,
    spoken_forms,
)

TIE = 0.02
"""Two different names scoring within this of each other: ask which one."""
ASK_FROM = 0.6
"""Near-tied names are offered as a question only when they are plausible at all."""

Require = Literal["any", "only", "best"]


class Unresolved(Exception):
    """A parse whose names don't fit the screen; the next parse is tried."""


class Ambiguous(Exception):
    def __init__(self, options: tuple[str, ...], score: float) -> None:
        super().__init__(options)
        self.options, self.score = options, score


@dataclass(frozen=True)
class Target:
    node: Node
    score: float


def resolve(
    words: str,
    snapshot: Snapshot,
    prefer: frozenset[str] | None = None,
    require: Require = "any",
    floor: float = MIN_SCORE,
    not_on_screen_yet: bool = False,
) -> Target:
    """The node the words name, preferring roles in `prefer`.

    require="only": nothing but those roles ("type ... into" needs a text field).
    require="best": those roles, and only if one is about as good a match as any element:
    "select the send button" must not become the one check box that happens to score 0.4.
    not_on_screen_yet: a later step of a sequence, whose names an earlier step may bring up.
    """
    if require == "only" and prefer is not None:
        matches = [m for m in find_targets(words, snapshot, roles=prefer) if m.score >= floor]
        if not matches and floor <= SUBSET_SCORE:
            # An exact name of another role hides partial names ("the reply" is the Reply
            # button exactly, but "type ... in the reply" means the Reply text field).
            matches = containing(words, snapshot, prefer)
    else:
        matches = [m for m in find_targets(words, snapshot) if m.score >= floor]
    if prefer is not None and require != "only":
        preferred = [m for m in find_targets(words, snapshot, roles=prefer) if m.score >= floor]
        if preferred and (not matches or preferred[0].score >= matches[0].score - TIE):
            matches = preferred
        elif require == "best":
            matches = []
    if not_on_screen_yet and (not matches or matches[0].score < 1.0):
        # Keep the words as said; the validator checks them against the screen when the step
        # runs.
        _forms, hint = spoken_forms(words)
        roles = hint or prefer or frozenset({"push button"})
        placeholder = Node(id="", role=sorted(roles)[0], name=words, app="", window="")
        return Target(placeholder, 1.0)
    if not matches:
        raise Unresolved(words)
    best = matches[0]
    if best.score < 1.0:
        rivals = [m for m in matches[1:] if m.node.name != best.node.name]
        if rivals and best.score - rivals[0].score < TIE:
            if best.score < ASK_FROM:
                raise Unresolved(words)  # two poor guesses are no guess at all
            options = tuple(dict.fromkeys(
                m.node.name for m in matches if best.score - m.score < TIE
            ))
            raise Ambiguous(options, best.score)
    return Target(best.node, best.score)


def containing(words: str, snapshot: Snapshot, roles: frozenset[str]) -> list[Match]:
    """Nodes of these roles whose name holds every spoken word, scored as a partial name."""
    forms, _hint = spoken_forms(words)
    found: list[Match] = []
    for form in forms:
        said = set(form.split())
        found = [
            Match(node=n, score=SUBSET_SCORE) for n in snapshot.in_active_window()
            if n.role in roles and n.name and said <= set(name_key(n.name).split())
        ]
        if found:
            break
    return found


def any_of(
    alternatives: str, snapshot: Snapshot, floor: float, not_on_screen_yet: bool = False
) -> Target:
    """The best-named element for any of the '|'-separated words (a question's subject)."""
    best: Target | None = None
    for alt in alternatives.split("|"):
        try:
            t = resolve(alt, snapshot, floor=floor, not_on_screen_yet=not_on_screen_yet)
        except Unresolved:
            continue
        if best is None or t.score > best.score:
            best = t
    if best is None:
        raise Unresolved(alternatives)
    return best
