"""Ordinary Debian applications under Xvfb + openbox, and judges that read their own state.

Each judge reads what the application itself says (a web page posting its form to a loopback
server, a dialog's standard output after OK, a file an editor saved), never the project's code.
A case is spoken commands run through `appliance say --desktop atspi` as the CLI runs them.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appliance.desktop.atspi.headless import stop_process
from appliance_lab.bench.spoken.apps import APPS, FIELDS, STARTS
from tests.apps.atspi_harness import headless_session
from tests.cli_runner import run

FORM_PAGE = Path(__file__).with_name("clinic_form.html")
APP_ENV = {
    "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",  # Qt joins the bus even before the switch is seen
    "GSK_RENDERER": "cairo",  # GTK4 under Xvfb: no GL
    "NO_AT_BRIDGE": "0",
}
CHROMIUM_FLAGS = (
    "--no-sandbox", "--disable-gpu", "--no-first-run", "--test-type",
    "--force-renderer-accessibility", "--disable-background-networking",
    "--disable-component-update", "--disable-features=Translate,MediaRouter",
    "--window-position=0,0", "--window-size=1000,740", "--password-store=basic",
)

EDITORS = {"featherpad": ["featherpad"], "gtk4-print-editor": ["gtk4-print-editor"]}
"""Text editors that save the file they were opened on: Qt 5 and GTK4."""

for tool in ("chromium", "openbox", "yad", "featherpad", "gtk4-print-editor", "galculator",
             "gnome-calculator"):
    # scripts/setup.sh installs these: a missing one fails the tests rather than skipping them.
    assert shutil.which(tool), f"{tool} missing: run scripts/setup.sh"


@dataclass
class Outcome:
    """How one case went: right, wrong (another control changed, no question), asked, failed."""

    case: str
    kind: str
    detail: str = ""


@dataclass
class Kiosk:
    """Consecutive `appliance say` calls on one journal, as the kiosk makes them."""

    store: str
    replies: list[dict[str, Any]] = field(default_factory=list)

    def say(self, text: str) -> dict[str, Any]:
        result = run("say", text, "--desktop", "atspi", "--store", self.store, "--json")
        assert result.code == 0, result.err
        out: dict[str, Any] = result.json()
        self.replies.append(out)
        return out

    def command(self, text: str) -> str:
        """Say it; confirm a confirmation question; the decision that stands at the end."""
        out = self.say(text)
        if out.get("decision") == "needs_confirmation":
            out = self.say("yes")
        return str(out.get("decision"))


def judge(case: str, decisions: list[str], changed: dict[str, Any], wanted: dict[str, Any],
          ) -> Outcome:
    """Compare what the app changed with what the person wanted."""
    if any(d == "clarify" for d in decisions):
        return Outcome(case, "asked", f"{decisions}")
    right = all(changed.get(k) == v for k, v in wanted.items())
    others = {k: v for k, v in changed.items() if k not in wanted}
    if right and not others:
        return Outcome(case, "right")
    if others:  # a control the person did not name was changed without a question
        return Outcome(case, "wrong", f"changed {changed}, wanted {wanted}, {decisions}")
    if changed:  # the right control, but not to what was asked
        return Outcome(case, "failed", f"changed {changed}, wanted {wanted}, {decisions}")
    return Outcome(case, "failed", f"{decisions}")


def tally(outcomes: list[Outcome]) -> dict[str, int]:
    counts = {"right": 0, "wrong": 0, "asked": 0, "failed": 0}
    for o in outcomes:
        counts[o.kind] += 1
    return counts


# -- the session -------------------------------------------------------------------------------


@contextmanager
def desktop_session(tmp: Path) -> Iterator[dict[str, str]]:
    """Xvfb, a session bus and openbox (key events need a window manager); the app env."""
    with headless_session():
        os.environ.update(APP_ENV)
        os.environ["HOME"] = str(tmp)  # apps' settings stay in the test's folder
        os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")
        wm = subprocess.Popen(["openbox"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            yield dict(os.environ)
        finally:
            wm.terminate()
            wm.wait()


def start(cmd: list[str], **kwargs: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(cmd, stderr=subprocess.DEVNULL, text=True, **kwargs)


def stop(proc: subprocess.Popen[str]) -> None:
    stop_process(proc)


def wait_for(check: Callable[[], Any], timeout: float = 30.0, step: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(step)


def on_screen(name: str, timeout: float = 40.0) -> bool:
    """Whether an element called `name` appears over AT-SPI (read with the adapter)."""
    from appliance.desktop.atspi import open_desktop

    desktop = open_desktop()
    try:
        return bool(wait_for(lambda: any(n.name == name for n in desktop.snapshot().nodes)
                             or desktop.screen.invalidate(), timeout))
    finally:
        desktop.bus.close()


# -- Chromium and the form page ----------------------------------------------------------------


SERVED = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
"""What a PageServer serves, by the file's ending: its content type."""


class PageServer:
    """Serves the .html pages of a folder (and the scripts they load) on loopback and keeps the
    states the pages post to it."""

    def __init__(self, folder: Path) -> None:
        states: list[dict[str, Any]] = []
        self.states = states

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                page = folder / Path(self.path).name
                kind = SERVED.get(page.suffix)
                if kind is None or not page.is_file():
                    self.send_error(404)
                    return
                body = page.read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                size = int(self.headers["Content-Length"])
                states.append(json.loads(self.rfile.read(size)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_port}/"

    def last(self) -> dict[str, Any]:
        """The newest state a page made: fetches may arrive out of order, so by its count."""
        if not self.states:
            return {}
        newest = dict(max(self.states, key=lambda s: int(s.get("seq", 0))))
        newest.pop("seq", None)
        return newest

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class FormServer(PageServer):
    """Serves the form page (FORM_PAGE) at `url`."""

    def __init__(self) -> None:
        super().__init__(FORM_PAGE.parent)
        self.url = self.base + FORM_PAGE.name


@dataclass
class Browser:
    proc: subprocess.Popen[str]
    form: FormServer

    def quiet(self, calm: float = 0.4, timeout: float = 3.0) -> dict[str, Any]:
        """The page's state once it has posted nothing new for `calm` seconds."""
        deadline = time.monotonic() + timeout
        count, since = len(self.form.states), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            if len(self.form.states) != count:
                count, since = len(self.form.states), time.monotonic()
            elif time.monotonic() - since >= calm:
                break
        return self.form.last()

    def changes(self, before: dict[str, Any]) -> dict[str, Any]:
        """Fields the page reports changed since `before`."""
        now = self.quiet()
        return {k: v for k, v in now.items() if k != "event" and before.get(k) != v}


def start_chromium(tmp: Path, form: FormServer) -> Browser:
    proc = start(["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'chromium'}", form.url],
                 stdout=subprocess.DEVNULL)
    assert wait_for(lambda: form.states, 60), "the form page never loaded"
    assert on_screen("Sign up"), "Chromium's page never appeared over AT-SPI"
    return Browser(proc, form)


# -- yad forms ---------------------------------------------------------------------------------

# The same form `appliance bench voice-apps` speaks to.
YAD_FORM = APPS["yad-form"]
YAD_KEYS = FIELDS["yad-form"]
YAD_START = STARTS["yad-form"]


def run_yad(commands: list[str], kiosk: Kiosk) -> tuple[list[str], dict[str, str] | None]:
    """Start the form, say the commands, and read what yad prints after OK (None: no OK)."""
    return run_yad_with(lambda k: [k.command(c) for c in commands], kiosk)


def run_yad_with(speak: Callable[[Kiosk], list[str]], kiosk: Kiosk,
                 ) -> tuple[list[str], dict[str, str] | None]:
    """`run_yad` with what is said decided as it goes (`speak` returns the decisions)."""
    proc = start(YAD_FORM, stdout=subprocess.PIPE)
    try:
        assert on_screen("Reminder"), "yad's form never appeared"
        decisions = speak(kiosk)
        try:
            out, _ = proc.communicate(timeout=3)
        except subprocess.TimeoutExpired:
            return decisions, None
        values = out.rstrip("\n").split("|")
        return decisions, dict(zip(YAD_KEYS, values, strict=False)) if proc.returncode == 0 \
            else {}
    finally:
        stop(proc)


# -- text editors that save a file -------------------------------------------------------------


def file_after(path: Path, before: str, timeout: float = 3.0) -> str:
    got = wait_for(lambda: path.read_text() != before and path.read_text(), timeout)
    return str(got) if got else path.read_text()


# -- running cases -----------------------------------------------------------------------------


def browser_case(browser: Browser, kiosk: Kiosk, name: str, commands: tuple[str, ...],
                 wanted: dict[str, Any]) -> Outcome:
    before = browser.quiet()
    decisions = [kiosk.command(c) for c in commands]
    return judge(name, decisions, browser.changes(before), wanted)


def yad_case(kiosk: Kiosk, name: str, commands: tuple[str, ...], wanted: dict[str, Any],
             ) -> Outcome:
    decisions, printed = run_yad(list(commands), kiosk)
    if printed is None:
        return Outcome(name, "asked" if "clarify" in decisions else "failed",
                       f"no OK: {decisions}")
    changed = {k: v for k, v in printed.items() if YAD_START.get(k) != v}
    return judge(name, decisions, changed, wanted)


def editor_case(cmd: list[str], path: Path, kiosk: Kiosk, name: str,
                commands: tuple[str, ...], wanted: dict[str, Any]) -> Outcome:
    path.write_text("notes\n")
    proc = start([*cmd, str(path)], stdout=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: _editor_up(path.name), 60), f"{cmd[0]} never appeared"
        decisions = [kiosk.command(c) for c in commands]
        text = file_after(path, "notes\n")
    finally:
        stop(proc)
    if "clarify" in decisions:
        return Outcome(name, "asked", f"{decisions}")
    if str(wanted["contains"]) in text:
        return Outcome(name, "right")
    return Outcome(name, "failed" if text == "notes\n" else "wrong", f"{decisions} {text!r}")


def _editor_up(file_name: str) -> bool:
    """A focused text area in a window showing the file."""
    from appliance.desktop.atspi import open_desktop

    desktop = open_desktop()
    try:
        snap = desktop.snapshot()
        return any(file_name in n.window for n in snap.nodes) and any(
            "focused" in n.states and "editable" in n.states for n in snap.nodes)
    finally:
        desktop.bus.close()

