"""Caregiver accounts and their sessions, in a small SQLite file of the web's own (mode 0600):
password hashes and session tokens stay on this device and never reach the journal."""

from __future__ import annotations

import hashlib
import os
import re
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
INVITE_DIGITS = 12  # read aloud in three groups of four; guessing is slowed per address


class AccountError(ValueError):
    """Said to the caregiver next to the field; one line."""


@dataclass(frozen=True)
class Invitation:
    """An invitation not yet used: its code is not kept (only a hash), so it is not shown."""

    id: int
    role: Role
    by: str
    expires: float


@dataclass(frozen=True)
class OpenSession:
    """One of a caregiver's open sessions, as Sessions lists it."""

    id: int
    began: float
    agent: str  # the browser's User-Agent as it logged in ("" before it was kept)
    current: bool  # the session this request came with


def grouped(code: str) -> str:
    """"482109375521" as "4821 0937 5521": easy to read aloud and to copy."""
    return " ".join(code[i:i + 4] for i in range(0, len(code), 4))


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
        columns = {row[1] for row in self.db.execute("pragma table_info(sessions)")}
        if "agent" not in columns:  # a web.sqlite made before sessions named their browser
            self.db.execute("alter table sessions add column agent text not null default ''")
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

    def login(self, name: str, password: str, address: str, agent: str = "") -> str | None:
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
        self.db.execute("insert into sessions (token, name, csrf, created, revoked, agent) "
                        "values (?, ?, ?, ?, 0, ?)",
                        (_digest(token), name, secrets.token_urlsafe(32), time.time(),
                         agent[:300]))
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
        """A one-time code of 12 digits for one more caregiver or viewer, valid a day."""
        code = "".join(secrets.choice("0123456789") for _ in range(INVITE_DIGITS))
        self.db.execute("insert into invites values (?, ?, ?, ?)",
                        (_digest(code), role, time.time() + INVITE_S, by))
        return code

    def join(self, code: str, name: str, password: str, address: str = "") -> Role:
        """Use an invite: the account is made with the invite's role, and the code is spent.
        Wrong codes back off per address, as logins do: 12 digits are not guessed online."""
        key = f"join:{address}"
        wait = self.db.execute("select until from failures where key=?", (key,)).fetchone()
        if wait and wait[0] > time.time():
            seconds = int(wait[0] - time.time()) + 1
            raise AccountError(f"Too many wrong codes. Please wait {seconds} second"
                               f"{'' if seconds == 1 else 's'}.")
        # Spaces and dashes as it was read out; an older code (letters too) as it was given.
        said = {re.sub(r"[\s-]", "", code), code.strip()}
        row = None
        for candidate in said:
            row = self.db.execute("select role, expires, code from invites where code=?",
                                  (_digest(candidate),)).fetchone()
            if row is not None:
                break
        if row is None or time.time() > row[1]:
            self._failed(key)
            raise AccountError("That invitation is not valid (used, withdrawn or too old).")
        role: Role = row[0]
        self.create(name, password, role)
        self.db.execute("delete from invites where code=?", (row[2],))
        self.db.execute("delete from failures where key=?", (key,))
        return role

    def invitations(self) -> list[Invitation]:
        """Invitations not yet used and still valid, newest first (older ones are dropped)."""
        self.db.execute("delete from invites where expires < ?", (time.time(),))
        rows = self.db.execute("select rowid, role, by, expires from invites "
                               "order by expires desc").fetchall()
        return [Invitation(id=r[0], role=r[1], by=r[2], expires=r[3]) for r in rows]

    def withdraw(self, invitation: int) -> bool:
        """Cancel an invitation: its code no longer works."""
        return bool(self.db.execute("delete from invites where rowid=?", (invitation,)).rowcount)

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

    def sessions_of(self, name: str, token: str | None = None) -> list[OpenSession]:
        """Each session of `name` still open, newest first; `token` marks the current one."""
        mine = _digest(token) if token else ""
        rows = self.db.execute("select rowid, token, created, agent from sessions where name=? "
                               "and revoked=0 order by created desc", (name,)).fetchall()
        return [OpenSession(id=r[0], began=r[2], agent=r[3], current=r[1] == mine)
                for r in rows if time.time() - r[2] <= SESSION_S]

    def end_session(self, name: str, session: int) -> bool:
        """End one of `name`'s own sessions (never another caregiver's)."""
        return bool(self.db.execute("update sessions set revoked=1 where rowid=? and name=? "
                                    "and revoked=0", (session, name)).rowcount)
