"""Spoken commands to real Debian applications, heard and done as the kiosk does it.

Synthesized speech (Piper and espeak-ng's en-us, tuning voices) into a WAV, run through
`appliance run --audio` with the live screen read over AT-SPI, so the closed set is built from
the application's own names: yad's form and slider (GTK3) and FeatherPad (Qt 5), each judged by
what the application itself reports (lab/appliance_lab/bench/spoken/apps.py; `appliance bench
voice-apps` runs every voice of both parts).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from appliance_lab.bench.desktop_real import app_session
from appliance_lab.bench.spoken.apps import TUNED, Outcome, SpokenCase, run_case
from appliance_lab.bench.spoken.corpus import load_part
from appliance_lab.bench.spoken.voices import Voice

PIPER, ESPEAK = load_part("tune").voices[:2]
CASES = {case.name: case for case in TUNED}


@pytest.fixture(scope="module")
def home() -> Iterator[Path]:
    with app_session() as path:
        yield path


def said(case: SpokenCase, voice: Voice, home: Path) -> Outcome:
    outcome = run_case(case, voice, home)
    assert outcome.kind == "right", outcome.as_json()
    return outcome


@pytest.mark.parametrize(
    ("case", "voice"),
    [("tick a box", PIPER), ("choose an option", ESPEAK), ("a number to a slider", PIPER)],
    ids=lambda v: v if isinstance(v, str) else v.label,
)
def test_a_command_said_to_a_real_gtk_app_is_heard_closed_and_done(
    case: str, voice: Voice, home: Path
) -> None:
    """Each command a sentence of the app's own screen (a check box, a combo box's option, a
    GtkScale said a number), done, and then OK pressed: yad prints the changed field."""
    outcome = said(CASES[case], voice, home)
    assert outcome.engines == ["closed:whisper", "closed:whisper"], outcome.as_json()
    assert outcome.decisions == ["executed", "executed"]


def test_dictation_goes_open_and_the_shortcut_closed_in_a_real_qt_editor(home: Path) -> None:
    """Free text is no sentence of any screen: open Whisper types it. "press control s" is one
    (it was not listed before, and was heard as "press control esc"); its "s" rhymes with "f"
    and "x", so unless it clearly won it is asked about, and the "yes" said next saves."""
    case = CASES["dictation, then save"]
    outcome = said(SpokenCase(case.name, case.app, (*case.commands, "yes"), case.wanted),
                   ESPEAK, home)
    assert outcome.engines[:2] == ["open:whisper", "closed:whisper"], outcome.as_json()
    assert outcome.heard[1] == "press control s"
    asked = outcome.decisions[1] == "needs_confirmation"
    assert asked or outcome.decisions[1] == "executed", outcome.as_json()
    if asked:
        assert outcome.decisions[2] == "executed", outcome.as_json()
