"""`appliance bench planner`: accuracy and latency of grammar-only, LLM-only and the hybrid router.

The corpus (planner_corpus.yaml) holds free-form requests over several sim scenes, each with the
intent fields that matter. Requests are run grouped by scene so a backend can reuse its cached
prompt prefix, as it would on a device where the screen changes less often than the request.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from appliance.desktop.model import Snapshot
from appliance.desktop.sim import SimDesktop
from appliance.intents.llm_backend import LanguageModelError, LanguageModelPlanner
from appliance.intents.llm_grounding import normalise
from appliance.intents.model import Intent, dump_intent
from appliance.intents.planner import Plan, Planner
from appliance.intents.router import Router
from appliance.scenes import bundled_scene

CORPUS = Path(__file__).with_name("planner_corpus.yaml")
HELD_OUT = Path(__file__).with_name("planner_heldout.yaml")
PROGRESS_EVERY = 10
"""A progress line after this many requests: a model takes seconds a request, a run minutes."""

Progress = Callable[[str], None]


class CorpusRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    scene: str
    text: str
    history: tuple[str, ...] = ()
    expect: dict[str, Any] | None = None
    any: tuple[dict[str, Any], ...] = ()

    @model_validator(mode="after")
    def _one_expectation(self) -> CorpusRequest:
        if (self.expect is None) == (not self.any):
            raise ValueError("give exactly one of expect / any")
        return self

    def alternatives(self) -> tuple[dict[str, Any], ...]:
        return (self.expect,) if self.expect is not None else self.any


class Corpus(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    scenes: dict[str, str]
    requests: tuple[CorpusRequest, ...] = Field(min_length=1)


def _scene_file(corpus: Path, rel: str) -> Path:
    """A corpus's scene: `bundled:NAME`, one the appliance ships, or a file beside the corpus."""
    if rel.startswith("bundled:"):
        return bundled_scene(rel.removeprefix("bundled:"))
    return (corpus.parent / rel).resolve()


def load_corpus(path: Path = CORPUS) -> tuple[Corpus, dict[str, Snapshot]]:
    corpus = Corpus.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    snapshots = {
        name: SimDesktop.from_file(_scene_file(path, rel)).snapshot()
        for name, rel in corpus.scenes.items()
    }
    unknown = {r.scene for r in corpus.requests} - snapshots.keys()
    if unknown:
        raise ValueError(f"corpus names unknown scenes: {sorted(unknown)}")
    return corpus, snapshots


def _same(expected: Any, got: Any) -> bool:
    if isinstance(expected, Mapping) and ("gt" in expected or "lt" in expected):
        if isinstance(got, bool) or not isinstance(got, int | float):
            return False
        return (("gt" not in expected or got > expected["gt"])
                and ("lt" not in expected or got < expected["lt"]))
    if isinstance(expected, Mapping):
        return isinstance(got, Mapping) and all(_same(v, got.get(k)) for k, v in expected.items())
    if isinstance(expected, list):
        return (isinstance(got, list | tuple) and len(expected) == len(got)
                and all(_same(e, g) for e, g in zip(expected, got, strict=True)))
    if isinstance(expected, bool) or isinstance(got, bool):
        return expected is got
    if isinstance(expected, int | float):
        return isinstance(got, int | float) and math.isclose(expected, got, abs_tol=0.5)
    if isinstance(expected, str):
        return isinstance(got, str) and normalise(expected) == normalise(got)
    return bool(expected == got)


def matches(request: CorpusRequest, intent: Intent | None) -> bool:
    """Does the proposed intent carry every field the corpus asks for (any alternative)?"""
    if intent is None:
        return False
    got = dump_intent(intent)
    return any(_same(alt, got) for alt in request.alternatives())


def _latency(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "max": 0.0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {"p50": round(statistics.median(ordered), 2), "p95": round(p95, 2),
            "max": round(ordered[-1], 2)}


@dataclass
class _Outcome:
    request: CorpusRequest
    plan: Plan | None
    ms: float
    error: str = ""


def _summary(outcomes: Sequence[_Outcome], misses: int = 60) -> dict[str, Any]:
    right = [o for o in outcomes if o.plan is not None and matches(o.request, o.plan.intent)]
    wrong = [o for o in outcomes if o not in right]
    return {
        "accuracy": round(len(right) / len(outcomes), 4) if outcomes else 0.0,
        "correct": len(right),
        "total": len(outcomes),
        "no_intent": sum(1 for o in outcomes if o.plan is None or o.plan.intent is None),
        "failures": sum(1 for o in outcomes if o.error),
        "latency_ms": _latency([o.ms for o in outcomes]),
        "misses": [
            {"scene": o.request.scene, "text": o.request.text,
             "got": dump_intent(o.plan.intent) if o.plan and o.plan.intent else None,
             **({"error": o.error} if o.error else {})}
            for o in wrong[:misses]
        ],
    }


class _CountingLLM(LanguageModelPlanner):
    """Passes through to a real backend, counting the requests that reached it."""

    def __init__(self, inner: LanguageModelPlanner) -> None:
        super().__init__(inner.model, inner.examples)
        self.backend = inner.backend
        self.inner = inner
        self.calls = 0

    def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> str:
        self.calls += 1
        return self.inner.complete(messages, schema)


def _ordered(corpus: Corpus) -> list[CorpusRequest]:
    order = list(corpus.scenes)
    return sorted(corpus.requests, key=lambda r: order.index(r.scene))


def _counted(
    requests: Sequence[CorpusRequest], label: str, say: Progress
) -> Iterator[CorpusRequest]:
    """The requests, saying "label: done/total" every PROGRESS_EVERY of them and at the end."""
    for done, req in enumerate(requests, 1):
        yield req
        if done % PROGRESS_EVERY == 0 or done == len(requests):
            say(f"{label}: {done}/{len(requests)}")


def _run(
    requests: Sequence[CorpusRequest],
    snapshots: Mapping[str, Snapshot],
    plan: Callable[[CorpusRequest, Snapshot], Plan],
    label: str = "",
    say: Progress = lambda _msg: None,
) -> list[_Outcome]:
    out = []
    for req in _counted(requests, label, say):
        started = time.perf_counter()
        try:
            result: Plan | None = plan(req, snapshots[req.scene])
            error = ""
        except LanguageModelError as exc:
            result, error = None, exc.detail
        out.append(_Outcome(req, result, (time.perf_counter() - started) * 1000, error))
    return out


def _asking(llm: LanguageModelPlanner) -> Callable[[CorpusRequest, Snapshot], Plan]:
    def plan(req: CorpusRequest, snapshot: Snapshot) -> Plan:
        return llm.plan(req.text, snapshot, req.history)

    return plan


def _hybrid(
    grammar: Planner,
    llm: LanguageModelPlanner,
    requests: Sequence[CorpusRequest],
    snapshots: Mapping[str, Snapshot],
    handled: set[int],
    weak_below: float,
    say: Progress = lambda _msg: None,
) -> dict[str, Any]:
    """The router over the corpus, showing that grammar-handled requests never reach the model."""
    counting = _CountingLLM(llm)
    router = Router(grammar, counting, weak_below=weak_below)
    calls_on_handled = 0
    handled_ms: list[float] = []
    outcomes = []
    for req in _counted(requests, f"{llm.model}: hybrid", say):
        before = counting.calls
        started = time.perf_counter()
        plan = router.plan(req.text, snapshots[req.scene], req.history)
        ms = (time.perf_counter() - started) * 1000
        if id(req) in handled:
            calls_on_handled += counting.calls - before
            handled_ms.append(ms)
        outcomes.append(_Outcome(req, plan, ms, router.last_failure or ""))
    summary = _summary(outcomes)
    summary["llm_calls"] = counting.calls
    summary["grammar_handled"] = len(handled)
    summary["llm_calls_on_grammar_handled"] = calls_on_handled
    summary["grammar_handled_latency_ms"] = _latency(handled_ms)
    return summary


def bench_planner(
    grammar: Planner,
    llms: Sequence[LanguageModelPlanner] = (),
    corpus_path: Path = CORPUS,
    limit: int | None = None,
    weak_below: float = 0.6,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the corpus through the grammar, each LLM alone, and each grammar+LLM router."""
    corpus, snapshots = load_corpus(corpus_path)
    requests = _ordered(corpus)[:limit] if limit else _ordered(corpus)
    say = progress or (lambda _msg: None)

    say(f"grammar: {len(requests)} requests")
    grammar_runs = _run(
        requests, snapshots, lambda r, s: grammar.plan(r.text, s, r.history), "grammar", say
    )
    report: dict[str, Any] = {
        "corpus": {"path": str(corpus_path), "requests": len(requests),
                   "scenes": sorted({r.scene for r in requests})},
        "weak_below": weak_below,
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": os.getloadavg()},
        "grammar_only": _summary(grammar_runs),
        "models": [],
    }
    handled = {
        id(o.request) for o in grammar_runs
        if o.plan is not None and o.plan.intent is not None
        and o.plan.intent.confidence >= weak_below
    }
    report["grammar_only"]["handled"] = len(handled)

    for llm in llms:
        entry: dict[str, Any] = {"backend": llm.backend, "model": llm.model}
        load = getattr(llm, "load", None)
        if callable(load):
            started = time.perf_counter()
            load()
            entry["load_s"] = round(time.perf_counter() - started, 2)
        first = requests[0]
        started = time.perf_counter()
        try:
            llm.plan(first.text, snapshots[first.scene], first.history)
        except LanguageModelError as exc:
            entry["warmup_error"] = exc.detail
        entry["warmup_ms"] = round((time.perf_counter() - started) * 1000, 1)

        say(f"{llm.model}: LLM only")
        entry["llm_only"] = _summary(
            _run(requests, snapshots, _asking(llm), f"{llm.model}: LLM only", say)
        )
        say(f"{llm.model}: hybrid")
        entry["hybrid"] = _hybrid(grammar, llm, requests, snapshots, handled, weak_below, say)
        entry["load_average_after"] = os.getloadavg()
        report["models"].append(entry)
    return report


def packaged_llms(
    keys: Sequence[str] = ("qwen", "smollm2"), timeout_s: float = 180.0
) -> list[LanguageModelPlanner]:
    """Embedded planners for the packaged models that are installed (scripts/llm-models.sh)."""
    from appliance.intents.llama import LlamaCppPlanner
    from appliance.intents.llm_models import PACKAGED, model_path

    by_key = {m.key: m for m in PACKAGED}
    unknown = [k for k in keys if k not in by_key]
    if unknown:
        raise ValueError(f"unknown model {unknown[0]!r}; known: {', '.join(by_key)}")
    return [LlamaCppPlanner(model_path(by_key[k]), model=by_key[k].name, timeout_s=timeout_s)
            for k in keys if model_path(by_key[k]).is_file()]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m appliance_lab.bench.planner [--models qwen,smollm2] [--limit N] [--corpus F]`."""
    import argparse
    import json
    import sys

    from appliance.intents.grammar import GrammarPlanner

    parser = argparse.ArgumentParser(prog="appliance bench planner")
    parser.add_argument("--models", default="qwen,smollm2")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--ollama", default=None, help="also bench this Ollama model")
    parser.add_argument("--corpus", type=Path, default=CORPUS,
                        help="another corpus file of the same format (e.g. held-out requests)")
    args = parser.parse_args(argv)
    llms = packaged_llms([k for k in args.models.split(",") if k])
    if args.ollama:
        from appliance.intents.ollama import OllamaPlanner, default_host

        llms.append(OllamaPlanner(host=default_host(), model=args.ollama))
    report = bench_planner(GrammarPlanner(), llms, corpus_path=args.corpus, limit=args.limit,
                           progress=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
