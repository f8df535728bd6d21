"""Checks on where `--speak-to` will write, made before anything is heard or done."""

from __future__ import annotations

import os
from pathlib import Path

from appliance.voice.errors import VoiceError


def check_speak_to(path: Path) -> None:
    """VoiceError unless `path` can become the replies' WAV file (the folders may be made)."""
    if path.is_dir():
        raise VoiceError(f"--speak-to {path} is a folder; give a file name such as replies.wav")
    if path.exists():
        if not path.is_file():
            raise VoiceError(f"--speak-to {path} is not a regular file")
        if not os.access(path, os.W_OK):
            raise VoiceError(f"--speak-to {path} cannot be written (permission denied)")
        return
    folder = path.parent.absolute()
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise VoiceError(f"--speak-to {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise VoiceError(f"--speak-to {path}: the folder {folder} cannot be written")
