"""One turn's page: each step with why, in words: what was heard and how sure, each action's
before and after, who confirmed. Journal content is untrusted text: the template escapes it."""

from __future__ import annotations

from typing import Any


def more(event: str, data: dict[str, Any]) -> str:
    """What the step's detail leaves out, for the caregiver."""
    match event:
        case "Heard" | "Answered":
            parts = []
            if data.get("confidence") is not None:
                parts.append(f"confidence {float(data['confidence']):.2f}")
            parts += [f"{k.replace('_', ' ')} {float(v):.0f} ms"
                      for k, v in (data.get("timings") or {}).items()
                      if isinstance(v, int | float)]
            return ", ".join(parts)
        case "ActionSucceeded":
            return "; ".join(_changed(data.get("before") or {}, data.get("after") or {}))
        case "Prompted":
            return str(data.get("context", ""))
    return ""


def _changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    out = []
    for key, now in after.items():
        was = before.get(key) or {}
        name = now.get("name") or was.get("name") or key
        for field in ("value", "states", "activations", "running"):
            if was.get(field) != now.get(field):
                out.append(f"{name} {field}: {_shown(was.get(field))} -> {_shown(now.get(field))}")
    return out


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return "nothing" if value is None else str(value)
