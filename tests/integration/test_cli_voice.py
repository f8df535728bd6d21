"""The voice commands of the CLI, end to end with the real models: Piper makes the speech,
pipecat + webrtcvad + Whisper tiny.en hear it, the turn acts on a sim scene, the journal records."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import pytest

from tests.cli_runner import Kiosk, run
from tests.scenes import messages


@pytest.fixture(scope="module")
def spoken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from appliance.voice.commands import synthesize_demo_audio

    out = tmp_path_factory.mktemp("audio") / "session.wav"
    lines = ["hey juniper, select doctor", "this is not for you", "hey juniper, click send", "yes"]
    return synthesize_demo_audio(lines, out)


def test_run_audio_prints_one_json_object_per_turn(tmp_path: Path, spoken: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    replies = tmp_path / "replies.wav"
    r = run("run", "--audio", str(spoken), "--desktop", f"sim:{kiosk.scene}",
            "--store", kiosk.store, "--speak-to", str(replies), "--json")
    assert r.code == 0, r.err
    turns = [json.loads(line) for line in r.out.splitlines() if line.startswith("{")]
    assert [t["decision"] for t in turns] == ["executed", "needs_confirmation", "executed"]
    assert kiosk.element("Doctor")["states"] == ["selected"]
    assert kiosk.element("Send")["activations"] == 1
    with wave.open(str(replies)) as w:
        assert w.getnframes() > w.getframerate()  # the replies were spoken into the file
    timeline = run("audit", "--json", "--store", kiosk.store).json()
    heard = [r["data"]["timings"] for r in timeline if r["event"] in ("Heard", "Answered")]
    assert heard and all("speech_end" in t for t in heard), "stage timings reach the journal"
    ignored = [r for r in timeline if r["event"] == "SpeechIgnored"]
    assert ignored and ignored[0]["data"]["count"] >= 1, "speech without the wake phrase counted"
    assert not any("not for you" in json.dumps(r) for r in timeline), "and never transcribed"


def test_listen_reports_transcripts_and_timings(spoken: Path) -> None:
    r = run("listen", str(spoken), "--json")
    assert r.code == 0, r.err
    segments = r.json()
    assert any("doctor" in s["text"].lower() for s in segments)
    assert all("timings" in s for s in segments)


def test_spoken_demo_runs_offline_and_prints_the_timeline(tmp_path: Path) -> None:
    r = run("demo", "--keep", str(tmp_path))
    assert r.code == 0, r.err
    assert "Typed hello grandma into Message." in r.out
    assert "[undone]" in r.out and "Hash chain: intact." in r.out
    assert (tmp_path / "replies.wav").stat().st_size > 44
    # The switch part: scanning reached Send, a press chose it, a press said yes.
    switch = r.out[r.out.index("A switch user"):]
    assert "appliance: Send needs a yes." in switch and "appliance: Pressed Send." in switch
    assert "switch 1 tap: scan_select: Send" in r.out and "switch 1 tap: yes" in r.out


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.write_bytes(b""), "empty"),
        (lambda p: p.write_text("not audio"), "not a WAV"),
        (lambda p: None, "not found"),
    ],
)
def test_bad_audio_is_one_line(tmp_path: Path, make: object, message: str) -> None:
    path = tmp_path / "in.wav"
    make(path)  # type: ignore[operator]
    r = run("run", "--audio", str(path), "--desktop", "sim:unused.json",
            "--store", str(tmp_path / "j.sqlite"))
    assert r.code != 0
    assert len(r.err.strip().splitlines()) == 1 and message.lower() in r.err.lower(), r.err


def test_no_microphone_is_one_line(tmp_path: Path) -> None:
    """There is no audio device on this machine: the real pyaudio probe fails cleanly."""
    import subprocess

    from tests.cli_runner import APPLIANCE

    scene = tmp_path / "s.json"
    scene.write_text(json.dumps(messages()))
    done = subprocess.run([str(APPLIANCE), "run", "--desktop", f"sim:{scene}", "--store",
                           str(tmp_path / "j.sqlite")], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert done.stderr.strip() == "appliance: No microphone found."
