"""The set-up scripts and the loopback PostgreSQL fixtures, against a real PostgreSQL server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.conftest import REPO, fresh_database

SHELL_SCRIPTS = [
    REPO / "scripts" / "setup.sh",
    REPO / "scripts" / "postgres.sh",
    REPO / ".ci" / "run",
]


@pytest.mark.postgres
def test_pg_url_answers_sql(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        version = conn.execute("show server_version_num").fetchone()
    assert version is not None and int(version[0]) >= 150000


@pytest.mark.postgres
@pytest.mark.skipif("APPLIANCE_TEST_PG_URL" in os.environ, reason="checks our own server's config")
def test_own_server_listens_on_loopback_only(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("show listen_addresses").fetchone()
    assert row == ("127.0.0.1",)


@pytest.mark.postgres
def test_fresh_database_is_empty_isolated_and_dropped(pg_url: str) -> None:
    with fresh_database(pg_url) as first, fresh_database(pg_url) as second:
        assert first != second
        with psycopg.connect(first, autocommit=True) as conn:
            tables = conn.execute(
                "select count(*) from information_schema.tables where table_schema = 'public'"
            ).fetchone()
            assert tables == (0,)
            conn.execute("create table marker (id int)")
        with psycopg.connect(second) as conn:
            seen = conn.execute("select to_regclass('public.marker')").fetchone()
        assert seen == (None,)
        name = first.rsplit("/", 1)[1]
    with psycopg.connect(pg_url) as conn:
        left = conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone()
    assert left is None


@pytest.mark.postgres
def test_fresh_pg_url_fixture_gives_an_empty_database(fresh_pg_url: str, pg_url: str) -> None:
    assert fresh_pg_url != pg_url
    with psycopg.connect(fresh_pg_url) as conn:
        row = conn.execute("select current_database()").fetchone()
    assert row is not None and row[0] == fresh_pg_url.rsplit("/", 1)[1]


def _script(*args: str, port: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(REPO / "scripts" / "postgres.sh"), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
        env={**os.environ, "APPLIANCE_PG_PORT": str(port)},
    )


@pytest.mark.postgres
def test_postgres_script_starts_idempotently_and_stops(tmp_path: Path) -> None:
    """A second, private server: start, start again (same URL), serve SQL, stop."""
    base = tmp_path / "pg"
    started = _script("start", str(base), port=54339)
    assert started.returncode == 0, started.stderr
    url = started.stdout.strip()
    assert re.fullmatch(r"postgresql://postgres@127\.0\.0\.1:\d+/appliance_test", url)
    data_dir = re.search(r"server running in (\S+)/data", started.stderr)
    assert data_dir is not None
    try:
        again = _script("start", str(base), port=54339)
        assert (again.returncode, again.stdout.strip()) == (0, url)
        with psycopg.connect(url) as conn:
            assert conn.execute("select current_database()").fetchone() == ("appliance_test",)
    finally:
        stopped = _script("stop", str(base), port=54339)
    assert stopped.returncode == 0, stopped.stderr
    assert _script("status", str(base), port=54339).returncode == 1
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=5).close()
    # Under root a private tmp_path is unreachable for the `postgres` user: the script moved the
    # data to its own /tmp directory, which the test removes.
    shutil.rmtree(data_dir.group(1), ignore_errors=True)


def test_shell_scripts_pass_shellcheck() -> None:
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, "shellcheck is missing: run scripts/setup.sh"
    result = subprocess.run(
        [shellcheck, "--shell=bash", *map(str, SHELL_SCRIPTS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout
