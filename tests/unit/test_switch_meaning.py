"""Press meaning: what each gesture on each switch means at each moment, under the settings."""

from __future__ import annotations

from typing import Any

import pytest

from appliance.settings import Settings
from appliance.switch.meaning import Meaning, Moment, meaning_of
from appliance.switch.model import Edge, Press

TAP1 = Press(1, "tap", 10.0, 0.2)
TAP2 = Press(2, "tap", 10.0, 0.2)
HOLD1 = Press(1, "hold", 10.0, 0.8)
LONG1 = Press(1, "long_hold", 10.0, 2.5)
LONG2 = Press(2, "long_hold", 10.0, 2.5)
DOWN1 = Edge(1, True, 10.0)
UP1 = Edge(1, False, 10.0)
UP2 = Edge(2, False, 10.0)

# (press, moment, settings changed from the defaults, meaning)
TABLE: list[tuple[Press | Edge, Moment, dict[str, Any], Meaning]] = [
    # idle: push-to-talk by tap, or by hold; a scan mode makes a tap start scanning
    (TAP1, "idle", {}, "talk_start"),
    (TAP1, "speaking", {}, "talk_start"),
    (TAP2, "idle", {}, "none"),
    (HOLD1, "idle", {}, "none"),
    (TAP1, "idle", {"switch_talk": "hold"}, "none"),
    (HOLD1, "idle", {"switch_talk": "hold"}, "talk_start"),
    (Press(2, "hold", 10.0, 0.8), "idle", {"switch_talk": "hold"}, "none"),
    (TAP1, "idle", {"scan_mode": "auto"}, "scan_start"),
    (TAP2, "idle", {"scan_mode": "step"}, "scan_start"),
    (HOLD1, "idle", {"scan_mode": "auto", "switch_talk": "hold"}, "talk_start"),
    # listening
    (TAP1, "listening", {}, "talk_stop"),
    (TAP2, "listening", {}, "cancel"),
    (LONG1, "listening", {}, "cancel"),
    (UP1, "listening", {"switch_talk": "hold"}, "talk_stop"),
    (UP1, "listening", {}, "none"),
    (UP2, "listening", {"switch_talk": "hold"}, "none"),
    (LONG1, "listening", {"switch_talk": "hold"}, "none"),
    # a yes/no question: switch 1 yes, switch 2 no; a hold answers nothing
    (TAP1, "confirming", {}, "yes"),
    (TAP2, "confirming", {}, "no"),
    (HOLD1, "confirming", {}, "none"),
    (LONG1, "confirming", {}, "cancel"),
    (LONG2, "confirming", {"switch_long_hold": "cancel"}, "cancel"),
    (LONG1, "confirming", {"switch_long_hold": "off"}, "none"),
    (TAP1, "confirming", {"scan_mode": "auto"}, "yes"),
    # a which-one question: its options are scanned
    (TAP1, "choosing", {}, "scan_start"),
    (TAP2, "choosing", {}, "no"),
    (LONG1, "choosing", {}, "cancel"),
    # long hold with nothing pending
    (LONG1, "idle", {}, "undo"),
    (LONG2, "idle", {}, "undo"),
    (LONG1, "idle", {"switch_long_hold": "cancel"}, "none"),
    (LONG1, "idle", {"switch_long_hold": "off"}, "none"),
    # scanning: auto and step
    (TAP1, "scanning", {"scan_mode": "auto"}, "scan_select"),
    (TAP2, "scanning", {"scan_mode": "auto"}, "scan_next"),
    (TAP1, "scanning", {"scan_mode": "step"}, "scan_select"),
    (TAP2, "scanning", {"scan_mode": "step"}, "scan_next"),
    (HOLD1, "scanning", {"scan_mode": "auto"}, "none"),
    (LONG1, "scanning", {"scan_mode": "auto"}, "scan_stop"),
    (LONG1, "scanning", {"scan_mode": "auto", "switch_long_hold": "off"}, "none"),
    # hold-to-scan: the edges of switch 1 drive it, its presses only name what happened
    (DOWN1, "scanning", {"scan_mode": "auto", "scan_hold_to_scan": True}, "scan_hold"),
    (UP1, "scanning", {"scan_mode": "auto", "scan_hold_to_scan": True}, "scan_select"),
    (HOLD1, "scanning", {"scan_mode": "auto", "scan_hold_to_scan": True}, "scan_hold"),
    (LONG1, "scanning", {"scan_mode": "auto", "scan_hold_to_scan": True}, "scan_hold"),
    (TAP1, "scanning", {"scan_mode": "auto", "scan_hold_to_scan": True}, "scan_select"),
    (TAP2, "scanning", {"scan_mode": "auto", "scan_hold_to_scan": True}, "scan_next"),
    (LONG2, "scanning", {"scan_mode": "auto", "scan_hold_to_scan": True}, "scan_stop"),
    # edges mean nothing elsewhere
    (DOWN1, "idle", {"switch_talk": "hold"}, "none"),
    (UP1, "scanning", {"scan_mode": "auto"}, "none"),
    (DOWN1, "confirming", {}, "none"),
]


@pytest.mark.parametrize(("item", "moment", "changes", "meaning"), TABLE)
def test_meaning(
    item: Press | Edge, moment: Moment, changes: dict[str, Any], meaning: Meaning
) -> None:
    assert meaning_of(item, moment, Settings(**changes)) == meaning


def test_only_taps_answer_questions() -> None:
    """A hold may still become a long hold (cancel): it must never say yes or no."""
    for moment in ("confirming", "choosing"):
        for switch in (1, 2):
            hold = Press(switch, "hold", 0.0, 0.8)
            assert meaning_of(hold, moment, Settings()) == "none"
