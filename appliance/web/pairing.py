"""The first owner pairs with a code the kiosk says and shows: 8 digits, one use, 10 minutes,
and a few tries; the code itself is only ever in a file the kiosk reads, never the journal."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

CODE_DIGITS = 8
VALID_S = 600.0
MAX_TRIES = 5
"""Wrong codes before this one is void and a new one must be made: 5 guesses in 10^8."""


@dataclass
class PairingOffer:
    """One code on offer. `path`: where the kiosk picks it up to say and show (mode 0600)."""

    path: Path
    _digest: bytes = b""
    _expires: float = 0.0
    _tries: int = 0

    def new(self) -> str:
        code = "".join(secrets.choice("0123456789") for _ in range(CODE_DIGITS))
        self._digest = hashlib.sha256(code.encode()).digest()
        self._expires = time.time() + VALID_S
        self._tries = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(code + "\n")
        return code

    def take(self, said: str) -> bool:
        """True once for the right code in time; a wrong or late one counts against it."""
        if not self._digest or time.time() > self._expires or self._tries >= MAX_TRIES:
            self.withdraw()
            return False
        given = hashlib.sha256(said.strip().encode()).digest()
        if hmac.compare_digest(given, self._digest):
            self.withdraw()  # one use
            return True
        self._tries += 1
        if self._tries >= MAX_TRIES:
            self.withdraw()
        return False

    def withdraw(self) -> None:
        self._digest = b""
        self.path.unlink(missing_ok=True)

    @property
    def open(self) -> bool:
        return bool(self._digest) and time.time() <= self._expires

