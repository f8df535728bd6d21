"""What may cut the appliance short while it speaks: "stop", "cancel", "no", or the wake phrase.

Anything else heard over a reply is ignored, as the muted microphone ignored it before: what
the echo canceller leaves of the appliance's own voice must never become a turn.
"""

from __future__ import annotations

from typing import Literal

from rapidfuzz import fuzz

from appliance.voice.hearing.wake import WakeGate, words

STOP_WORDS = frozenset({"stop", "cancel", "no"})
# Said around a stop word without changing it ("okay stop", "no stop it", "cancel that please").
FILLERS = frozenset({"okay", "ok", "please", "it", "that", "now", "oh", "just"})
MAX_WORDS = 4  # a longer sentence with "no" in it is speech, not a stop
SHORT_WORDS = 3
# What is left of the echo over a short "stop" makes tiny.en hear "drop" or "top": one word that
# close to "stop" or "cancel" stops too. Stopping for nothing costs a repeat; not stopping is
# the failure barge-in is for. ("no" is too short to match loosely.)
NEAR_SCORE = 75.0
NEAR_WORDS = ("stop", "cancel")
WAKE_SCORE = 80.0


def barge_in(text: str, gate: WakeGate) -> Literal["stop", "wake"] | None:
    """"stop" if the text is only a stop word (and fillers); "wake" if it starts with the wake
    phrase; else None."""
    ws = words(text)
    # "Hey juniper, stop" is a stop too, not a command.
    rest = gate.strip_wake_start(ws)
    if 0 < len(rest) <= MAX_WORDS and STOP_WORDS & set(rest) and set(rest) <= STOP_WORDS | FILLERS:
        return "stop"
    # Whisper may add a word or two to a short "stop" ("you should stop"); what ends in a stop
    # word and is that short is one.
    if 0 < len(rest) <= SHORT_WORDS and rest[-1] in STOP_WORDS:
        return "stop"
    if len(ws) == 1 and any(fuzz.ratio(ws[0], w) >= NEAR_SCORE for w in NEAR_WORDS):
        return "stop"
    # The whole phrase, first: what is left of the echo, heard with the wake phrase in Whisper's
    # prompt, can come out as "Juniper." alone, which the gate's looser match would take.
    n = len(gate.phrase_words)
    if len(ws) >= n and fuzz.ratio(" ".join(ws[:n]), " ".join(gate.phrase_words)) >= WAKE_SCORE:
        return "wake"
    return None
