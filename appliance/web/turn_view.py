"""A turn's technical detail, folded away under its plain story: each event's recorded fields
as "name: value" text (never a Python or JSON object), for whoever looks deeper. Journal
content is untrusted text: the template escapes it."""

from __future__ import annotations

from typing import Any


def facts(data: dict[str, Any]) -> str:
    """An event's recorded fields in one line: "transcript: click send; engine: vosk"."""
    return "; ".join(f"{_name(key)}: {_value(value)}" for key, value in data.items())


def _name(key: Any) -> str:
    return str(key).replace("_", " ")


def _value(value: Any) -> str:
    if isinstance(value, dict):
        inner = ", ".join(f"{_name(k)} {_value(v)}" for k, v in value.items())
        return f"({inner})" if inner else "none"
    if isinstance(value, list | tuple):
        return f"({', '.join(_value(v) for v in value)})" if value else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return "none" if value is None or value == "" else str(value)
