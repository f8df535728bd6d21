"""Shared pytest fixtures."""

from __future__ import annotations

# =============================================================================================
# PostgreSQL: a real loopback server from scripts/postgres.sh (or APPLIANCE_TEST_PG_URL).
# Tests that need it fail, never skip, when it cannot start: the journal must be tested on it.
# =============================================================================================
import fcntl
import os
import subprocess
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

# Pillow's text is laid out by the FreeType and HarfBuzz its wheel bundles only if PIL.ImageFont
# (imported here) is loaded before any test module loads GTK. A module importing
# appliance.panel.window (test_panel*.py) loads GTK at collection, and with it the system's
# libfreetype and libharfbuzz as the process's global symbols; Pillow's _imagingft loaded after
# that binds to those (features.version("harfbuzz") says the system's), and its Raqm layout then
# gives each glyph after the first an advance of about a million pixels: "Ada Lovelace" was
# drawn as "A", and tesseract read nothing of the form test_seeing_secrets.py draws in a full
# integration run, though the same test alone read it.
import PIL.ImageFont  # noqa: F401
import pytest

from appliance_lab.bench.scratch_database import scratch_database

REPO = Path(__file__).resolve().parent.parent
POSTGRES_SCRIPT = REPO / "scripts" / "postgres.sh"
PG_BASE = REPO / ".cache" / "pg"
# Sessions running at once (several pytest runs in one checkout) share one server; each holds a
# lease, and the last one out stops the server, but only if a session started it.
LEASES = REPO / ".cache" / "pg-leases"


class PostgresUnavailable(RuntimeError):
    """The loopback PostgreSQL server could not be started."""


def _postgres(action: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(POSTGRES_SCRIPT), action, str(PG_BASE)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )


@contextmanager
def _leases_locked() -> Iterator[None]:
    LEASES.mkdir(parents=True, exist_ok=True)
    with (LEASES / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _start_shared_server() -> str:
    with _leases_locked():
        was_running = _postgres("status").returncode == 0
        started = _postgres("start")
        if started.returncode != 0:
            raise PostgresUnavailable(
                "could not start the loopback PostgreSQL server with scripts/postgres.sh "
                f"(exit {started.returncode}); run scripts/setup.sh to install it, or set "
                f"APPLIANCE_TEST_PG_URL.\n{started.stderr.strip()}"
            )
        if not was_running:
            (LEASES / "owned").touch()
        (LEASES / str(os.getpid())).touch()
        return started.stdout.strip().splitlines()[-1]


def _release_shared_server() -> None:
    with _leases_locked():
        (LEASES / str(os.getpid())).unlink(missing_ok=True)
        live = [
            lease
            for lease in LEASES.iterdir()
            if lease.name.isdigit() and _pid_alive(int(lease.name))
        ]
        if not live and (LEASES / "owned").exists():
            _postgres("stop")
            (LEASES / "owned").unlink()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """URL of a real PostgreSQL server: APPLIANCE_TEST_PG_URL, else scripts/postgres.sh."""
    configured = os.environ.get("APPLIANCE_TEST_PG_URL")
    if configured:
        yield configured
        return
    url = _start_shared_server()
    try:
        yield url
    finally:
        _release_shared_server()


def fresh_database(url: str) -> AbstractContextManager[str]:
    """Create an empty database on the server at `url`, yield its URL, drop it afterwards."""
    return scratch_database(url, "test")


@pytest.fixture
def fresh_pg_url(pg_url: str) -> Iterator[str]:
    """URL of an empty database of its own for one test, dropped after it."""
    with fresh_database(pg_url) as url:
        yield url


# =============================================================================================
# (end of the PostgreSQL section)
# =============================================================================================


@pytest.fixture(autouse=True, scope="session")
def _device_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One journal device key for the session's tests and the `appliance` processes they
    start, never the user's own (~/.config/appliance/journal.key)."""
    previous = os.environ.get("APPLIANCE_KEY_FILE")
    os.environ["APPLIANCE_KEY_FILE"] = str(tmp_path_factory.mktemp("key") / "journal.key")
    yield
    if previous is None:
        os.environ.pop("APPLIANCE_KEY_FILE", None)
    else:
        os.environ["APPLIANCE_KEY_FILE"] = previous


# =============================================================================================
# (end of the device key section)
# =============================================================================================


# =============================================================================================
# `store`: a journal store on each backend, an empty SQLite file path or a fresh PostgreSQL
# database, for tests that must hold on both.
# =============================================================================================
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "journal.sqlite")
    url: str = request.getfixturevalue("fresh_pg_url")
    return url


# =============================================================================================
# Real applications (tests/integration/test_real_*.py): one desktop session and one Chromium a
# module, a kiosk (its own journal) a test.
# =============================================================================================


@pytest.fixture(scope="module")
def real_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Xvfb, a session bus and openbox for one module."""
    from tests.apps.real_apps import desktop_session

    tmp = tmp_path_factory.mktemp("real-apps")
    with desktop_session(tmp):
        yield tmp


@pytest.fixture()
def kiosk(tmp_path: Path) -> Any:
    """`appliance say` on the real desktop, with a journal of the test's own."""
    from tests.apps.real_apps import Kiosk

    return Kiosk(str(tmp_path / "journal.sqlite"))


@pytest.fixture(scope="module")
def real_browser(real_session: Path) -> Iterator[Any]:
    """Chromium showing the form page, served on loopback, for one module."""
    from tests.apps.real_apps import FormServer, start_chromium, stop

    form = FormServer()
    browser = start_chromium(real_session, form)
    try:
        yield browser
    finally:
        stop(browser.proc)
        form.close()


@pytest.fixture(scope="session")
def loaded() -> Any:
    """The speech engines (Whisper tiny.en, Piper), loaded once for the voice tests."""
    from appliance.voice.commands import engines

    return engines("whisper")


# =============================================================================================
# Markers by folder: `pytest -m unit` is tests/unit, and so on (pyproject.toml names them).
# =============================================================================================
FOLDER_MARKERS = ("unit", "integration", "vm")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = item.path.parent.name
        if folder in FOLDER_MARKERS:
            item.add_marker(folder)
