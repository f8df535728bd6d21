"""The embedded planner backend: llama-cpp-python in this process, JSON-schema-constrained output.

For devices without an Ollama daemon, and for measuring with a real model here. Same prompt and
schema as the Ollama backend; the grammar built from the schema means the reply is always JSON of
the right shape unless generation is cut short (deadline or token limit), which parse_reply
reports as unusable.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appliance.intents.llm_backend import (
    NOT_ANSWERING,
    TOO_SLOW,
    LanguageModelError,
    LanguageModelPlanner,
)
from appliance.intents.llm_examples import Example
from appliance.intents.prompt import Message

if TYPE_CHECKING:
    from llama_cpp import Llama

# llama.cpp's OpenMP threads spin while they wait; on a 2-core box shared with speech and the
# desktop that spinning starves everything (measured here: 1.1 token/s spinning, 5.7 passive).
# libgomp reads this once, when llama_cpp's library loads, so it is set before any import of it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class LlamaCppPlanner(LanguageModelPlanner):
    """Plans with a local GGUF model through llama-cpp-python (loaded on first use)."""

    backend = "llama-cpp"

    def __init__(
        self,
        model_path: Path,
        model: str | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        timeout_s: float = 60.0,
        max_tokens: int = 256,
        examples: Sequence[Example] | None = None,
    ) -> None:
        super().__init__(model or model_path.stem, examples)
        self.model_path = model_path
        self.n_ctx = n_ctx
        # llama-cpp defaults to half the cores for generation; PASSIVE waiting (above) lets it
        # take them all without starving speech and the desktop.
        self.n_threads = n_threads or os.cpu_count() or 1
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self._llm: Llama | None = None
        self._lock = threading.Lock()  # one llama context: one generation at a time

    def load(self) -> Llama:
        """Load the model now (it is otherwise loaded by the first request)."""
        if self._llm is not None:
            return self._llm
        if not self.model_path.is_file():
            raise LanguageModelError(NOT_ANSWERING, f"model file missing: {self.model_path}")
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LanguageModelError(NOT_ANSWERING, "llama-cpp-python is not installed") from exc
        try:
            self._llm = Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                seed=0,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise LanguageModelError(NOT_ANSWERING, f"model did not load: {exc}") from exc
        return self._llm

    def complete(self, messages: list[Message], schema: dict[str, Any]) -> str:
        with self._lock:
            llm = self.load()
            deadline = time.monotonic() + self.timeout_s
            chunks: list[str] = []
            try:
                # Streamed so the deadline is checked between tokens; closing the stream stops it.
                stream: Any = llm.create_chat_completion(
                    messages=messages,  # type: ignore[arg-type]
                    response_format={"type": "json_object", "schema": schema},
                    temperature=0.0,
                    max_tokens=self.max_tokens,
                    stream=True,
                )
                for chunk in stream:
                    chunks.append(chunk["choices"][0]["delta"].get("content") or "")
                    if time.monotonic() > deadline:
                        stream.close()
                        raise LanguageModelError(
                            TOO_SLOW, f"llama-cpp still generating after {self.timeout_s} s")
            except (ValueError, RuntimeError) as exc:
                raise LanguageModelError(NOT_ANSWERING, f"llama-cpp failed: {exc}") from exc
            return "".join(chunks)
