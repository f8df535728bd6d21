"""The scenes bundled with the appliance (the demo's and the voice bench's sim desktop)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def bundled_scene(name: str = "messages.json") -> Path:
    """The path of a bundled scene file."""
    return Path(str(resources.files("appliance.scenes").joinpath(name)))
