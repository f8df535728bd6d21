"""The kiosk (`appliance run`): voice, switch and panel around one journal.

Real pipecat, webrtcvad, Whisper tiny.en and Piper on Piper-spoken WAV audio, the real Session on
the sim desktop and a real SQLite journal. The switch is pressed by the audio source at a point
in the file (this kernel has no /dev/input; the evdev side is tested in the QEMU VM by
test_switch_vm.py), and the panel is a recorder standing in for the GTK window (test_panel.py
covers the window itself).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from appliance.audit.timeline import timeline
from appliance.journal.application import Journal
from appliance.kiosk import Kiosk
from appliance.session import TurnReport
from appliance.session_sink import SessionSink
from appliance.settings import Settings
from appliance.switch.model import Press
from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, write_wav
from appliance.voice.commands import engines, run_voice
from appliance.wiring import build_planner, opened_desktop
from tests.cli_runner import APPLIANCE
from tests.integration.test_switch_talk import (
    SELECT,
    PressingSource,
    audio,
    scene,
    selected,
    silence,
)
from tests.recording_panel import RecordingPanel

__all__ = ["scene"]  # a fixture



class Loudspeaker:
    """Collects what the pipeline plays, reply by reply."""

    def __init__(self) -> None:
        self.replies: list[int] = []
        self._bytes = 0

    def play(self, pcm: bytes, rate: int) -> None:
        self._bytes += len(pcm)

    def reply_done(self) -> None:
        self.replies.append(self._bytes)
        self._bytes = 0


def kiosk_run(
    tmp_path: Path, scene: Path, pcm: Pcm, press_at_s: float, settings: dict[str, object]
) -> tuple[Kiosk, Journal, list[TurnReport], RecordingPanel, Loudspeaker]:
    journal = Journal(str(tmp_path / "journal.sqlite"))
    for key, value in settings.items():
        journal.change_setting(key, value, by="test")
    planner = build_planner(Settings(llm="off"))

    def desktop():  # type: ignore[no-untyped-def]
        return opened_desktop(f"sim:{scene}")

    kiosk = Kiosk(journal, desktop, planner, panel=False, switch=False)
    panel = RecordingPanel()
    kiosk.feed.panel = panel
    reports: list[TurnReport] = []
    sink = kiosk.sink(SessionSink(journal, desktop, planner, reports.append))
    speaker = Loudspeaker()

    def press(t: float) -> None:
        kiosk.on_switch(Press(1, "tap", t, 0.05))

    kiosk.start()
    try:
        run_voice(PressingSource(pcm, [(press_at_s, press)]), sink, engines("whisper"), speaker,
                  on_controls=kiosk.attach_voice)
    finally:
        kiosk.stop()
    return kiosk, journal, reports, panel, speaker


def test_a_tap_lets_the_next_words_through_and_the_panel_follows(
    tmp_path: Path, scene: Path
) -> None:
    pcm, _ = audio(SELECT)
    kiosk, journal, reports, panel, _ = kiosk_run(tmp_path, scene, pcm, 0.3, {})
    assert [r.decision for r in reports] == ["executed"]
    assert selected(scene) == ["Doctor"]
    assert journal.device("switch").presses == 1
    pressed = [r["detail"] for r in timeline(journal) if r["event"] == "SwitchPressed"]
    assert pressed == ["switch 1 tap: talk_start"]  # the caregiver's audit shows the press
    modes = [s.mode for s in panel.states]
    assert modes[0] == "idle"
    assert "listening" in modes
    thinking = next(s for s in panel.states if s.mode == "thinking" and s.transcript)
    assert "doctor" in thinking.transcript.lower()
    assert modes.index("listening") < panel.states.index(thinking)
    assert panel.states[-1].mode == "idle"
    assert "doctor" in panel.states[-1].reply.lower()
    assert not kiosk.controller.listening  # the voice side told the switch side it was done
    # The journal's head after the turn is on the panel: the witness a caregiver can note.
    head = journal.head()
    assert head.count > 0 and panel.states[-1].journal == f"Journal {head}"


def test_what_the_switch_says_is_spoken_by_the_voice_pipeline(
    tmp_path: Path, scene: Path
) -> None:
    pcm = Pcm(silence(3.0), PIPELINE_RATE)
    _, journal, reports, panel, speaker = kiosk_run(
        tmp_path, scene, pcm, 0.3, {"scan_mode": "auto"}
    )
    assert reports == []  # nothing was said to the appliance
    offers = [s for s in panel.states if s.mode == "scanning"]
    assert offers and offers[0].offer  # the press started scanning and offered an item
    assert panel.states[-1].mode == "scanning"  # speaking the offer did not end the scan's view
    # The offer was spoken through Piper in the pipeline, as a reply of its own.
    assert speaker.replies and speaker.replies[0] > PIPELINE_RATE // 10
    assert journal.device("switch").presses == 1


@pytest.mark.parametrize("flag", ["--no-switch", "--switch"])
def test_run_says_in_one_line_when_there_is_no_switch(
    tmp_path: Path, scene: Path, flag: str
) -> None:
    """This kernel has no input devices: the kiosk runs voice-only and says why, once."""
    wav = tmp_path / "quiet.wav"
    write_wav(wav, Pcm(silence(1.0), PIPELINE_RATE))
    # A real process, so that nothing (pytest's log capture included) hides a second line.
    result = subprocess.run(
        [str(APPLIANCE), "run", "--audio", str(wav), "--desktop", f"sim:{scene}", "--no-panel",
         flag, "--store", str(tmp_path / "j.sqlite")],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    notices = [ln for ln in result.stderr.splitlines() if "switch" in ln.lower()]
    if flag == "--switch":
        assert len(notices) == 1 and notices[0].startswith("No switch found"), result.stderr
    else:
        assert notices == []
