"""AT-SPI role and state numbers to the names the snapshot model uses (AT-SPI's own names)."""

from __future__ import annotations

from functools import cache

from appliance.desktop.atspi.gi_modules import Atspi

# Shown as their absence ("insensitive", "invisible") in the model, as the sim scenes do.
POSITIVE_ONLY = frozenset({"sensitive", "enabled", "showing", "visible"})


@cache
def role_name(role: int) -> str:
    try:
        return str(Atspi.role_get_name(Atspi.Role(role)))
    except (ValueError, TypeError):
        return "unknown"


@cache
def _state_name(bit: int) -> str:
    try:
        return str(Atspi.StateType(bit).value_nick).replace("-", " ")
    except (ValueError, TypeError):
        return f"state {bit}"


def state_names(words: list[int] | tuple[int, ...]) -> frozenset[str]:
    """AT-SPI's two-word state bitfield as model state names."""
    raw = {
        _state_name(i * 32 + bit)
        for i, word in enumerate(words)
        for bit in range(32)
        if word & (1 << bit)
    }
    states = {s for s in raw if s not in POSITIVE_ONLY}
    if "sensitive" not in raw and "enabled" not in raw:
        states.add("insensitive")
    if "showing" not in raw or "visible" not in raw:
        states.add("invisible")
    return frozenset(states)


def has_state(words: list[int] | tuple[int, ...], name: str) -> bool:
    bit = int(getattr(Atspi.StateType, name.upper().replace(" ", "_")))
    return bool(words[bit // 32] & (1 << (bit % 32))) if bit // 32 < len(words) else False


def with_state(words: list[int] | tuple[int, ...], name: str) -> tuple[int, ...]:
    """The bitfield with one more state set."""
    bit = int(getattr(Atspi.StateType, name.upper().replace(" ", "_")))
    out = list(words) + [0] * max(0, bit // 32 + 1 - len(words))
    out[bit // 32] |= 1 << (bit % 32)
    return tuple(out)
