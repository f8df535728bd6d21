"""The language model behind the grammar: the one a caregiver chose, or the one the device has
(Ollama on loopback, the embedded GGUF model, or none: the grammar alone, which is not a fault)."""

from __future__ import annotations

from importlib.util import find_spec
from typing import NamedTuple

from appliance.health.check import Check, State
from appliance.settings import Settings

WHAT = "Language model"
OLLAMA_TIMEOUT_S = 1.0  # loopback: a running daemon answers at once


def language_model(settings: Settings, chosen: frozenset[str]) -> Check:
    """As the planner would be built from these settings (`wiring.in_effect`)."""
    from appliance.wiring import in_effect

    whose = "a caregiver's choice" if "llm" in chosen else "the device's default"
    effective = in_effect(settings, chosen)
    if effective.llm == "off":
        if "llm" in chosen:
            return Check(WHAT, "ok", "off (a caregiver's choice): the grammar alone plans")
        return Check(WHAT, "ok", (
            "none on this device: the grammar alone plans (for free-form requests: "
            "appliance models install --ollama MODEL, or scripts/llm-models.sh qwen)"))
    if effective.llm == "llama-cpp":
        return _embedded(effective, whose)
    return _ollama(effective, whose)


def _embedded(settings: Settings, whose: str) -> Check:
    from appliance.intents.llm_models import PACKAGED, model_path

    packaged = next(m for m in PACKAGED if m.key == settings.llama_model)
    path = model_path(packaged)
    if find_spec("llama_cpp") is None:
        return Check(WHAT, "problem", (
            f"the embedded model ({whose}) needs llama-cpp-python: pip install 'appliance[llm]'"))
    if not path.is_file():
        return Check(WHAT, "problem", (
            f"the embedded {settings.llama_model} model ({whose}) is missing at {path}: "
            f"scripts/llm-models.sh {settings.llama_model}"))
    return Check(WHAT, "ok", f"embedded {packaged.name} ({whose}) at {path}")


def _ollama(settings: Settings, whose: str) -> Check:
    host, model = settings.ollama_host, settings.ollama_model
    if find_spec("ollama") is None:
        return Check(WHAT, "problem", (
            f"Ollama ({whose}) needs the ollama client: pip install 'appliance[llm]', "
            "or appliance settings set llm off --by NAME"))
    from appliance.intents.ollama import ollama_status

    status = ollama_status(host, timeout_s=OLLAMA_TIMEOUT_S)
    if not status["reachable"]:
        return Check(WHAT, "problem", (
            f"Ollama ({whose}) does not answer at {host} ({status.get('error', 'no reply')}): "
            "start it (systemctl start ollama), or appliance settings set llm off --by NAME; "
            "meanwhile the grammar alone plans"))
    names = {str(m["name"]) for m in status["models"]}
    if model not in names and f"{model}:latest" not in names:
        return Check(WHAT, "problem", (
            f"Ollama at {host} answers but has no {model}: "
            f"appliance models install --ollama {model}"))
    return Check(WHAT, "ok", f"Ollama ({whose}) at {host} with {model}")


NAMED = {"ollama": "Ollama", "llama-cpp": "the built-in language model", "off": "none"}


class InWords(NamedTuple):
    state: State
    words: str  # what Settings ask for and what is used, as a caregiver reads it
    technical: str  # the check's own detail
    used: str  # the `llm` in effect: "off" when none is


def in_words(settings: Settings, chosen: frozenset[str]) -> InWords:
    """What Settings ask for and what this device actually uses, in a caregiver's words: the
    web's Health and Settings say the same."""
    from appliance.wiring import in_effect

    check = language_model(settings, chosen)
    used = in_effect(settings, chosen).llm
    asked = NAMED[settings.llm] + (f" with the model {settings.ollama_model}"
                                   if settings.llm == "ollama" else "")
    whose = "a caregiver chose" if "llm" in chosen else "the standard setting"
    phrases = "only the built-in phrases are understood (everything in the command list)"
    if check.state == "problem":
        words = (f"Settings ask for {asked} ({whose}), but it is not available on this device, "
                 f"so {phrases}. The technical detail says why.")
        return InWords("problem", words, check.detail, used)
    if used == "off" and settings.llm == "off":
        words = f"Settings ask for none ({whose}): {phrases}."
    elif used == "off":
        words = (f"Settings ask for {asked} ({whose}, used when the device has it); this device "
                 f"has none, so {phrases}. Nothing needs doing.")
    elif used != settings.llm:
        words = (f"Settings ask for {asked} ({whose}, used when the device has it); this device "
                 f"has {NAMED[used]}, so that works out requests beyond the built-in phrases.")
    else:
        words = (f"In use: {asked}, as Settings ask ({whose}); it works out requests beyond the "
                 "built-in phrases.")
    return InWords("ok", words, check.detail, used)
