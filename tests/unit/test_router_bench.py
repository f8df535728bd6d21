"""The planner benchmark's corpus and scoring (the 100+-request run is `bench`, not a test)."""

from __future__ import annotations

from typing import Any

from appliance.desktop.model import Snapshot
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.llm_backend import LanguageModelPlanner
from appliance.intents.model import Activate, SetValue, parse_intent
from appliance.intents.prompt import Message
from appliance_lab.bench.planner import (
    HELD_OUT,
    Corpus,
    CorpusRequest,
    bench_planner,
    load_corpus,
    matches,
)


def _names(snapshot: Snapshot) -> set[str]:
    return {*snapshot.names(), *snapshot.applications, *snapshot.launchable}


def _mentioned(expect: dict[str, Any]) -> list[str]:
    found = [expect[k] for k in ("target", "app") if isinstance(expect.get(k), str)]
    if expect.get("intent") == "set_value" and isinstance(expect.get("value"), str):
        found.append(expect["value"])
    for step in expect.get("steps", []):
        found += _mentioned(step)
    return found


def test_corpus_is_large_varied_and_names_what_is_on_screen() -> None:
    corpus, snapshots = load_corpus()
    assert len(corpus.requests) >= 100
    assert len({r.scene for r in corpus.requests}) >= 4
    kinds = {alt["intent"] for r in corpus.requests for alt in r.alternatives()}
    assert len(kinds) >= 14
    _assert_names_on_screen(corpus, snapshots)


def test_held_out_requests_are_new_and_name_what_is_on_screen() -> None:
    corpus, _ = load_corpus()
    held, snapshots = load_corpus(HELD_OUT)
    assert len(held.requests) >= 50
    seen = {(r.scene, r.text.casefold()) for r in corpus.requests}
    assert not [r.text for r in held.requests if (r.scene, r.text.casefold()) in seen]
    _assert_names_on_screen(held, snapshots)


def _assert_names_on_screen(corpus: Corpus, snapshots: dict[str, Snapshot]) -> None:
    """Every element an expectation names is on its scene's screen (else it can never match)."""
    for req in corpus.requests:
        names = _names(snapshots[req.scene])
        for alt in req.alternatives():
            for name in _mentioned(alt):
                assert name in names, (req.text, name)


def test_matching_rules() -> None:
    louder = CorpusRequest(scene="radio", text="louder",
                           expect={"intent": "set_value", "target": "Volume", "value": {"gt": 30}})
    assert matches(louder, SetValue(target="volume", value=45))
    assert not matches(louder, SetValue(target="Volume", value=20))
    assert not matches(louder, SetValue(target="Volume", value=True))
    assert not matches(louder, None)
    either = CorpusRequest(scene="radio", text="play", any=(
        {"intent": "activate", "target": "Play"},
        {"intent": "set_value", "target": "Play", "value": True}))
    assert matches(either, Activate(target="play"))
    assert matches(either, SetValue(target="Play", value=True))
    assert not matches(either, SetValue(target="Play", value=1.0))
    steps = CorpusRequest(scene="messages", text="x", expect={"intent": "sequence", "steps": [
        {"intent": "select", "target": "Grandma"},
        {"intent": "type_text", "text": "I'll be late"}]})
    assert matches(steps, parse_intent({"intent": "sequence", "steps": [
        {"intent": "select", "target": "Grandma"},
        {"intent": "type_text", "text": "ill be late", "target": "Message"}]}))
    assert not matches(steps, parse_intent({"intent": "sequence", "steps": [
        {"intent": "select", "target": "Grandma"}]}))


class Parrot(LanguageModelPlanner):
    """Answers every request with `read screen`: enough to exercise the bench's bookkeeping."""

    backend = "llama-cpp"

    def __init__(self) -> None:
        super().__init__("parrot")
        self.calls = 0

    def complete(self, messages: list[Message], schema: dict[str, Any]) -> str:
        self.calls += 1
        return '{"intent":"read","what":"screen","confidence":0.9}'


def test_bench_report_shape_and_grammar_handled_requests_skip_the_model() -> None:
    grammar = GrammarPlanner()
    report = bench_planner(grammar, [Parrot()], limit=30)
    assert report["corpus"]["requests"] == 30
    g = report["grammar_only"]
    assert 0 < g["correct"] <= 30 and g["handled"] > 0
    (model,) = report["models"]
    assert model["model"] == "parrot"
    hybrid = model["hybrid"]
    assert hybrid["llm_calls_on_grammar_handled"] == 0
    assert hybrid["llm_calls"] == 30 - hybrid["grammar_handled"]
    assert hybrid["correct"] >= g["correct"] - 1  # the model only ever fills grammar gaps
    assert set(hybrid["latency_ms"]) == {"p50", "p95", "max"}
