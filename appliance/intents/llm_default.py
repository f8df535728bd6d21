"""The language model a device uses when no caregiver chose one: the one it has.

A caregiver's `llm` setting is kept as made (a dead Ollama then says "not answering"); the
default follows what is installed, so a device without a model plans with the grammar alone
instead of saying on every unknown command that a model it never had is not answering.
"""

from __future__ import annotations

import socket
from importlib.util import find_spec
from urllib.parse import urlsplit

from appliance.intents.llm_models import PACKAGED, model_path
from appliance.settings import Settings

OLLAMA_PORT = 11434
PROBE_TIMEOUT_S = 0.3  # loopback only: a running daemon answers at once


def installed_llm(settings: Settings) -> str:
    """An Ollama daemon answering at `ollama_host`, else the packaged `llama_model` with
    llama-cpp-python, else "off" (the grammar alone)."""
    if find_spec("ollama") is not None and _listening(settings.ollama_host):
        return "ollama"
    packaged = next(m for m in PACKAGED if m.key == settings.llama_model)
    if find_spec("llama_cpp") is not None and model_path(packaged).is_file():
        return "llama-cpp"
    return "off"


def default_notice(settings: Settings) -> str:
    """One line saying which model the default came to, for the start of a kiosk or demo."""
    if settings.llm == "ollama":
        return f"Language model: the Ollama daemon at {settings.ollama_host} (found running)."
    if settings.llm == "llama-cpp":
        return f"Language model: the packaged {settings.llama_model} model, in-process."
    return (
        "No language model on this device: I understand the grammar's commands only "
        "(a caregiver can choose one: appliance settings set llm ollama --by NAME)."
    )


def _listening(host: str) -> bool:
    parts = urlsplit(host if "://" in host else f"http://{host}")
    try:
        with socket.create_connection(
            (parts.hostname or "127.0.0.1", parts.port or OLLAMA_PORT), timeout=PROBE_TIMEOUT_S
        ):
            return True
    except (OSError, ValueError):
        return False
