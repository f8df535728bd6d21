"""The settings page's form, drawn from the `Settings` model itself (the one source): a field
per setting, the kind of input its type asks for, its description as the hint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

from appliance.settings import Settings, SettingsError, parse_value


@dataclass
class Field:
    key: str
    label: str
    hint: str
    kind: Literal["choice", "number", "text", "list"]
    value: str
    choices: tuple[str, ...] = ()
    error: str = ""


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple | list):
        return ", ".join(value)
    return str(value)


def fields(settings: Settings, errors: dict[str, str] | None = None,
           said: dict[str, str] | None = None) -> list[Field]:
    """Every setting as a form field; `said` keeps what a caregiver typed where it was wrong."""
    out = []
    for key, info in Settings.model_fields.items():
        annotation = info.annotation
        choices: tuple[str, ...] = ()
        kind: Literal["choice", "number", "text", "list"] = "text"
        if annotation is bool:
            kind, choices = "choice", ("yes", "no")
        elif get_origin(annotation) is Literal:
            kind, choices = "choice", tuple(str(a) for a in get_args(annotation))
        elif annotation in (int, float):
            kind = "number"
        elif get_origin(annotation) is tuple:
            kind = "list"
        value = (said or {}).get(key, _shown(getattr(settings, key)))
        out.append(Field(key=key, label=Settings.label(key),
                         hint=info.description or "", kind=kind, value=value, choices=choices,
                         error=(errors or {}).get(key, "")))
    return out


def changes(settings: Settings, form: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """(the settings the form changes, with their checked values; the errors by field)."""
    changed: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for key in Settings.model_fields:
        if key not in form:
            continue
        raw = form[key].strip()
        if Settings.model_fields[key].annotation is bool:
            raw = {"yes": "true", "no": "false"}.get(raw, raw)
        try:
            value = parse_value(key, raw)
        except SettingsError as e:
            errors[key] = str(e).removeprefix(f"bad value for {key}: ")
            continue
        if value != getattr(settings, key):
            changed[key] = value
    return changed, errors
