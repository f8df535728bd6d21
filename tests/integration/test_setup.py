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
    REPO / "images" / "build.sh",
    REPO / "images" / "setup-pi.sh",
    REPO / "systemd" / "kiosk-session",  # /bin/sh scripts: bash's checks are a superset here
    REPO / "systemd" / "kiosk-start",
    REPO / "systemd" / "first-boot",
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


# -- which extras each command installs, and switching between them -------------------------

STUB_PYTHON = """#!/usr/bin/env bash
# A venv's python for setup.sh: Python 3.11, no llama_cpp yet; pip calls are only logged.
case "$1" in
    -V) echo "Python 3.11.0" ;;
    -c) [[ "$2" != *llama_cpp* ]] ;;
    -m) echo "$*" >>"$SETUP_LOG" ;;
esac
"""
LOGGING_SCRIPT = '#!/usr/bin/env bash\necho "$(basename "$0")" >>"$SETUP_LOG"\n'


@pytest.fixture
def setup_copy(tmp_path: Path) -> Path:
    """scripts/setup.sh in a copy of the project whose venv only logs what it is asked."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "setup.sh", repo / "scripts" / "setup.sh")
    shutil.copy(REPO / "pyproject.toml", repo / "pyproject.toml")
    for name in ("setup-atspi.sh", "llm-models.sh"):
        (repo / "scripts" / name).write_text(LOGGING_SCRIPT)
    bin_dir = repo / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "pip"):
        (bin_dir / name).write_text(STUB_PYTHON)
        (bin_dir / name).chmod(0o755)
    return repo


def _setup(repo: Path, extras: str) -> tuple[str, list[str]]:
    """Run the copy's setup.sh with EXTRAS; its output and the pip/script calls it made."""
    log = repo / "calls.log"
    log.unlink(missing_ok=True)
    done = subprocess.run(
        ["bash", str(repo / "scripts" / "setup.sh")],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, check=False,
        env={**os.environ, "EXTRAS": extras, "VENV": str(repo / "venv"),
             "SETUP_LOG": str(log), "PIP_LOCK": str(repo / "pip.lock")},
    )
    assert done.returncode == 0, done.stderr
    calls = log.read_text().splitlines() if log.exists() else []
    return done.stdout, [c for c in calls if "--upgrade pip" not in c]


def test_make_demo_installs_no_language_model_and_make_test_everything() -> None:
    def extras(target: str) -> str:
        dry = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True,
                             check=True, env={k: v for k, v in os.environ.items()
                                              if k != "EXTRAS"})
        found = re.search(r"EXTRAS='([^']*)' bash scripts/setup.sh", dry.stdout)
        assert found, dry.stdout
        return found.group(1)

    assert "llm" not in extras("demo").split(",") and "voice" in extras("demo").split(",")
    assert set(extras("test").split(",")) == {"dev", "desktop", "voice", "llm", "web"}


def test_setup_only_adds_extras_so_demo_and_test_never_reinstall(setup_copy: Path) -> None:
    out, calls = _setup(setup_copy, "voice")
    assert calls == ["-m pip install --progress-bar on -e .[voice]", "setup-atspi.sh"], calls
    assert "pip's progress follows" in out and "llama" not in out

    out, calls = _setup(setup_copy, "dev,desktop,voice,llm")
    assert calls[0] == "-m pip install --progress-bar on -e .[desktop,dev,llm,voice]", calls
    assert "llm-models.sh" in calls, "the embedded planner's test model comes with llm"
    assert "13 minutes" in out, "the llama.cpp build is announced with its length"

    for extras in ("voice", "dev,desktop,voice,llm", "llm,dev"):
        out, calls = _setup(setup_copy, extras)
        assert not any("pip install" in c for c in calls), (extras, calls)
        assert "package up to date (extras: desktop,dev,llm,voice)" in out

    (setup_copy / "pyproject.toml").write_text(
        (setup_copy / "pyproject.toml").read_text() + "\n# changed\n")
    _out, calls = _setup(setup_copy, "voice")
    assert calls[0] == "-m pip install --progress-bar on -e .[desktop,dev,llm,voice]", (
        "a changed pyproject.toml updates every extra installed, not only the asked ones")


def test_the_lab_comes_with_the_dev_extra_only(setup_copy: Path) -> None:
    """lab/ (benchmarks and tuning) is installed editable beside the package, for dev."""
    (setup_copy / "lab").mkdir()
    shutil.copy(REPO / "lab" / "pyproject.toml", setup_copy / "lab" / "pyproject.toml")
    lab = "-m pip install -q -e ./lab"
    _out, calls = _setup(setup_copy, "voice")
    assert lab not in calls, calls
    _out, calls = _setup(setup_copy, "voice,dev")
    assert calls[:2] == ["-m pip install --progress-bar on -e .[dev,voice]", lab], calls
    _out, calls = _setup(setup_copy, "dev")
    assert not any("pip install" in c for c in calls), calls
    (setup_copy / "lab" / "pyproject.toml").write_text("# changed\n")
    _out, calls = _setup(setup_copy, "voice")
    assert lab in calls, "a changed lab/pyproject.toml installs the lab again"


def _apt(extras: str, venv: Path) -> list[str]:
    """The apt packages setup.sh installs for EXTRAS, from its `--print-apt` dry run."""
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "setup.sh"), "--print-apt"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60, check=False,
        env={**os.environ, "EXTRAS": extras, "VENV": str(venv)},
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout.split()


def test_make_demo_installs_no_browser_vm_or_database_from_apt(tmp_path: Path) -> None:
    dry = subprocess.run(["make", "-n", "demo"], cwd=REPO, capture_output=True, text=True,
                         check=True, env={k: v for k, v in os.environ.items() if k != "EXTRAS"})
    found = re.search(r"EXTRAS='([^']*)' bash scripts/setup.sh", dry.stdout)
    assert found, dry.stdout
    venv = tmp_path / "venv"
    demo = _apt(found.group(1), venv)
    everything = _apt("dev,desktop,voice,llm,web", venv)
    assert not venv.exists(), "--print-apt only prints"
    heavy = {"chromium", "qemu-system-x86", "qemu-utils", "postgresql", "mmdebstrap", "genimage",
             "xvfb", "festival", "tesseract-ocr", "shellcheck"}
    assert not heavy & set(demo), heavy & set(demo)
    assert {"make", "python3-venv", "python3-gi", "portaudio19-dev"} <= set(demo)
    assert heavy <= set(everything) and set(demo) < set(everything)
    assert len(everything) == len(set(everything)), "each package once"
    assert _apt("voice, web", venv) == _apt("web,voice,", venv)
