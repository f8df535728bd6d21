"""The settings page's form, drawn from the `Settings` model itself (the one source): its title
as the label, its description as the hint, the kind of input its type asks for; grouped here
the way a caregiver looks for them, with units and errors in plain words."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

from pydantic.fields import FieldInfo

from appliance.settings import Settings, SettingsError, parse_value

Kind = Literal["choice", "number", "text", "list"]

GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Listening", "How the person wakes the appliance and talks to it.",
     ("wake_phrase", "wake_check", "barge_in", "end_of_speech_s", "learn_voice")),
    ("Safety", "What needs a yes before it happens.",
     ("allow_destructive", "confirm_timeout_s", "max_unconfirmed_per_minute")),
    ("Switch", "For a person who uses one or two switches instead of, or as well as, speech.",
     ("switch_talk", "switch_long_hold", "switch_hold_s", "switch_long_hold_s", "scan_mode",
      "scan_interval_s", "scan_loops", "scan_pause_first_s", "scan_hold_to_scan",
      "switch_debounce_ms", "switch_ignore_repeat_ms", "switch_keys", "switch_second_keys",
      "switch_device", "switch_grab")),
    ("Privacy", "What is kept, for how long, and what leaves the device.",
     ("transcript_days", "fleet_transcripts")),
    ("Language model", "Works out requests the built-in phrases do not cover, on this device.",
     ("llm", "ollama_host", "ollama_model", "llama_model")),
    ("Apps", "Applications the appliance keeps away from, and those it reads from the screen.",
     ("denylist_apps", "screen_read_apps")),
    ("Time", "How this page tells the time.", ("time_zone",)),
)

UNITS = {"_ms": "milliseconds", "_s": "seconds", "_days": "days", "_per_minute": "per minute"}


@dataclass
class Field:
    key: str
    label: str
    hint: str
    kind: Kind
    value: str
    choices: tuple[str, ...] = ()
    error: str = ""
    unit: str = ""


@dataclass
class Group:
    name: str
    hint: str
    fields: list[Field] = field(default_factory=list)
    now: str = ""  # what is actually in effect, where that can differ from what is set

    @property
    def anchor(self) -> str:
        return "group-" + self.name.lower().replace(" ", "-")


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple | list):
        return ", ".join(value)
    if isinstance(value, float):
        return _number(value)  # 30, not 30.0
    return str(value)


def _sentence(words: str) -> str:
    """`words` as a sentence: a capital first, a full stop last."""
    words = " ".join(words.split())
    return words[:1].upper() + words[1:] + ("" if not words or words.endswith(".") else ".")


def _number(value: float) -> str:
    return f"{value:g}"


def _kind(info: FieldInfo) -> tuple[Kind, tuple[str, ...]]:
    annotation = info.annotation
    if annotation is bool:
        return "choice", ("yes", "no")
    if get_origin(annotation) is Literal:
        return "choice", tuple(str(a) for a in get_args(annotation))
    if annotation in (int, float):
        return "number", ()
    if get_origin(annotation) is tuple:
        return "list", ()
    return "text", ()


def unit_of(key: str) -> str:
    return next((unit for end, unit in UNITS.items() if key.endswith(end)), "")


def _bound(info: FieldInfo, name: str) -> float | None:
    found = next((getattr(m, name) for m in info.metadata if hasattr(m, name)), None)
    return float(found) if found is not None else None


def plain_error(key: str, raw: str, said: str) -> str:
    """What is wrong with `raw` for `key`, as a caregiver would say it: the model's own
    reason (`said`) only where it is already in words, never a validator's wording."""
    info = Settings.model_fields[key]
    kind, choices = _kind(info)
    if kind == "choice":
        return f"Choose one of: {', '.join(c.replace('_', ' ') for c in choices)}."
    if kind == "number":
        whole = info.annotation is int
        like = f"like {_number(info.default)}"
        try:
            number = float(raw)
        except ValueError:
            return f"Write a whole number, {like}." if whole else f"Write a number, {like}."
        if whole and not number.is_integer():
            return f"Write a whole number, {like}."
        low, high = _bound(info, "ge"), _bound(info, "le")
        if low is not None and high is not None:
            unit = f" {unit_of(key)}" if unit_of(key) else ""
            return f"Choose from {_number(low)} to {_number(high)}{unit}."
    least = next((m.min_length for m in info.metadata if hasattr(m, "min_length")), None)
    if least and len(raw) < least:
        return f"Write at least {least} characters."
    return _sentence(said or "this value cannot be used")


def groups(settings: Settings, errors: dict[str, str] | None = None,
           said: dict[str, str] | None = None) -> list[Group]:
    """Every setting as a form field, in its group; `said` keeps what a caregiver typed where
    it was wrong."""
    out = [Group(name, hint) for name, hint, _ in GROUPS]
    placed = {key: out[i] for i, (_, _, keys) in enumerate(GROUPS) for key in keys}
    other = Group("Other", "Settings not yet given a group.")  # a new setting is never lost
    order = [key for _, _, keys in GROUPS for key in keys]
    order += [key for key in Settings.model_fields if key not in placed]
    for key in order:
        info = Settings.model_fields[key]
        kind, choices = _kind(info)
        value = (said or {}).get(key, _shown(getattr(settings, key)))
        placed.get(key, other).fields.append(Field(
            key=key, label=Settings.label(key), hint=_sentence(info.description or ""), kind=kind,
            value=value, choices=choices, unit=unit_of(key), error=(errors or {}).get(key, "")))
    return [group for group in (*out, other) if group.fields]


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
            errors[key] = plain_error(key, form[key].strip(),
                                      str(e).removeprefix(f"bad value for {key}: "))
            continue
        if value != getattr(settings, key):
            changed[key] = value
    return changed, errors
