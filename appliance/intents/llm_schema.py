"""The Intent JSON schema as a language model is asked to fill it.

Derived from `intent_json_schema()` (one source of truth) and only ever narrower: every field is
required (a null or empty list where it does not apply), `intent` comes first and `confidence`
last, and `words` is left out (the router fills it with the person's own words). Schema-to-grammar
converters (llama.cpp's, Ollama's) emit required properties in order, so this fixes the order the
model writes fields in, and the prompt's examples follow it. Whatever a model returns still goes
through `parse_intent`.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from appliance.intents.model import (
    PERSON_ONLY_INTENTS,
    Intent,
    dump_intent,
    intent_json_schema,
)

_LEAD = ("intent",)
_TAIL = ("confidence",)
_DROP = frozenset({"words", "title"})


def _tighten(definition: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = definition.get("properties", {})
    if "intent" not in props:
        return definition
    intent = {k: v for k, v in props["intent"].items() if k not in {"default", "title"}}
    middle = [k for k in props if k not in (*_LEAD, *_TAIL, *_DROP)]
    ordered: dict[str, Any] = {"intent": intent}
    for key in middle:
        ordered[key] = {k: v for k, v in props[key].items() if k not in {"title", "default"}}
    ordered["confidence"] = {
        k: v for k, v in props["confidence"].items() if k not in {"default", "title"}
    }
    required = list(ordered)
    out = {k: v for k, v in definition.items() if k not in {"properties", "required", "title"}}
    out["properties"] = ordered
    out["required"] = required
    return out


@cache
def _schema() -> dict[str, Any]:
    schema = copy.deepcopy(intent_json_schema())
    marks = {name for name, d in schema["$defs"].items() if _kind(d) in PERSON_ONLY_INTENTS}
    schema["$defs"] = {
        name: _tighten(d) for name, d in schema["$defs"].items() if name not in marks
    }
    refs = {f"#/$defs/{name}" for name in marks}
    schema["oneOf"] = [r for r in schema["oneOf"] if r["$ref"] not in refs]
    mapping = schema["discriminator"]["mapping"]
    schema["discriminator"]["mapping"] = {k: v for k, v in mapping.items() if v not in refs}
    return schema


def _kind(definition: dict[str, Any]) -> str | None:
    intent = definition.get("properties", {}).get("intent", {})
    value = intent.get("const", intent.get("default"))
    return value if isinstance(value, str) else None


def llm_intent_schema() -> dict[str, Any]:
    """A fresh copy of the model-facing schema (callers may mutate it)."""
    return copy.deepcopy(_schema())


def _ordered_answer(data: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    variant = next(d for d in defs.values()
                   if d.get("properties", {}).get("intent", {}).get("const") == data["intent"])
    out: dict[str, Any] = {}
    for key in variant["properties"]:
        value = data.get(key)
        if key == "steps":
            value = [_ordered_answer(step, defs) for step in value or []]
        out[key] = value
    return out


def model_answer(intent: Intent) -> dict[str, Any]:
    """The intent as the model is asked to write it: every field, in the schema's order."""
    return _ordered_answer(dump_intent(intent), _schema()["$defs"])
