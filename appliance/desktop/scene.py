"""The sim desktop scene file (docs/architecture.md, "The sim desktop scene"): load, save."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from appliance.desktop.model import Risk


class ElementChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: str | float | None = None
    states: list[str] | None = None


class Effect(BaseModel):
    """What pressing an element changes elsewhere, by element name."""

    model_config = ConfigDict(extra="forbid")

    set: dict[str, ElementChange] = Field(default_factory=dict)


class SceneElement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str
    name: str = ""
    value: str | float | None = None
    states: list[str] = Field(default_factory=list)
    risk: Risk | None = None
    min: float | None = None
    max: float | None = None
    activations: int = 0
    effect: Effect | None = None
    delay: float = Field(default=0.0, ge=0.0, description="sim only: seconds an action takes")
    children: list[SceneElement] = Field(default_factory=list)


class SceneWindow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str
    states: list[str] = Field(default_factory=list)  # "active" marks the focused window
    children: list[SceneElement] = Field(default_factory=list)


class SceneApp(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    windows: list[SceneWindow] = Field(default_factory=list)


class Scene(BaseModel):
    model_config = ConfigDict(extra="forbid")

    applications: list[SceneApp] = Field(default_factory=list)
    launchable: list[SceneApp] = Field(default_factory=list)
    keystrokes: list[str] = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The scene in the file format: fields at their defaults are left out, as in the input."""
        return self.model_dump(mode="json", exclude_defaults=True)


class SceneError(Exception):
    """A scene file is missing or not a valid scene; the message is one line."""


def load_scene(path: Path) -> Scene:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SceneError(f"scene file not found: {path}") from None
    except UnicodeDecodeError as e:
        raise SceneError(
            f"scene {path} is not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start})"
        ) from None
    except OSError as e:
        raise SceneError(f"cannot read scene {path}: {e.strerror}") from None
    return parse_scene(text, source=str(path))


def parse_scene(text: str, source: str = "scene") -> Scene:
    try:
        return Scene.model_validate_json(text)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        raise SceneError(f"bad scene {source}: {where}: {first['msg']}") from None


def save_scene(scene: Scene, path: Path) -> None:
    """Write atomically, so a crash never leaves half a scene."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(scene.to_json(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
