"""The kiosk's link to its central server: the address, the kiosk's own credential, its batch
signing key and the server's certificate pinned when the kiosk joined. Kept beside the device
key, mode 0600, never in the journal; a join replaces it whole."""

from __future__ import annotations

import hashlib
import os
import ssl
from pathlib import Path
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from appliance.journal.key import config_file
from appliance.journal.store import StoreError

PIN_HEX = 32
"""Hex digits of the certificate's SHA-256 fingerprint carried in an enrollment token."""


class FleetError(StoreError):
    """A fleet operation that cannot be done as asked; the message is one line."""


class FleetLink(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    kiosk: str
    credential: str = Field(repr=False)
    certificate: str  # PEM: the only certificate this kiosk accepts from the server
    signing_key: str | None = Field(default=None, repr=False)
    """Ed25519 private key, base64 (appliance/fleet/signing.py); None in a link made before
    batches were signed: such a kiosk joins again."""


def link_path() -> Path:
    """$APPLIANCE_FLEET_FILE, else $XDG_CONFIG_HOME/appliance/fleet.json."""
    return config_file("APPLIANCE_FLEET_FILE", "fleet.json")


def load_link(path: Path | None = None) -> FleetLink | None:
    """The link at `path` (default `link_path()`), None when the kiosk never joined."""
    path = path or link_path()
    try:
        return FleetLink.model_validate_json(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValidationError) as e:
        raise FleetError(f"cannot read the fleet link {path}: {type(e).__name__}") from None


class LinkFile:
    """The link file a running uplink follows: a join rewrites it (a new credential and key),
    and the uplink goes on with the new one without a restart."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen: tuple[int, int, int] | None = None

    def changed(self, current: FleetLink) -> FleetLink | None:
        """The link now in the file when it differs from `current`; one stat when untouched."""
        try:
            st = self.path.stat()
        except OSError:
            return None
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp == self.seen:
            return None
        try:
            link = load_link(self.path)
        except FleetError:  # unreadable now: the next look tries again
            return None
        self.seen = stamp
        return link if link is not None and link != current else None


def save_link(link: FleetLink) -> Path:
    path = link_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(link.model_dump_json())
    temporary.replace(path)
    return path


def fingerprint(pem: str) -> str:
    """SHA-256 of the certificate, lowercase hex."""
    cert = x509.load_pem_x509_certificate(pem.encode())
    return cert.fingerprint(hashes.SHA256()).hex()


def split_token(token: str) -> tuple[str, str]:
    """'SECRET.PIN' -> (secret, pin): the pin is the start of the server's fingerprint."""
    secret, _, pin = token.strip().rpartition(".")
    if not secret or len(pin) != PIN_HEX or any(c not in "0123456789abcdef" for c in pin):
        raise FleetError("that is not an enrollment token; `appliance central enroll` prints one")
    return secret, pin


def server_certificate(url: str) -> str:
    """The certificate the server at `url` presents (PEM), before trusting anything."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise FleetError(f"the central server's address must be https://HOST:PORT, not {url!r}")
    try:
        return ssl.get_server_certificate((parts.hostname, parts.port or 443), timeout=10)
    except OSError as e:
        raise FleetError(f"no central server answers at {url}: {e}") from None


def pinned_context(pem: str) -> ssl.SSLContext:
    """TLS that accepts exactly the pinned certificate (self-signed, so it is its own CA); the
    name is not checked, the pin already says which server this is."""
    context = ssl.create_default_context(cadata=pem)
    context.check_hostname = False
    return context


def token_digest(secret: str) -> str:
    """What the central server keeps of a token or credential: 256 random bits need no slow
    hash, only one that cannot be reversed."""
    return hashlib.sha256(secret.encode()).hexdigest()
