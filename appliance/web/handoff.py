"""What the web page hands the kiosk, through files in the user's runtime folder (memory only,
mode 0600): the pairing code to say and show, notes to announce ("Carol undid: ..."), and a
caregiver's request to learn the person's voice now.
The kiosk and the web page run as the same user; nothing of this goes into the journal."""

from __future__ import annotations

import os
from pathlib import Path

from appliance.journal.store import default_store_path
from appliance.web.pairing import CODE_DIGITS


def web_dir(store: str | None) -> Path:
    """Beside a SQLite journal; for PostgreSQL, the state folder a default journal uses."""
    if store and not store.startswith("postgresql"):
        return Path(store).resolve().parent
    return default_store_path().parent


def handoff_dir(store: str | None = None) -> Path:
    """APPLIANCE_HANDOFF_DIR (the device's units: the web page is a system service, the kiosk
    a user unit), else the user's runtime folder, else beside the journal."""
    chosen = os.environ.get("APPLIANCE_HANDOFF_DIR")
    if chosen:
        return Path(chosen)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return Path(runtime) / "appliance" if runtime else web_dir(store)


def pairing_path(store: str | None = None) -> Path:
    return handoff_dir(store) / "pairing-code"


def notes_path(store: str | None = None) -> Path:
    return handoff_dir(store) / "announce"


def enrol_path(store: str | None = None) -> Path:
    return handoff_dir(store) / "learn-voice"


def post_note(path: Path, text: str) -> None:
    """A line for the kiosk to say; the newest replaces any not yet said."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(" ".join(text.split()) + "\n")


class CodeWatch:
    """The kiosk's side: a new code in the file is to be said and shown, once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[float, str] | None = None

    def fresh(self) -> str | None:
        try:
            code = self.path.read_text().strip()
            seen = (self.path.stat().st_mtime, code)
        except OSError:
            self._seen = None
            return None
        if seen == self._seen or not (code.isdigit() and len(code) == CODE_DIGITS):
            return None
        self._seen = seen
        return code


def spoken_code(code: str) -> str:
    """'1 2 3 4, 5 6 7 8': digits one by one, in two groups a person can write down."""
    half = len(code) // 2
    return f"{' '.join(code[:half])}, {' '.join(code[half:])}"


class NoteWatch:
    """The kiosk's side of notes: each is said once, then removed."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def take(self, newer_than: float = 0.0) -> str | None:
        """The note, once; one written before `newer_than` (Unix seconds) is dropped unsaid."""
        try:
            written = self.path.stat().st_mtime
            text = self.path.read_text().strip()
            self.path.unlink()
        except OSError:
            return None
        return text if text and written >= newer_than else None
