"""What a switch press means at this moment: a pure table, the same for every kiosk.

Only taps answer questions or select: a hold is on its way to becoming a long hold (cancel or
undo), so acting on it would confirm something the user meant to cancel.
"""

from __future__ import annotations

from typing import Literal

from appliance.settings import Settings
from appliance.switch.model import Edge, Press

Moment = Literal[
    "idle", "listening", "speaking", "confirming", "choosing", "scanning", "enrolling"
]
"""confirming: a yes/no question is open; choosing: a which-one question is open; enrolling:
the person's voice is being learned (taking phrases, or paused)."""

Meaning = Literal[
    "talk_start",
    "talk_stop",
    "yes",
    "no",
    "cancel",
    "undo",
    "scan_start",
    "scan_next",
    "scan_select",
    "scan_hold",
    "scan_stop",
    "enrol_pause",
    "enrol_skip",
    "enrol_stop",
    "none",
]
"""enrol_pause pauses learning the voice, or goes on when it is paused."""


def meaning_of(item: Press | Edge, moment: Moment, settings: Settings) -> Meaning:
    """What a press (or an accepted down/up edge) means in `moment` under `settings`."""
    if isinstance(item, Edge):
        return _edge(item, moment, settings)
    if moment == "scanning" and settings.scan_hold_to_scan and item.switch == 1:
        # The edges drive hold-to-scan; the press only names what its release did.
        return "scan_select" if item.gesture == "tap" else "scan_hold"
    if item.gesture == "long_hold":
        return _long_hold(moment, settings)
    if item.gesture == "hold":
        talk_hold = settings.switch_talk == "hold" and item.switch == 1
        return "talk_start" if talk_hold and moment in ("idle", "speaking") else "none"
    return _tap(item.switch, moment, settings)


def _tap(switch: int, moment: Moment, settings: Settings) -> Meaning:
    first = switch == 1
    match moment:
        case "scanning":
            return "scan_select" if first else "scan_next"
        case "confirming":
            return "yes" if first else "no"
        case "choosing":  # the options are offered by scanning them
            return "scan_start" if first else "no"
        case "listening":
            return "talk_stop" if first else "cancel"
        case "enrolling" if settings.scan_mode == "off":
            return "enrol_pause" if first else "enrol_skip"
    # idle, speaking (a press interrupts the voice), or enrolling with scanning on (its menu)
    if settings.scan_mode != "off":
        return "scan_start"
    if first and settings.switch_talk == "tap":
        return "talk_start"
    return "none"


def _long_hold(moment: Moment, settings: Settings) -> Meaning:
    if settings.switch_long_hold == "off":
        return "none"
    if moment == "listening" and settings.switch_talk == "hold":
        return "none"  # still talking: a long sentence is not a cancel
    if moment == "scanning":
        return "scan_stop"
    if moment == "enrolling":
        return "enrol_stop"
    if moment in ("confirming", "choosing", "listening"):
        return "cancel"
    return "undo" if settings.switch_long_hold == "cancel_or_undo" else "none"


def _edge(edge: Edge, moment: Moment, settings: Settings) -> Meaning:
    if edge.switch != 1:
        return "none"
    if moment == "listening" and settings.switch_talk == "hold" and not edge.down:
        return "talk_stop"
    if moment == "scanning" and settings.scan_hold_to_scan:
        return "scan_hold" if edge.down else "scan_select"
    return "none"
