"""The Ollama planner backend: the official `ollama` client on loopback, JSON-schema output.

Every way the daemon can fail (not running, slow, HTTP error, garbage, schema-violating JSON)
becomes a LanguageModelError; the router then falls back to the grammar.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import ollama

from appliance.intents.llm_backend import (
    NOT_ANSWERING,
    TOO_SLOW,
    UNUSABLE,
    LanguageModelError,
    LanguageModelPlanner,
)
from appliance.intents.llm_examples import Example
from appliance.intents.prompt import Message

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_MODEL = "qwen2.5-coder:1.5b"
DEFAULT_KEEP_ALIVE = "30m"


def default_host() -> str:
    return os.environ.get("OLLAMA_HOST") or DEFAULT_HOST


def _client(host: str, timeout_s: float, connect_timeout_s: float) -> ollama.Client:
    return ollama.Client(host=host, timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s))


class OllamaPlanner(LanguageModelPlanner):
    """Plans with a model served by a local Ollama daemon (temperature 0, schema-constrained)."""

    backend = "ollama"

    def __init__(
        self,
        host: str = DEFAULT_HOST,
        model: str = DEFAULT_MODEL,
        timeout_s: float = 30.0,
        connect_timeout_s: float = 2.0,
        keep_alive: str | float = DEFAULT_KEEP_ALIVE,
        stream: bool = True,
        examples: Sequence[Example] | None = None,
    ) -> None:
        super().__init__(model, examples)
        self.host = host
        self.timeout_s = timeout_s
        self.keep_alive = keep_alive
        self.stream = stream
        # Read timeout = the whole budget: a non-streamed reply may only arrive at the end.
        self._client = _client(host, timeout_s, connect_timeout_s)

    def complete(self, messages: list[Message], schema: dict[str, Any]) -> str:
        deadline = time.monotonic() + self.timeout_s
        try:
            if not self.stream:
                reply = self._client.chat(
                    model=self.model,
                    messages=messages,
                    format=schema,
                    options={"temperature": 0},
                    keep_alive=self.keep_alive,
                )
                return reply.message.content or ""
            return self._collect(
                self._client.chat(
                    model=self.model,
                    messages=messages,
                    format=schema,
                    options={"temperature": 0},
                    keep_alive=self.keep_alive,
                    stream=True,
                ),
                deadline,
            )
        except LanguageModelError:
            raise
        except (ConnectionError, httpx.ConnectError) as exc:
            raise LanguageModelError(NOT_ANSWERING, f"ollama at {self.host}: {exc}") from exc
        except httpx.TimeoutException as exc:
            raise LanguageModelError(TOO_SLOW, f"ollama timed out: {type(exc).__name__}") from exc
        except ollama.ResponseError as exc:
            detail = f"ollama error {exc.status_code}: {exc.error}"
            raise LanguageModelError(NOT_ANSWERING, detail) from exc
        except httpx.HTTPError as exc:
            raise LanguageModelError(NOT_ANSWERING, f"ollama transport: {exc}") from exc
        except (ValueError, TypeError) as exc:  # undecodable JSON or an unexpected reply shape
            raise LanguageModelError(UNUSABLE, f"ollama reply unreadable: {exc}") from exc

    def _collect(self, parts: Iterator[ollama.ChatResponse], deadline: float) -> str:
        chunks: list[str] = []
        done = False
        for part in parts:
            chunks.append(part.message.content or "")
            if part.done:
                done = True
                break
            if time.monotonic() > deadline:
                close = getattr(parts, "close", None)
                if close is not None:
                    close()
                raise LanguageModelError(
                    TOO_SLOW, f"ollama still streaming after {self.timeout_s} s")
        if not done:
            raise LanguageModelError(UNUSABLE, "ollama stream ended before done")
        return "".join(chunks)


def ollama_status(host: str | None = None, timeout_s: float = 2.0) -> dict[str, Any]:
    """For `appliance models`: is the daemon reachable, which models are installed and loaded."""
    host = host or default_host()
    client = _client(host, timeout_s, timeout_s)
    status: dict[str, Any] = {"host": host, "reachable": False, "models": [], "loaded": []}
    try:
        listed = client.list()
        status["reachable"] = True
        status["models"] = [
            {"name": m.model, "size": int(m.size or 0),
             "family": m.details.family if m.details else None,
             "quantization": m.details.quantization_level if m.details else None}
            for m in listed.models
        ]
        status["loaded"] = [m.model for m in client.ps().models]
    except (ConnectionError, httpx.HTTPError, ollama.ResponseError, ValueError) as exc:
        status["error"] = str(exc) or type(exc).__name__
    return status


class ModelInstallError(Exception):
    """Pulling a model failed; the message is short and can be printed or spoken."""


def models_install_ollama(
    model: str, host: str | None = None, show_progress: bool = True
) -> None:
    """Pull `model` through the local daemon, with a progress bar per layer."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    host = host or default_host()
    client = ollama.Client(host=host, timeout=httpx.Timeout(None, connect=5.0))
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
               TransferSpeedColumn())
    try:
        with Progress(*columns, disable=not show_progress, transient=False) as bar:
            tasks: dict[str, Any] = {}
            for part in client.pull(model, stream=True):
                digest = part.digest or ""
                if digest and part.total:
                    if digest not in tasks:
                        label = (part.status or digest)[:40]
                        tasks[digest] = bar.add_task(label, total=part.total)
                    bar.update(tasks[digest], completed=part.completed or 0)
                elif part.status and show_progress:
                    bar.console.print(part.status)
    except (ConnectionError, httpx.ConnectError) as exc:
        raise ModelInstallError(f"Ollama is not running at {host}.") from exc
    except ollama.ResponseError as exc:
        raise ModelInstallError(f"Ollama could not pull {model}: {exc.error}") from exc
    except (httpx.HTTPError, json.JSONDecodeError) as exc:
        raise ModelInstallError(f"Pulling {model} failed: {exc}") from exc
