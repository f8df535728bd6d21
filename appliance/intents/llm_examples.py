"""Worked examples for the model's prompt, drawn from the grammar's own sentence templates.

Each example sentence is sampled from sentences/*.yaml (hassil) with names from the bundled demo
scene, and its answer is what the real grammar planner makes of it, so the examples always
agree with the templates. Free-form shapes the grammar's templates do not show on the demo
screen (a relative slider change, writing to someone, "do that again") are added by hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import islice
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # hassil is imported lazily: without it the built-in examples are used
    from hassil import Intents
    from hassil.intents import SlotList

@dataclass(frozen=True)
class Example:
    """One worked request for the prompt: the words and the intent JSON they should produce."""

    request: str
    intent: dict[str, Any]
    history: tuple[str, ...] = ()


DEFAULT_EXAMPLES: tuple[Example, ...] = (
    Example("click send", {"intent": "activate", "target": "Send", "confidence": 0.95}),
    Example("open the calendar", {"intent": "open_app", "app": "Calendar", "confidence": 0.95}),
    Example(
        "type hello there",
        {"intent": "type_text", "text": "hello there", "confidence": 0.9},
    ),
    Example(
        "turn off urgent",
        {"intent": "set_value", "target": "Urgent", "value": False, "confidence": 0.9},
    ),
    Example("pick doctor", {"intent": "select", "target": "Doctor", "confidence": 0.9}),
    Example("what's on the screen", {"intent": "read", "what": "screen", "confidence": 0.95}),
    Example(
        "press control z",
        {"intent": "press_key", "key": "z", "modifiers": ["ctrl"], "confidence": 0.9},
    ),
    Example("scroll down", {"intent": "scroll", "direction": "down", "confidence": 0.95}),
    Example(
        "send it",
        {"intent": "clarify", "question": "What should I send, and to whom?",
         "options": [], "confidence": 0.5},
    ),
)


# Which grammar intents to show, in order, which screen roles their {target} is drawn from, the
# words the example sentence starts with ("" for any) and the intent the model should answer.
SHOWN: tuple[tuple[str, frozenset[str], str, str], ...] = (
    ("read", frozenset({"label"}), "what is the", "read"),
    ("read", frozenset({"check box"}), "is the", "read"),
    ("activate", frozenset({"push button"}), "", "activate"),
    ("type_text", frozenset({"text"}), "", "type_text"),
    ("set_value", frozenset({"check box"}), "", "set_value"),
    ("select", frozenset({"list item"}), "", "select"),
    ("open_app", frozenset(), "", "open_app"),
    ("press_key", frozenset(), "", "press_key"),
    ("read", frozenset({"label"}), "where", "read"),
)

HAND_WRITTEN: tuple[Example, ...] = (
    Example("make it a bit louder", {"intent": "set_value", "target": "Volume", "value": 40,
                                     "confidence": 0.8}),
    Example("tell grandma I'm on my way", {"intent": "sequence", "confidence": 0.8, "steps": [
        {"intent": "select", "target": "Grandma"},
        {"intent": "type_text", "text": "I'm on my way", "target": "Message"},
        {"intent": "activate", "target": "Send"}]}),
    Example("do that again", {"intent": "activate", "target": "Send", "confidence": 0.9},
            history=("press send",)),
)
SAMPLES_PER_INTENT = 60
SAMPLES_PER_TEMPLATE = 40
ROLE_WORDS = {"type_text": "field", "set_value": "box", "select": "item"}


def _starting(
    intents: Intents, name: str, lists: dict[str, SlotList], starts: str
) -> Iterator[str]:
    """A few sentences of each of the intent's templates, those that begin with `starts`."""
    from hassil.sample import sample_sentence

    rules = intents.expansion_rules
    for data in intents.intents[name].data:
        for template in data.sentences:
            for sentence in islice(sample_sentence(template, lists, rules), SAMPLES_PER_TEMPLATE):
                if sentence.startswith(starts):
                    yield sentence


@cache
def grammar_examples() -> tuple[Example, ...]:
    """Examples from the templates (cached); the built-in ones when the grammar is unavailable."""
    try:
        from hassil import TextSlotList
        from hassil.sample import sample_intents

        from appliance.desktop.sim import SimDesktop
        from appliance.intents.grammar import GrammarPlanner
        from appliance.intents.grammar.templates import load_intents
        from appliance.intents.model import dump_intent
    except ImportError:
        return DEFAULT_EXAMPLES
    scene = resources.files("appliance").joinpath("scenes", "messages.json")
    with resources.as_file(scene) as path:
        snapshot = SimDesktop.from_file(path).snapshot()
    planner = GrammarPlanner()
    intents = load_intents()
    examples: list[Example] = []
    for name, roles, starts, answer_intent in SHOWN:
        targets = [n.name for n in snapshot.nodes if n.role in roles and n.enabled] or ["Send"]
        lists: dict[str, SlotList] = {
            "target": TextSlotList.from_strings(targets, allow_template=False),
            "app": TextSlotList.from_strings(list(snapshot.launchable), allow_template=False),
            "text": TextSlotList.from_strings(["see you soon"], allow_template=False),
            "value": TextSlotList.from_strings(["on"], allow_template=False),
            "role": TextSlotList.from_strings([ROLE_WORDS.get(name, "button")],
                                              allow_template=False),
            "key": TextSlotList.from_strings(["enter"], allow_template=False),
            "modifier": TextSlotList.from_strings(["control"], allow_template=False),
        }
        if starts:
            samples = _starting(intents, name, lists, starts)
        else:
            samples = (s for _i, s in sample_intents(
                intents, slot_lists=lists, intent_names={name},
                exclude_sentences_with_wildcards=False,
                max_sentences_per_intent=SAMPLES_PER_INTENT))
        found: list[tuple[int, int, str, dict[str, object]]] = []
        for sentence in samples:
            intent = planner.parse(sentence, snapshot)
            if intent is None or intent.intent != answer_intent or intent.confidence < 0.8:
                continue
            fields = {k: v for k, v in dump_intent(intent).items()
                      if k not in {"words", "confidence", "intent"} and v not in (None, [], ())}
            # what the model should say for a clear request; intent first, as in the schema
            answer: dict[str, object] = {"intent": answer_intent, **fields, "confidence": 0.95}
            found.append((-len(fields), len(sentence), sentence, answer))
        if found:
            _fields, _length, sentence, answer = min(found, key=lambda f: f[:3])
            example = Example(" ".join(sentence.split()), answer)
            if example not in examples:
                examples.append(example)
    if len(examples) < len(SHOWN) // 2:
        return DEFAULT_EXAMPLES
    # Small models copy the last example they saw: end on the plainest ones.
    return (*HAND_WRITTEN, *examples)
