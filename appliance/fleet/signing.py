"""Each kiosk's Ed25519 key pair: the kiosk signs every batch's chain head with the private half
(kept in its fleet link, never sent), the central server checks it with the public half it got
at the join. The central cannot recompute the kiosk's keyed chain (it never holds the device
key), so what is signed binds the batch's events to the chain head it vouches for."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from appliance.fleet.wire import WireEvent

DOMAIN = b"appliance fleet batch 1"
"""Prefixes what is signed, so a batch signature is never valid as anything else."""


def new_private_key() -> str:
    """A fresh private key, base64 (its 32 raw bytes), as the fleet link keeps it."""
    raw = Ed25519PrivateKey.generate().private_bytes_raw()
    return base64.b64encode(raw).decode()


def public_key(private: str) -> str:
    """The public half of `private`, base64 (32 raw bytes), as the join sends it."""
    key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(private))
    return base64.b64encode(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


def events_digest(events: Sequence[WireEvent], keys: Sequence[tuple[int, str]]) -> str:
    """SHA-256 over every field of the events as sent and the chain's key ids, each length
    prefixed: what the signature covers besides the head."""
    sha = hashlib.sha256()
    for e in events:
        for part in (str(e.id), e.originator_id, str(e.originator_version), e.topic, e.state,
                     e.digest, e.link, e.redacted_digest or ""):
            data = part.encode()
            sha.update(len(data).to_bytes(8, "big"))
            sha.update(data)
    for since, key_id in keys:
        sha.update(f"key {since} {key_id}\n".encode())
    return sha.hexdigest()


def signed_text(kiosk: str, epoch: str, after: int, previous: str, head: tuple[int, str],
                digest: str) -> bytes:
    """What the signature is over: the kiosk, its epoch, the position the batch follows and the
    chain link there, the chain head after the batch (id and link) and the events' digest.
    Kiosk names and epochs hold no newline (both are checked where they are made)."""
    return b"\n".join([DOMAIN, kiosk.encode(), epoch.encode(), f"{after} {previous}".encode(),
                       f"{head[0]} {head[1]}".encode(), digest.encode()])


def sign(private: str, text: bytes) -> str:
    key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(private))
    return base64.b64encode(key.sign(text)).decode()


def verifies(public: bytes, text: bytes, signature: str) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(base64.b64decode(signature), text)
    except (InvalidSignature, ValueError):
        return False
    return True
