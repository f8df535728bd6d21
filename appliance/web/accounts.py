"""Caregiver accounts and their sessions, in a small SQLite file of the web's own (mode 0600):
password hashes and session tokens stay on this device and never reach the journal."""

from __future__ import annotations

import hashlib
import os
import secrets
import sqlite3
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

Role = Literal["owner", "caregiver", "viewer"]
MIN_PASSWORD = 12
SESSION_S = 12 * 3600.0
BACKOFF_AFTER = 3  # failures before each further one doubles the wait
BACKOFF_MAX_S = 300.0

_SCHEMA = """
create table if not exists users (name text primary key, role text not null, hash text not null,
                                  created real not null);
create table if not exists sessions (token text primary key, name text not null,
                                     csrf text not null, created real not null,
                                     revoked integer not null default 0);
create table if not exists failures (key text primary key, count integer not null,
                                     until real not null);
create table if not exists invites (code text primary key, role text not null,
                                    expires real not null, by text not null);
"""
INVITE_S = 24 * 3600.0


class AccountError(ValueError):
    """Said to the caregiver next to the field; one line."""


@dataclass(frozen=True)
class LoginSession:
    """A caregiver signed in to the web page (not `appliance.session.Session`, a kiosk's turns)."""

    name: str
    role: Role
    csrf: str


def _common() -> frozenset[str]:
    text = resources.files("appliance.web").joinpath("common_passwords.txt").read_text()
    return frozenset(line.strip() for line in text.splitlines()
                     if line.strip() and not line.startswith("#"))


def check_password(password: str, name: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"A password needs at least {MIN_PASSWORD} characters.")
    lowered = password.casefold()
    if lowered in _common() or name.casefold() in lowered or len(set(password)) < 4:
        raise AccountError("That password is too easy to guess; please choose another.")


def _backoff_keys(name: str, address: str) -> tuple[str, str]:
    """Per account from one address, and per address: a stranger elsewhere who guesses the
    owner's password only slows himself."""
    return f"acct:{name.casefold()}@{address}", f"addr:{address}"


def _digest(token: str) -> str:
    # The database holds only a hash of each session token: a copy of it opens no session.
    return hashlib.sha256(token.encode()).hexdigest()


class Accounts:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.executescript(_SCHEMA)
        self.hasher = PasswordHasher()  # argon2id, the library's current parameters

    def has_owner(self) -> bool:
        return self.db.execute("select 1 from users where role='owner'").fetchone() is not None

    def create(self, name: str, password: str, role: Role) -> None:
        name = name.strip()
        if not name or len(name) > 40 or not name.replace(" ", "").isalnum():
            raise AccountError("A name is 1 to 40 letters, digits or spaces.")
        check_password(password, name)
        try:
            self.db.execute("insert into users values (?, ?, ?, ?)",
                            (name, role, self.hasher.hash(password), time.time()))
        except sqlite3.IntegrityError:
            raise AccountError(f"There is already a caregiver called {name}.") from None

    # -- backoff ---------------------------------------------------------------------------

    def wait_s(self, name: str, address: str) -> float:
        """Seconds before another login try is taken for this name from this address."""
        now = time.time()
        rows = [self.db.execute("select until from failures where key=?", (k,)).fetchone()
                for k in _backoff_keys(name, address)]
        return float(max([0.0, *(r[0] - now for r in rows if r)]))

    def _failed(self, key: str) -> None:
        row = self.db.execute("select count from failures where key=?", (key,)).fetchone()
        count = (row[0] if row else 0) + 1
        wait = 0.0 if count < BACKOFF_AFTER else min(BACKOFF_MAX_S, 2.0 ** (count - BACKOFF_AFTER))
        self.db.execute("insert or replace into failures values (?, ?, ?)",
                        (key, count, time.time() + wait))

    # -- sessions --------------------------------------------------------------------------

    def login(self, name: str, password: str, address: str) -> str | None:
        """A new session token, or None. Failures back off per account from that address and
        per address, so a stranger elsewhere cannot keep the owner out."""
        keys = _backoff_keys(name, address)
        row = self.db.execute("select hash from users where name=?", (name,)).fetchone()
        try:
            ok = row is not None and self.hasher.verify(row[0], password)
        except (VerificationError, InvalidHashError):
            ok = False
        if not ok:
            for key in keys:
                self._failed(key)
            return None
        self.db.execute("delete from failures where key=?", (keys[0],))
        token = secrets.token_urlsafe(32)  # 256 bits
        self.db.execute("insert into sessions values (?, ?, ?, ?, 0)",
                        (_digest(token), name, secrets.token_urlsafe(32), time.time()))
        return token

    def session(self, token: str | None) -> LoginSession | None:
        if not token:
            return None
        row = self.db.execute(
            "select s.name, u.role, s.csrf, s.created from sessions s join users u "
            "on u.name = s.name where s.token=? and s.revoked=0", (_digest(token),)).fetchone()
        if row is None or time.time() - row[3] > SESSION_S:
            return None
        return LoginSession(name=row[0], role=row[1], csrf=row[2])

    def logout(self, token: str) -> None:
        self.db.execute("update sessions set revoked=1 where token=?", (_digest(token),))

    def revoke_all(self, name: str) -> int:
        return self.db.execute("update sessions set revoked=1 where name=? and revoked=0",
                               (name,)).rowcount

    # -- more caregivers -------------------------------------------------------------------

    def invite(self, role: Role, by: str) -> str:
        """A one-time code for one more caregiver or viewer, valid a day."""
        code = secrets.token_urlsafe(12)
        self.db.execute("insert into invites values (?, ?, ?, ?)",
                        (_digest(code), role, time.time() + INVITE_S, by))
        return code

    def join(self, code: str, name: str, password: str) -> Role:
        """Use an invite: the account is made with the invite's role, and the code is spent."""
        row = self.db.execute("select role, expires from invites where code=?",
                              (_digest(code.strip()),)).fetchone()
        if row is None or time.time() > row[1]:
            raise AccountError("That invitation is not valid (used, withdrawn or too old).")
        role: Role = row[0]
        self.create(name, password, role)
        self.db.execute("delete from invites where code=?", (_digest(code.strip()),))
        return role

    def people(self) -> list[tuple[str, Role]]:
        return [(r[0], r[1]) for r in self.db.execute("select name, role from users order by "
                                                      "created")]

    def remove(self, name: str) -> bool:
        """Revoke a caregiver: the account and every session of it; never the owner."""
        gone = self.db.execute("delete from users where name=? and role!='owner'",
                               (name,)).rowcount
        if gone:
            self.revoke_all(name)
        return bool(gone)

    def sessions_of(self, name: str) -> list[tuple[str, float]]:
        """(a short name for the session, when it began) of each session still open."""
        rows = self.db.execute("select token, created from sessions where name=? and revoked=0 "
                               "order by created desc", (name,)).fetchall()
        return [(r[0][:8], r[1]) for r in rows if time.time() - r[1] <= SESSION_S]
