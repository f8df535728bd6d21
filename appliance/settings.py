"""Caregiver settings: what the appliance is allowed to do. Changed only through the journal."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    allow_destructive: bool = Field(
        default=False, description="let deleting, erasing and factory resets through (confirmed)"
    )
    confirm_timeout_s: float = Field(
        default=30.0, ge=0.0, le=3600.0, description="how long a question waits for yes or no"
    )
    max_unconfirmed_per_minute: int = Field(
        default=10, ge=0, le=600, description="actions a minute before each one needs a yes"
    )
    denylist_apps: tuple[str, ...] = Field(
        default=(), description="applications the appliance never opens or acts in"
    )
    wake_phrase: str = Field(default="hey juniper", min_length=2)
    llm: Literal["ollama", "llama-cpp", "off"] = Field(
        default="ollama", description="the planner behind the grammar for free-form requests"
    )
    ollama_host: str = Field(default="http://127.0.0.1:11434", description="loopback only")
    ollama_model: str = Field(default="qwen2.5-coder:1.5b", min_length=1)
    llama_model: Literal["qwen", "smollm2"] = Field(
        default="qwen", description="packaged GGUF model for the embedded backend"
    )
    # -- switch access (appliance/switch) ----------------------------------------------
    switch_device: str = Field(
        default="", description="a name part or /dev/input path; empty: any device with the keys"
    )
    switch_keys: tuple[str, ...] = Field(
        default=("KEY_SPACE", "BTN_0"), description="evdev keys of switch 1 (talk, select, yes)"
    )
    switch_second_keys: tuple[str, ...] = Field(
        default=("KEY_ENTER", "BTN_1"), description="evdev key codes of switch 2 (next, no)"
    )
    switch_grab: bool = Field(default=True, description="take the switch device for ourselves")
    switch_debounce_ms: float = Field(default=40.0, ge=0.0, le=1000.0)
    switch_ignore_repeat_ms: float = Field(
        default=250.0, ge=0.0, le=5000.0, description="a press this soon after a release is ignored"
    )
    switch_hold_s: float = Field(
        default=0.8, gt=0.0, le=10.0, description="a press held this long is a hold, not a tap"
    )
    switch_long_hold_s: float = Field(
        default=2.5, gt=0.0, le=30.0, description="a press held this long cancels or undoes"
    )
    switch_talk: Literal["tap", "hold"] = Field(
        default="tap", description="tap: listen until you stop; hold: listen while held"
    )
    switch_long_hold: Literal["cancel_or_undo", "cancel", "off"] = Field(
        default="cancel_or_undo", description="what a long hold does"
    )
    scan_mode: Literal["off", "auto", "step"] = Field(
        default="off", description="operate with the switch alone: auto-scan (1 switch) or step (2)"
    )
    scan_interval_s: float = Field(default=1.2, ge=0.3, le=10.0)
    scan_loops: int = Field(default=2, ge=1, le=10)
    scan_pause_first_s: float = Field(
        default=1.2, ge=0.0, le=10.0, description="extra time on the first item of each menu"
    )
    scan_hold_to_scan: bool = Field(
        default=False, description="scanning moves only while the switch is held; release selects"
    )

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


class SettingsError(Exception):
    """An unknown setting or a value it cannot take; the message is one line."""


def parse_value(key: str, raw: str) -> Any:
    """Turn a caregiver's text (from the CLI or a web form) into a validated value."""
    if key not in Settings.model_fields:
        raise SettingsError(f"unknown setting {key!r}; known: {', '.join(Settings.keys())}")
    value: Any = raw
    if key in ("denylist_apps", "switch_keys", "switch_second_keys"):
        value = tuple(a.strip() for a in raw.split(",") if a.strip())
    try:
        checked = Settings.model_validate({key: value})
    except ValidationError as e:
        raise SettingsError(f"bad value for {key}: {e.errors()[0]['msg']}") from None
    return getattr(checked, key)
