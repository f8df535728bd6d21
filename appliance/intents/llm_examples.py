"""Worked examples for the model's prompt, drawn from the grammar's own sentence templates.

Each example sentence is sampled from sentences/*.yaml (hassil) with names from the bundled demo
scene, and its answer is what the real grammar planner makes of it, so the examples always
agree with the templates. Free-form shapes the grammar has no template for (a question back,
several steps, a relative slider change) are added by hand.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from appliance.intents.prompt import DEFAULT_EXAMPLES, Example

# Which grammar intents to show, in order, and which screen roles their {target} is drawn from.
SHOWN: tuple[tuple[str, frozenset[str]], ...] = (
    ("activate", frozenset({"push button"})),
    ("type_text", frozenset({"text"})),
    ("set_value", frozenset({"check box"})),
    ("select", frozenset({"list item"})),
    ("open_app", frozenset()),
    ("press_key", frozenset()),
    ("read", frozenset({"label"})),
)

HAND_WRITTEN: tuple[Example, ...] = (
    Example("make it a bit louder", {"intent": "set_value", "target": "Volume", "value": 40,
                                     "confidence": 0.8}),
    Example("tell grandma I'm on my way", {"intent": "sequence", "confidence": 0.8, "steps": [
        {"intent": "select", "target": "Grandma"},
        {"intent": "type_text", "text": "I'm on my way", "target": "Message"},
        {"intent": "activate", "target": "Send"}]}),
    Example("send it", {"intent": "clarify", "question": "What should I send, and to whom?",
                        "options": [], "confidence": 0.5}),
)
SAMPLES_PER_INTENT = 60
ROLE_WORDS = {"type_text": "field", "set_value": "box", "select": "item"}


@cache
def grammar_examples() -> tuple[Example, ...]:
    """Examples from the templates (cached); the built-in ones when the grammar is unavailable."""
    try:
        from hassil import TextSlotList
        from hassil.intents import SlotList
        from hassil.sample import sample_intents

        from appliance.desktop.sim import SimDesktop
        from appliance.intents.grammar import GrammarPlanner, load_intents
        from appliance.intents.model import dump_intent
    except ImportError:
        return DEFAULT_EXAMPLES
    scene = resources.files("appliance").joinpath("scenes", "messages.json")
    with resources.as_file(scene) as path:
        snapshot = SimDesktop.from_file(path).snapshot()
    planner = GrammarPlanner()
    intents = load_intents()
    examples: list[Example] = []
    for name, roles in SHOWN:
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
        samples = sample_intents(intents, slot_lists=lists, intent_names={name},
                                 exclude_sentences_with_wildcards=False,
                                 max_sentences_per_intent=SAMPLES_PER_INTENT)
        found: list[tuple[int, int, str, dict[str, object]]] = []
        for _intent, sentence in samples:
            intent = planner.parse(sentence, snapshot)
            if intent is None or intent.intent != name or intent.confidence < 0.8:
                continue
            fields = {k: v for k, v in dump_intent(intent).items()
                      if k not in {"words", "confidence", "intent"} and v not in (None, [], ())}
            # what the model should say for a clear request; intent first, as in the schema
            answer: dict[str, object] = {"intent": name, **fields, "confidence": 0.95}
            found.append((-len(fields), len(sentence), sentence, answer))
        if found:
            _fields, _length, sentence, answer = min(found, key=lambda f: f[:3])
            examples.append(Example(" ".join(sentence.split()), answer))
    if len(examples) < len(SHOWN) // 2:
        return DEFAULT_EXAMPLES
    # Small models copy the last example they saw: end on the plainest ones.
    return (*HAND_WRITTEN, *examples)
