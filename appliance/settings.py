"""Caregiver settings: what the appliance is allowed to do. Changed only through the journal.

The model is the one check of every value, whoever sets it: ranges keep the appliance usable
(a question that times out at once could never be answered), text has no control characters.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_origin
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from appliance.limits import MAX_SETTING_CHARS, control_characters

WakeCheckName = Literal["lenient", "strict", "command", "spotter"]
"""How sure the wake phrase must be: the rules are closed_whisper.WAKE_CHECKS."""

MIN_CONFIRM_TIMEOUT_S = 5.0
"""Time to hear a question and answer it by voice or switch; less makes every yes impossible."""


class Settings(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, allow_inf_nan=False, str_strip_whitespace=True
    )

    allow_destructive: bool = Field(
        default=False, title="Allow deleting",
        description="let deleting, erasing and factory resets through, each after a yes",
    )
    confirm_timeout_s: float = Field(
        default=30.0,
        ge=MIN_CONFIRM_TIMEOUT_S,
        le=3600.0, title="Time to answer a question",
        description="how long a question waits for yes or no before it gives up",
    )
    max_unconfirmed_per_minute: int = Field(
        default=10, ge=0, le=600, title="Actions before each needs a yes",
        description="how many actions a minute go ahead without asking; after that, each asks"
    )
    denylist_apps: tuple[str, ...] = Field(
        default=(), title="Applications it never uses",
        description="applications the appliance never opens or acts in",
    )
    screen_read_apps: tuple[str, ...] = Field(
        default=(), title="Applications read from the screen",
        description="applications whose windows are also read from the screen (OCR), for "
        "ones that tell the appliance too little about their buttons",
    )
    wake_phrase: str = Field(
        default="hey juniper", min_length=2, title="Wake phrase",
        description="what the person says first so the appliance listens",
    )
    wake_check: WakeCheckName = Field(
        default="spotter", title="How sure the wake phrase must be",
        description="lenient misses few (1 in 20) but talk in the room wakes it; strict is "
        "rarely woken by talk but misses 1 in 5 (more for some voices); command is strict "
        "unless a command follows; "
        "spotter, best for 'hey juniper', is command with a keyword spotter",
    )
    barge_in: bool = Field(
        default=False, title="Interrupt a reply",
        description="'stop', 'cancel', 'no' or the wake phrase cut a reply short (needs an "
        "echo-cancelled microphone); no: the microphone is muted while the appliance speaks",
    )
    end_of_speech_s: float = Field(
        default=0.0, ge=0.0, le=3.0, title="Wait after speech",
        description="seconds of silence that mean the person has finished speaking; 0: as "
        "long as their own pauses between words, learned when their voice was enrolled",
    )
    learn_voice: bool = Field(
        default=True, title="Learn from each yes",
        description="when the person answers yes to 'did you mean ...', keep how they said it "
        "(on this device only) so it is understood at once next time",
    )
    transcript_days: int = Field(
        default=0, ge=0, le=3650, title="Keep what was said for",
        description="how long the words said and typed are kept; 0 keeps them",
    )
    time_zone: str = Field(
        default="", title="Time zone",
        description="where the caregiver page's times and days are, as a name like "
        "Europe/London or America/New_York; empty: the device's own",
    )
    fleet_transcripts: bool = Field(
        default=False, title="Send what was said to the central server",
        description="send what was said and typed to the central server too; off: only what "
        "happened leaves (commands' outcomes, faults), never the words; secrets never",
    )
    llm: Literal["ollama", "llama-cpp", "off"] = Field(
        default="ollama", title="Language model",
        description="what works out requests the built-in phrases do not cover; off: only "
        "the built-in phrases"
    )
    ollama_host: str = Field(
        default="http://127.0.0.1:11434", title="Ollama address",
        description="where the Ollama model server answers; it must be on this device",
    )
    ollama_model: str = Field(
        default="qwen2.5-coder:1.5b", min_length=1, title="Ollama model",
        description="the model Ollama runs, by its Ollama name",
    )
    llama_model: Literal["qwen", "smollm2"] = Field(
        default="qwen", title="Built-in model",
        description="the model that comes with the appliance, used by llama-cpp"
    )
    # -- switch access (appliance/switch) ----------------------------------------------
    switch_device: str = Field(
        default="", title="Switch device",
        description="part of the switch's name, or its /dev/input path; empty: any device "
        "with the keys below"
    )
    switch_keys: tuple[str, ...] = Field(
        default=("KEY_SPACE", "BTN_0"), title="Keys of switch 1",
        description="switch 1 talks, selects and says yes; the key names it sends, separated "
        "by commas (KEY_SPACE is the space bar)"
    )
    switch_second_keys: tuple[str, ...] = Field(
        default=("KEY_ENTER", "BTN_1"), title="Keys of switch 2",
        description="switch 2 moves on and says no; the key names it sends, separated by commas"
    )
    switch_grab: bool = Field(
        default=True, title="Keep the switch to itself",
        description="other programs do not see the switch's presses",
    )
    switch_debounce_ms: float = Field(
        default=40.0, ge=0.0, le=1000.0, title="Ignore bounces shorter than",
        description="a switch that chatters as it closes counts once",
    )
    switch_ignore_repeat_ms: float = Field(
        default=250.0, ge=0.0, le=5000.0, title="Ignore a second press within",
        description="a press this soon after a release is ignored (for a tremor)"
    )
    switch_hold_s: float = Field(
        default=0.8, ge=0.2, le=10.0, title="A hold is at least",
        description="a press held this long is a hold, not a tap"
    )
    switch_long_hold_s: float = Field(
        default=2.5, ge=0.5, le=30.0, title="A long hold is at least",
        description="a press held this long cancels or undoes"
    )
    switch_talk: Literal["tap", "hold"] = Field(
        default="tap", title="To talk",
        description="tap: it listens until the person stops; hold: it listens while held"
    )
    switch_long_hold: Literal["cancel_or_undo", "cancel", "off"] = Field(
        default="cancel_or_undo", title="A long hold",
        description="what a long hold of switch 1 does"
    )
    scan_mode: Literal["off", "auto", "step"] = Field(
        default="off", title="Scanning",
        description="use the screen with switches alone: auto moves by itself (1 switch), "
        "step moves on switch 2"
    )
    scan_interval_s: float = Field(
        default=1.2, ge=0.3, le=10.0, title="Time on each item",
        description="how long auto scanning stays on each item",
    )
    scan_loops: int = Field(
        default=2, ge=1, le=10, title="Rounds before stopping",
        description="how many times auto scanning goes round a menu with no press",
    )
    scan_pause_first_s: float = Field(
        default=1.2, ge=0.0, le=10.0, title="Extra time on the first item",
        description="extra time on the first item of each menu"
    )
    scan_hold_to_scan: bool = Field(
        default=False, title="Scan only while held",
        description="scanning moves only while the switch is held; letting go selects"
    )

    @field_validator("wake_phrase", "ollama_host", "ollama_model", "switch_device")
    @classmethod
    def _plain_text(cls, text: str) -> str:
        return plain_text(text)

    @field_validator("denylist_apps", "screen_read_apps", "switch_keys", "switch_second_keys")
    @classmethod
    def _plain_items(cls, items: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = tuple(plain_text(item) for item in items)
        if any(not item for item in cleaned):
            raise ValueError("an empty name in the list")
        return cleaned

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, name: str) -> str:
        name = plain_text(name)
        try:
            if name:
                ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise ValueError("not a time zone this device knows; write one like "
                             "Europe/London") from None
        return name

    @field_validator("ollama_host")
    @classmethod
    def _loopback_only(cls, host: str) -> str:
        """Nothing leaves the device: the model server must be on this machine."""
        name = urlsplit(host if "://" in host else f"http://{host}").hostname or ""
        if name not in ("localhost", "::1") and not name.startswith("127."):
            raise ValueError("the model server must be on this device (127.0.0.1 or localhost)")
        return host

    @classmethod
    def keys(cls) -> list[str]:
        return list(cls.model_fields)

    @classmethod
    def label(cls, key: str) -> str:
        """What a caregiver calls the setting: its title, else its key in words."""
        return cls.model_fields[key].title or key.replace("_", " ").capitalize()

    @classmethod
    def from_stored(cls, values: dict[str, Any]) -> Settings:
        """Settings from the journal, where a value an earlier version allowed and this one
        refuses (confirm_timeout_s 0) is read as its default, never a failure of every turn."""
        try:
            return cls.model_validate(values)
        except ValidationError as e:
            refused = {str(err["loc"][0]) for err in e.errors() if err["loc"]}
            kept = {k: v for k, v in values.items() if k not in refused and k in cls.model_fields}
            return cls.model_validate(kept)


def plain_text(text: str) -> str:
    """`text` stripped, if it is short and has no control characters; else ValueError."""
    controls = control_characters(text)
    if controls:
        raise ValueError(f"control character {controls[0]!r} is not allowed")
    text = text.strip()
    if len(text) > MAX_SETTING_CHARS:
        raise ValueError(f"longer than {MAX_SETTING_CHARS} characters")
    return text


class SettingsError(Exception):
    """An unknown setting or a value it cannot take; the message is one line."""


def _is_list(key: str) -> bool:
    return get_origin(Settings.model_fields[key].annotation) is tuple


def _list_value(key: str, raw: str) -> tuple[str, ...]:
    """A JSON list (["Radio", "Calendar"]) or a comma list (Radio, Calendar) of names."""
    text = raw.strip()
    if text.startswith("{"):
        raise SettingsError(f'bad value for {key}: write ["Radio", "Calendar"] or Radio,Calendar')
    if not text.startswith("["):
        return tuple(part.strip() for part in text.split(",") if part.strip())
    try:
        items = json.loads(text)
    except json.JSONDecodeError:
        raise SettingsError(
            f'bad value for {key}: not a JSON list; write ["Radio", "Calendar"] or Radio,Calendar'
        ) from None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise SettingsError(f"bad value for {key}: the list must hold names (text)")
    return tuple(items)


def parse_value(key: str, raw: str) -> Any:
    """Turn a caregiver's text (from the CLI or a web form) into a validated value."""
    if key not in Settings.model_fields:
        raise SettingsError(f"unknown setting {key!r}; known: {', '.join(Settings.keys())}")
    value: Any = _list_value(key, raw) if _is_list(key) else raw
    try:
        checked = Settings.model_validate({key: value})
    except ValidationError as e:
        raise SettingsError(f"bad value for {key}: {_one_line(e)}") from None
    return getattr(checked, key)


def caregiver_name(raw: str) -> str:
    """Who made a change, as the journal records it: a name, stripped, never empty."""
    try:
        name = plain_text(raw)
    except ValueError as e:
        raise SettingsError(f"bad name for --by: {e}") from None
    if not name:
        raise SettingsError("--by needs the name of who is making the change")
    return name


def _one_line(e: ValidationError) -> str:
    msg = str(e.errors()[0]["msg"]).removeprefix("Value error, ")
    return " ".join(msg.split())
