"""The device key that makes the journal's hash chain an HMAC chain.

It lives outside the journal (docs/journal.md, "The device key"): whoever can copy or edit the
journal file, a backup of it or the PostgreSQL database does not thereby hold the key, so cannot
recompute the chain after editing, truncating or forging events.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from appliance.journal.store import StoreError

KEY_BYTES = 32


def config_file(variable: str, name: str) -> Path:
    """$`variable`, else $XDG_CONFIG_HOME/appliance/`name` (~/.config/appliance/...)."""
    configured = os.environ.get(variable)
    if configured:
        return Path(configured)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "appliance" / name


def key_path() -> Path:
    """$APPLIANCE_KEY_FILE, else $XDG_CONFIG_HOME/appliance/journal.key (~/.config/...)."""
    return config_file("APPLIANCE_KEY_FILE", "journal.key")


def key_id(key: bytes) -> str:
    """A public fingerprint of the key, stored in the journal to recognise the key it was
    chained with; it reveals nothing of the key."""
    return hmac.new(key, b"appliance journal key id", hashlib.sha256).hexdigest()[:16]


def load_key(create: bool) -> bytes | None:
    """The device key; created on first start when `create` (writers), else None if absent."""
    path = key_path()
    try:
        return _read(path)
    except FileNotFoundError:
        if not create:
            return None
    try:
        return _create(path)
    except FileExistsError:  # another process created it first: use theirs
        return _read(path)
    except OSError as e:
        raise StoreError(f"cannot create the device key {path}: {e.strerror}") from None


def _read(path: Path) -> bytes:
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as e:
        raise StoreError(f"cannot read the device key {path}: {e.strerror}") from None
    if len(key) != KEY_BYTES:
        raise StoreError(f"the device key {path} is not a key ({len(key)} bytes, not 32)")
    return key


def _create(path: Path) -> bytes:
    """Written whole to a private temporary file, then linked into place: a process starting
    at the same moment sees either no key or the whole key, and only one key ever wins."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_bytes(KEY_BYTES)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)  # fails with FileExistsError if another process won
    finally:
        temporary.unlink()
    return key
