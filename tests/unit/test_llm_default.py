"""The language model in effect: the device's own when no caregiver chose one, said once."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from appliance.intents.llm_backend import NOT_ANSWERING
from appliance.intents.llm_default import installed_llm
from appliance.intents.llm_models import QWEN_CODER_1_5B
from appliance.settings import Settings
from tests.cli_runner import Kiosk, run
from tests.scenes import messages

UNKNOWN = "frobnicate the widget gently"


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on: an Ollama that is not installed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.fixture
def listening_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.fixture
def no_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    models = tmp_path / "models"
    models.mkdir()
    monkeypatch.setenv("APPLIANCE_MODELS_DIR", str(models))
    return models


def _set(kiosk: Kiosk, key: str, value: str) -> None:
    done = run("settings", "set", key, value, "--by", "carol", "--store", kiosk.store)
    assert done.code == 0, done.err


def test_without_a_model_an_unknown_command_is_not_told_a_model_is_not_answering(
    tmp_path: Path, closed_port: int, no_models: Path
) -> None:
    kiosk = Kiosk(tmp_path, messages())
    _set(kiosk, "ollama_host", f"http://127.0.0.1:{closed_port}")  # not the `llm` setting
    said = kiosk.say(UNKNOWN)
    assert NOT_ANSWERING not in said["notices"] and said["planner"] == "grammar", said
    assert kiosk.say("tick urgent")["decision"] == "executed"


def test_a_caregivers_choice_of_ollama_is_kept_and_says_it_is_not_answering(
    tmp_path: Path, closed_port: int, no_models: Path
) -> None:
    kiosk = Kiosk(tmp_path, messages())
    _set(kiosk, "ollama_host", f"http://127.0.0.1:{closed_port}")
    _set(kiosk, "llm", "ollama")
    assert NOT_ANSWERING in kiosk.say(UNKNOWN)["notices"]


def test_the_default_is_the_model_the_device_has(
    listening_port: int, closed_port: int, no_models: Path
) -> None:
    pytest.importorskip("ollama", reason="the llm extra is not installed")
    assert installed_llm(Settings(ollama_host=f"http://127.0.0.1:{listening_port}")) == "ollama"
    nothing = Settings(ollama_host=f"http://127.0.0.1:{closed_port}")
    assert installed_llm(nothing) == "off"
    (no_models / QWEN_CODER_1_5B.filename).write_bytes(b"GGUF")
    pytest.importorskip("llama_cpp", reason="the llm extra is not installed")
    assert installed_llm(nothing) == "llama-cpp"
    assert installed_llm(nothing.model_copy(update={"llama_model": "smollm2"})) == "off"


def test_the_demo_says_once_which_model_it_uses(tmp_path: Path) -> None:
    shown = run("demo", "--text", "--store", str(tmp_path / "journal.sqlite"))
    assert shown.code == 0, shown.err
    said = [line for line in shown.out.splitlines() if "anguage model" in line]
    assert len(said) == 1, shown.out


def test_the_kiosk_says_once_which_model_it_uses(tmp_path: Path) -> None:
    import wave

    silence = tmp_path / "silence.wav"
    with wave.open(str(silence), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"\0\0" * 16000)
    kiosk = Kiosk(tmp_path, messages())
    ran = run("run", "--audio", str(silence), "--desktop", f"sim:{kiosk.scene}",
              "--store", kiosk.store, "--no-panel", "--no-switch")
    assert ran.code == 0, ran.err
    assert len([line for line in ran.err.splitlines() if "anguage model" in line]) == 1, ran.err
    _set(kiosk, "llm", "off")
    chosen = run("run", "--audio", str(silence), "--desktop", f"sim:{kiosk.scene}",
                 "--store", kiosk.store, "--no-panel", "--no-switch")
    assert "anguage model" not in chosen.err, "a caregiver's choice needs no notice"
