"""The sim desktop scene file (docs/architecture.md, "The sim desktop scene"): load, save."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from appliance.desktop.model import Risk
from appliance.limits import MAX_SCENE_BYTES


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
    """A scene file is missing, not a valid scene, or cannot be written back; one line."""


_NOT_REGULAR = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(path: Path, mode: int) -> SceneError:
    kind = next((name for test, name in _NOT_REGULAR if test(mode)), "an unknown kind")
    return SceneError(f"the scene {path} is not a regular file ({kind}); give a scene .json file")


def _scene_bytes(path: Path) -> bytes:
    """The file's bytes, refused unless it is a regular file of at most MAX_SCENE_BYTES."""
    try:
        # stat, not open: opening a named pipe waits for a writer, a device may act on open.
        found = path.stat()
    except FileNotFoundError:
        raise SceneError(f"scene file not found: {path}") from None
    except OSError as e:
        raise SceneError(f"cannot read scene {path}: {e.strerror}") from None
    if not stat.S_ISREG(found.st_mode):
        raise _not_regular(path, found.st_mode)
    try:
        # O_NONBLOCK: should a pipe take the file's place after the stat, the open still returns.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise SceneError(f"scene file not found: {path}") from None
    except OSError as e:
        raise SceneError(f"cannot read scene {path}: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        opened = os.fstat(f.fileno())
        if not stat.S_ISREG(opened.st_mode):
            raise _not_regular(path, opened.st_mode)
        try:
            # One byte over the limit is enough to know; st_size is not trusted (a file may grow,
            # /proc says 0), so the read itself is what is bounded.
            data = f.read(MAX_SCENE_BYTES + 1)
        except OSError as e:
            raise SceneError(f"cannot read scene {path}: {e.strerror}") from None
    if len(data) > MAX_SCENE_BYTES:
        raise SceneError(
            f"the scene {path} is too big for a scene file (more than "
            f"{MAX_SCENE_BYTES // (1024 * 1024)} MiB)"
        )
    return data


def load_scene(path: Path) -> Scene:
    """The scene in the file at `path`; anything that is not one is a one-line SceneError."""
    data = _scene_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SceneError(
            f"scene {path} is not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start})"
        ) from None
    return parse_scene(text, source=str(path))


def parse_scene(text: str, source: str = "scene") -> Scene:
    try:
        return Scene.model_validate_json(text)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        raise SceneError(f"bad scene {source}: {where}: {first['msg']}") from None


def _unwritable(where: Path) -> str:
    try:
        read_only = bool(os.statvfs(where).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return "read-only file system" if read_only else "permission denied"


def check_can_save(path: Path) -> None:
    """SceneError unless the scene at `path` can be written back: the file and its folder
    (the new scene is a temporary file there, renamed over the old one)."""
    target = path.resolve()
    for where, mode in ((target, os.W_OK), (target.parent, os.W_OK | os.X_OK)):
        if not os.access(where, mode):
            why = _unwritable(where) + ("" if where == target else f": the folder {where}")
            raise SceneError(
                f"the scene file {path} cannot be written back ({why}), so nothing was done"
            )


def save_scene(scene: Scene, path: Path) -> None:
    """Write atomically (a temporary file renamed over it), so a crash never leaves half a
    scene; SceneError names the file and why it could not be written."""
    target = path.resolve()  # a link to the scene keeps pointing at it
    text = json.dumps(scene.to_json(), indent=2) + "\n"
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mode = 0o644
    temporary: str | None = None
    try:
        fd, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), mode)  # mkstemp makes it private; the scene keeps its mode
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, target)
    except OSError as e:
        if temporary is not None:
            with suppress(OSError):
                os.unlink(temporary)
        raise SceneError(
            f"the scene file {path} could not be written back: {e.strerror or e}"
        ) from None
