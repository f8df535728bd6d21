"""The Ollama backend against a loopback server that speaks Ollama's documented wire format.

There is no Ollama daemon on this machine (none in apt, PyPI or npm), so `WireServer` plays it:
`POST /api/chat` answers a plain JSON object or, when the request asks for `"stream": true`,
NDJSON lines with a final `"done": true`; errors are `{"error": "..."}` with an HTTP status, as
the daemon sends them. The client under test is the real `ollama` package over real HTTP.
A live test at the end runs against a real daemon when OLLAMA_HOST answers.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from appliance.desktop.model import Snapshot
from appliance.desktop.sim import SimDesktop
from appliance.intents.llm_backend import (
    NOT_ANSWERING,
    TOO_SLOW,
    UNUSABLE,
    LanguageModelError,
)
from appliance.intents.llm_schema import llm_intent_schema
from appliance.intents.model import Activate, OpenApp, TypeText
from appliance.intents.ollama import (
    ModelInstallError,
    OllamaPlanner,
    models_install_ollama,
    ollama_status,
)
from appliance.intents.planner import Plan
from appliance.intents.router import Router

SCENE = Path(__file__).resolve().parents[2] / "appliance" / "scenes" / "messages.json"


@dataclass
class Script:
    """What the fake daemon does with the next /api/chat requests."""

    content: str = '{"intent":"activate","target":"Send","confidence":0.9}'
    status: int = 200
    error: str = ""
    delay_s: float = 0.0  # before the first byte
    chunk_delay_s: float = 0.0  # between streamed lines
    raw_body: bytes | None = None  # sent as is (garbage)
    stream_error_after: int | None = None  # streamed lines before an {"error"} line
    drop_done: bool = False  # end the stream without a done line
    requests: list[dict[str, Any]] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    server: WireServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/api/tags":
            self._json(200, {"models": [{
                "name": "qwen2.5-coder:1.5b", "model": "qwen2.5-coder:1.5b",
                "modified_at": "2026-11-01T10:00:00Z", "size": 986061892,
                "digest": "6d3abb8d2d53", "details": {
                    "format": "gguf", "family": "qwen2", "parameter_size": "1.5B",
                    "quantization_level": "Q4_K_M"}}]})
        elif self.path == "/api/ps":
            self._json(200, {"models": [{"name": "qwen2.5-coder:1.5b",
                                         "model": "qwen2.5-coder:1.5b", "size": 1e9}]})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/api/pull":
            self._pull(body)
            return
        script = self.server.script
        script.requests.append(body)
        time.sleep(script.delay_s)
        if script.status != 200:
            self._json(script.status, {"error": script.error})
            return
        if script.raw_body is not None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(script.raw_body)))
            self.end_headers()
            self.wfile.write(script.raw_body)
            return
        model = body["model"]
        if not body.get("stream", True):
            self._json(200, {
                "model": model, "created_at": "2026-11-21T10:00:00Z",
                "message": {"role": "assistant", "content": script.content},
                "done": True, "done_reason": "stop", "total_duration": 4_000_000,
                "load_duration": 1_000_000, "prompt_eval_count": 300, "eval_count": 12,
                "eval_duration": 2_000_000})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()
        pieces = [script.content[i:i + 7] for i in range(0, len(script.content), 7)]
        for n, piece in enumerate(pieces):
            if script.stream_error_after is not None and n == script.stream_error_after:
                self.wfile.write(json.dumps({"error": "model runner crashed"}).encode() + b"\n")
                return
            line = {"model": model, "created_at": "2026-11-21T10:00:00Z",
                    "message": {"role": "assistant", "content": piece}, "done": False}
            self.wfile.write(json.dumps(line).encode() + b"\n")
            self.wfile.flush()
            time.sleep(script.chunk_delay_s)
        if not script.drop_done:
            last = {"model": model, "created_at": "2026-11-21T10:00:01Z",
                    "message": {"role": "assistant", "content": ""}, "done": True,
                    "done_reason": "stop", "eval_count": len(pieces)}
            self.wfile.write(json.dumps(last).encode() + b"\n")

    def _pull(self, body: dict[str, Any]) -> None:
        if body["model"] == "no-such-model":
            self._json(500, {"error": "pull model manifest: file does not exist"})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()
        lines: list[dict[str, Any]] = [{"status": "pulling manifest"}]
        lines += [{"status": "pulling 6d3abb8d2d53", "digest": "sha256:6d3abb8d2d53",
                   "total": 1000, "completed": c} for c in (0, 500, 1000)]
        lines += [{"status": "verifying sha256 digest"}, {"status": "success"}]
        for line in lines:
            self.wfile.write(json.dumps(line).encode() + b"\n")


class WireServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = Script()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up on a slow reply is part of the test, not an error; and a
        traceback printed here would land in whichever test's stderr is captured next."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


@pytest.fixture
def wire() -> Iterator[WireServer]:
    server = WireServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def snapshot() -> Snapshot:
    return SimDesktop.from_file(SCENE).snapshot()


def _failure(planner: OllamaPlanner, snapshot: Snapshot) -> LanguageModelError:
    with pytest.raises(LanguageModelError) as info:
        planner.plan("send it please", snapshot)
    return info.value


@pytest.mark.parametrize("stream", [False, True])
def test_plain_and_streamed_replies_become_intents(
    wire: WireServer, snapshot: Snapshot, stream: bool
) -> None:
    wire.script.content = json.dumps(
        {"intent": "type_text", "text": "I'll be late", "target": "Message", "confidence": 0.8})
    planner = OllamaPlanner(host=wire.url, model="qwen2.5-coder:1.5b", stream=stream)
    plan = planner.plan("write I'll be late in the message", snapshot, history=["open messages"])
    assert plan.intent == TypeText(text="I'll be late", target="Message", confidence=0.8,
                                   words="write I'll be late in the message")
    assert (plan.planner, plan.model) == ("ollama", "qwen2.5-coder:1.5b")
    sent = wire.script.requests[-1]
    assert sent["stream"] is stream
    assert sent["model"] == "qwen2.5-coder:1.5b"
    assert sent["format"] == llm_intent_schema()
    assert sent["options"]["temperature"] == 0
    assert sent["keep_alive"] == "30m"
    system, user = sent["messages"]
    assert system["role"] == "system" and "never instructions" in system["content"]
    assert user["role"] == "user" and "<screen>" in user["content"]
    assert '"open messages"' in user["content"]


def test_dead_daemon_is_not_answering(snapshot: Snapshot) -> None:
    server = WireServer()  # bound, then closed: nothing listens on that port any more
    url = server.url
    server.server_close()
    error = _failure(OllamaPlanner(host=url, connect_timeout_s=1.0), snapshot)
    assert error.notice == NOT_ANSWERING


@pytest.mark.parametrize("stream", [False, True])
def test_slow_reply_times_out(wire: WireServer, snapshot: Snapshot, stream: bool) -> None:
    wire.script.delay_s = 1.5
    error = _failure(OllamaPlanner(host=wire.url, timeout_s=0.3, stream=stream), snapshot)
    assert error.notice == TOO_SLOW


def test_stream_that_never_finishes_in_time_is_cut_off(
    wire: WireServer, snapshot: Snapshot
) -> None:
    wire.script.chunk_delay_s = 0.15  # every line arrives within the read timeout ...
    error = _failure(OllamaPlanner(host=wire.url, timeout_s=0.5), snapshot)
    assert error.notice == TOO_SLOW  # ... but the whole reply overruns the budget


@pytest.mark.parametrize(("status", "message"), [
    (404, 'model "qwen2.5-coder:1.5b" not found, try pulling it first'),
    (500, "llama runner process has terminated: signal: killed"),
])
def test_http_errors_are_not_answering(
    wire: WireServer, snapshot: Snapshot, status: int, message: str
) -> None:
    wire.script.status, wire.script.error = status, message
    for stream in (False, True):
        error = _failure(OllamaPlanner(host=wire.url, stream=stream), snapshot)
        assert error.notice == NOT_ANSWERING
        assert str(status) in error.detail and message in error.detail


@pytest.mark.parametrize("stream", [False, True])
def test_garbage_body_is_unusable(wire: WireServer, snapshot: Snapshot, stream: bool) -> None:
    wire.script.raw_body = b"<html>502 Bad Gateway</html>\n"
    error = _failure(OllamaPlanner(host=wire.url, stream=stream), snapshot)
    assert error.notice == UNUSABLE


@pytest.mark.parametrize("content", [
    "Sure! I will click the Send button for you.",  # prose instead of JSON
    '{"intent":"activate"}',  # missing target
    '{"intent":"format_disk","target":"/"}',  # not an intent
    '{"intent":"activate","target":"Send","confidence":7}',  # out of range
    '{"intent":"activate","target":"Send","confidence":0.9,"also":"rm -rf"}',  # extra field
    '{"intent":"activate","target":"Send"',  # truncated
])
def test_schema_violations_are_unusable(
    wire: WireServer, snapshot: Snapshot, content: str
) -> None:
    wire.script.content = content
    for stream in (False, True):
        error = _failure(OllamaPlanner(host=wire.url, stream=stream), snapshot)
        assert error.notice == UNUSABLE


def test_error_in_the_middle_of_a_stream(wire: WireServer, snapshot: Snapshot) -> None:
    wire.script.stream_error_after = 2
    error = _failure(OllamaPlanner(host=wire.url), snapshot)
    assert error.notice == NOT_ANSWERING and "crashed" in error.detail


def test_stream_without_done_is_unusable(wire: WireServer, snapshot: Snapshot) -> None:
    wire.script.drop_done = True
    error = _failure(OllamaPlanner(host=wire.url), snapshot)
    assert error.notice == UNUSABLE


class _Grammar:
    """A grammar stand-in with a fixed answer, so the router's choice is what is tested."""

    def __init__(self, plan: Plan) -> None:
        self.answer = plan

    def plan(self, text: str, snapshot: Snapshot, history: Sequence[str] = ()) -> Plan:
        return self.answer


def test_router_never_asks_ollama_when_the_grammar_is_sure(
    wire: WireServer, snapshot: Snapshot
) -> None:
    sure = Plan(intent=Activate(target="Send", confidence=0.95), planner="grammar")
    router = Router(_Grammar(sure), OllamaPlanner(host=wire.url))
    assert router.plan("click send", snapshot).intent == sure.intent
    assert wire.script.requests == []


def test_router_falls_back_and_recovers(wire: WireServer, snapshot: Snapshot) -> None:
    """Dead -> grammar-only with a notice; the next request asks the model again and succeeds."""
    nothing = Plan(intent=None, planner="grammar")
    router = Router(_Grammar(nothing), OllamaPlanner(host=wire.url, timeout_s=0.4))
    wire.script.delay_s = 1.0
    down = router.plan("make a new calendar entry", snapshot)
    assert down.intent is None and down.planner == "grammar"
    assert down.notes == (TOO_SLOW,)
    assert router.last_failure is not None
    wire.script.delay_s = 0.0
    wire.script.content = '{"intent":"open_app","app":"Calendar","confidence":0.7}'
    up = router.plan("make a new calendar entry", snapshot)
    assert up.intent == OpenApp(app="Calendar", confidence=0.7, words="make a new calendar entry")
    assert up.planner == "ollama" and up.notes == ()
    assert router.last_failure is None
    assert len(wire.script.requests) == 2


def test_router_keeps_a_weak_grammar_match_when_the_model_talks_nonsense(
    wire: WireServer, snapshot: Snapshot
) -> None:
    weak = Plan(intent=Activate(target="Send", confidence=0.4), planner="grammar")
    wire.script.content = "I'm sorry, I can't help with that."
    plan = Router(_Grammar(weak), OllamaPlanner(host=wire.url)).plan("sent it", snapshot)
    assert plan.intent == weak.intent and plan.notes == (UNUSABLE,)


def test_status_and_pull(wire: WireServer, capsys: pytest.CaptureFixture[str]) -> None:
    status = ollama_status(wire.url)
    assert status["reachable"] is True
    assert status["models"][0]["name"] == "qwen2.5-coder:1.5b"
    assert status["models"][0]["quantization"] == "Q4_K_M"
    assert status["loaded"] == ["qwen2.5-coder:1.5b"]
    models_install_ollama("qwen2.5-coder:1.5b", host=wire.url)
    assert "success" in capsys.readouterr().out
    with pytest.raises(ModelInstallError, match="could not pull"):
        models_install_ollama("no-such-model", host=wire.url, show_progress=False)


def test_status_and_pull_without_a_daemon() -> None:
    server = WireServer()
    url = server.url
    server.server_close()
    status = ollama_status(url, timeout_s=1.0)
    assert status["reachable"] is False and "error" in status
    with pytest.raises(ModelInstallError, match="not running"):
        models_install_ollama("qwen2.5-coder:1.5b", host=url, show_progress=False)


def _live_host() -> str | None:
    host = os.environ.get("OLLAMA_HOST")
    if not host:
        return None
    url = host if "://" in host else f"http://{host}"
    try:
        httpx.get(f"{url}/api/version", timeout=1.0).raise_for_status()
    except httpx.HTTPError:
        return None
    return url


def test_live_ollama(snapshot: Snapshot) -> None:
    """Runs only when a real daemon answers at OLLAMA_HOST (model: OLLAMA_TEST_MODEL, else any)."""
    host = _live_host()
    if host is None:
        pytest.skip("no Ollama daemon answers at OLLAMA_HOST")
    status = ollama_status(host)
    model = os.environ.get("OLLAMA_TEST_MODEL") or (
        status["models"][0]["name"] if status["models"] else None)
    if model is None:
        pytest.skip(f"the Ollama daemon at {host} has no model installed")
    planner = OllamaPlanner(host=host, model=model, timeout_s=120)
    plan = planner.plan("press the send button", snapshot)
    assert plan.intent is not None and plan.planner == "ollama" and plan.model == model
