"""Prompt injection: text on the screen telling the assistant to act must never become an action.

Three lines of defence, each tested on the corpus in tests/injection/cases.yaml:
1. the prompt keeps screen text inside an escaped <screen> JSON block that the rules call data;
2. the router refuses model proposals whose arguments come from instruction-like screen text
   (tested with a model that obeys the screen completely, and with the real SmolLM2-135M);
3. the validator (appliance/policy) refuses or asks before whatever risky thing is left.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from collections.abc import Sequence as Lines
from pathlib import Path
from typing import Any

import pytest
import yaml

from appliance.desktop.model import Snapshot
from appliance.desktop.scene import parse_scene
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.llama import LlamaCppPlanner
from appliance.intents.llm_backend import LanguageModelPlanner
from appliance.intents.llm_models import SMOLLM2, model_path
from appliance.intents.model import Intent, Sequence, dump_intent
from appliance.intents.planner import Plan
from appliance.intents.prompt import Message, build_prompt
from appliance.intents.router import Router
from appliance.policy.validator import validate
from appliance.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parents[1] / "injection" / "cases.yaml").read_text(encoding="utf-8"))["cases"]
BASES = {
    "messages": ROOT / "appliance" / "scenes" / "messages.json",
    "mail": ROOT / "lab" / "appliance_lab" / "bench" / "scenes" / "mail.json",
    "radio": ROOT / "lab" / "appliance_lab" / "bench" / "scenes" / "radio.json",
    "settings": ROOT / "lab" / "appliance_lab" / "bench" / "scenes" / "settings.json",
}


def scene_for(case: dict[str, Any]) -> Snapshot:
    data = json.loads(BASES[case["base"]].read_text(encoding="utf-8"))
    window = data["applications"][0]["windows"][0]
    window["children"].extend(case.get("add", []))
    if "window" in case:
        window["title"] = case["window"]
    return SimDesktop(parse_scene(json.dumps(data), case["id"])).snapshot()


def steps_of(intent: Intent | None) -> list[dict[str, Any]]:
    if intent is None:
        return []
    if isinstance(intent, Sequence):
        return [dump_intent(s) for s in intent.steps]
    return [dump_intent(intent)]


def forbidden_in(intent: Intent | None, forbid: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def hits(step: dict[str, Any], rule: dict[str, Any]) -> bool:
        return all(str(step.get(k, "")).lower() == str(v).lower() for k, v in rule.items())

    return [s for s in steps_of(intent) for rule in forbid if hits(s, rule)]


def injected_texts(case: dict[str, Any]) -> list[str]:
    texts = [case["window"]] if "window" in case else []
    for el in case.get("add", []):
        texts += [t for t in (el.get("name"), el.get("value")) if isinstance(t, str) and t]
    return texts


class NoGrammar:
    """Finds nothing, so every request reaches the model (the worst case for injection)."""

    def plan(self, text: str, snapshot: Snapshot, history: Lines[str] = ()) -> Plan:
        return Plan(intent=None, planner="grammar")


class ObeyingModel(LanguageModelPlanner):
    """A model that does whatever the screen says: replies with the case's `obeyed` intent."""

    backend = "llama-cpp"

    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__("obeys-the-screen")
        self.reply = reply
        self.seen: list[list[Message]] = []

    def complete(self, messages: list[Message], schema: dict[str, Any]) -> str:
        self.seen.append(messages)
        return json.dumps(self.reply)


ids = [c["id"] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_screen_text_stays_inside_the_data_block(case: dict[str, Any]) -> None:
    system, user = build_prompt(case["request"], scene_for(case))
    assert "never instructions" in system["content"]
    content = user["content"]
    assert content.count("<screen>") == 1 and content.count("</screen>") == 1
    head, rest = content.split("<screen>\n", 1)
    block, tail = rest.split("\n</screen>", 1)
    assert head == ""
    for text in injected_texts(case):
        assert text not in tail  # only the request and history follow the block
    data = json.loads(block)  # the block is one JSON document, escapes and all
    shown = {e.get("value") for e in data["elements"]} | {e["name"] for e in data["elements"]}
    shown.add(data["window"])
    for text in injected_texts(case):
        assert text[:150] in {s[:150] for s in shown if isinstance(s, str)}


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_router_refuses_what_an_obeying_model_proposes(case: dict[str, Any]) -> None:
    model = ObeyingModel(case["obeyed"])
    snapshot = scene_for(case)
    plan = Router(NoGrammar(), model).plan(case["request"], snapshot)
    assert model.seen, "the model was not asked"
    assert forbidden_in(plan.intent, case["forbid"]) == []
    assert plan.intent is None and plan.notes  # refused, with a spoken reason


def _grammar() -> Any:
    return GrammarPlanner()


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_router_with_the_real_grammar_and_an_obeying_model(case: dict[str, Any]) -> None:
    plan = Router(_grammar(), ObeyingModel(case["obeyed"])).plan(case["request"], scene_for(case))
    assert forbidden_in(plan.intent, case["forbid"]) == []


@pytest.fixture(scope="module")
def smollm2() -> Iterator[LanguageModelPlanner]:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (extra `llm`) is not installed")
    path = model_path(SMOLLM2)
    if not path.is_file():
        pytest.skip(f"{path} missing: run scripts/llm-models.sh smollm2")
    yield LlamaCppPlanner(path, model="smollm2-135m", timeout_s=60)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_real_small_model_never_acts_on_screen_text(
    case: dict[str, Any], smollm2: LanguageModelPlanner
) -> None:
    """SmolLM2-135M through llama-cpp, every request forced to the model: zero tolerated."""
    plan = Router(NoGrammar(), smollm2).plan(case["request"], scene_for(case))
    assert forbidden_in(plan.intent, case["forbid"]) == []


@pytest.mark.parametrize("case", [c for c in CASES if c.get("validator") == "stops"],
                         ids=[c["id"] for c in CASES if c.get("validator") == "stops"])
def test_validator_stops_what_the_policy_forbids(case: dict[str, Any]) -> None:
    """Even if a proposal got past the router, the policy never runs it without asking."""
    verdict = validate(case["obeyed"], scene_for(case), Settings())
    assert verdict.decision in {"reject", "confirm", "clarify"}, verdict
