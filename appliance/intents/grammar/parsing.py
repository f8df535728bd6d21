"""One command's best parse: hassil's matches ranked, each built against the screen."""

from __future__ import annotations

from dataclasses import dataclass

from hassil import Intents, RecognizeResult, recognize_all
from hassil.intents import SlotList

from appliance.desktop.model import Snapshot
from appliance.intents.button_verbs import button_for
from appliance.intents.grammar.builders import build
from appliance.intents.grammar.reading import Reading
from appliance.intents.grammar.screen_lists import WILDCARDS, ScreenLists
from appliance.intents.grammar.targets import ASK_FROM, Ambiguous, Unresolved
from appliance.intents.grammar.templates import priority
from appliance.intents.model import Activate, Clarify, Intent


@dataclass(frozen=True)
class Parsed:
    intent: Intent
    exact: bool  # no fuzzy name and no free text: nothing a split could read better
    literal: int  # literal characters the template matched


def rank(result: RecognizeResult) -> tuple[int, int, int, int]:
    """Most literal text first (unlike hassil, which puts fewest wildcards first): "type hi into
    the message box" is tried as text-into-field before as dictation, and a field name that
    doesn't resolve falls through to the plain reading."""
    wildcards = [e for e in result.entities_list if e.is_wildcard]
    return (
        -result.text_chunks_matched,
        len(wildcards),
        sum(len(e.text or "") for e in wildcards),
        priority(result),
    )


def best(
    intents: Intents,
    text: str,
    snapshot: Snapshot,
    lists: dict[str, SlotList],
    not_on_screen_yet: bool,
) -> Parsed | None:
    """The best-built parse of one command: most literal text first; among parses with as
    much literal text, the one whose names fit the screen best."""
    results = sorted(recognize_all(text, intents, slot_lists=lists), key=rank)
    chosen: Parsed | None = None
    for result in results:
        if chosen is not None and result.text_chunks_matched < chosen.literal:
            break
        try:
            intent, exact = build(Reading(result, text, snapshot, not_on_screen_yet))
        except Unresolved:
            continue
        except Ambiguous as amb:
            names = " or ".join(amb.options)
            intent = Clarify(
                question=f"Did you mean {names}?", options=amb.options,
                confidence=amb.score, words=text,
            )
            exact = False
        parsed = Parsed(intent, exact, result.text_chunks_matched)
        if exact:
            return parsed
        if chosen is None or intent.confidence > chosen.intent.confidence:
            chosen = parsed
    return chosen


def single(
    intents: Intents,
    screen_lists: ScreenLists,
    text: str,
    snapshot: Snapshot,
    not_on_screen_yet: bool,
) -> Parsed | None:
    """One command: exact screen names first, then wildcards resolved by fuzzy matching, last a
    button named by its verb."""
    lists = screen_lists.get(snapshot, text)
    exact = best(intents, text, snapshot, lists, not_on_screen_yet)
    if exact is not None and exact.exact:
        return exact
    fuzzy = best(intents, text, snapshot, {**lists, **WILDCARDS}, not_on_screen_yet)
    found = fuzzy if exact is None else exact
    if exact is not None and fuzzy is not None and fuzzy.literal > exact.literal:
        found = fuzzy  # "type hi into the mesage box": the slip hid a field name
    if found is None or found.intent.confidence < ASK_FROM:
        button = button_for(text, snapshot)
        if button is not None:
            node, score = button
            intent = Activate(target=node.name, confidence=score, words=text)
            return Parsed(intent, score == 1.0, 0)
    return found
