"""Real Debian applications driven by spoken commands through `appliance say --desktop atspi`.

Chromium on a local form, yad's form dialog (GTK3), FeatherPad (Qt 5) and GTK4's print editor,
under Xvfb + openbox; each judged by what the application itself reports. The held-out cases
(tests/test_real_apps_heldout.py) are run the same way but were never tuned on.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.apps.real_apps import (
    Browser,
    FormServer,
    Kiosk,
    Outcome,
    browser_case,
    desktop_session,
    editor_case,
    start_chromium,
    stop,
    yad_case,
)
from tests.real_app_cases import BROWSER_TUNED, EDITOR_TUNED, YAD_TUNED, Case

EDITORS = {"featherpad": ["featherpad"], "gtk4-print-editor": ["gtk4-print-editor"]}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("real-apps")
    with desktop_session(tmp):
        yield tmp


@pytest.fixture(scope="module")
def browser(session: Path) -> Iterator[Browser]:
    form = FormServer()
    b = start_chromium(session, form)
    try:
        yield b
    finally:
        stop(b.proc)
        form.close()


@pytest.fixture()
def kiosk(tmp_path: Path) -> Kiosk:
    return Kiosk(str(tmp_path / "journal.sqlite"))


def _check(outcome: Outcome) -> None:
    assert outcome.kind == "right", f"{outcome.case}: {outcome.kind} {outcome.detail}"


@pytest.mark.parametrize("case", BROWSER_TUNED, ids=lambda c: c.name)
def test_browser_form(browser: Browser, kiosk: Kiosk, case: Case) -> None:
    _check(browser_case(browser, kiosk, case.name, case.commands, dict(case.wanted)))


@pytest.mark.parametrize("case", YAD_TUNED, ids=lambda c: c.name)
def test_yad_form(session: Path, kiosk: Kiosk, case: Case) -> None:
    _check(yad_case(kiosk, case.name, case.commands, dict(case.wanted)))


@pytest.mark.parametrize("editor", sorted(EDITORS))
@pytest.mark.parametrize("case", EDITOR_TUNED, ids=lambda c: c.name)
def test_editor_saves(session: Path, kiosk: Kiosk, editor: str, case: Case) -> None:
    path = session / f"{editor}-{len(kiosk.replies)}.txt"
    _check(editor_case(EDITORS[editor], path, kiosk, case.name, case.commands,
                       dict(case.wanted)))
