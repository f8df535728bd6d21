"""A PostgreSQL database of its own for one run (a benchmark, a test), dropped after it."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import psycopg
from psycopg import sql


@contextmanager
def scratch_database(url: str, prefix: str) -> Iterator[str]:
    """Create an empty database `<prefix>_<random>` on the server at `url`, yield its URL (the
    same credentials and options), drop it afterwards even if sessions still hold it."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urlsplit(url)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
