"""The held-out real-application cases: written before tuning, run, never tuned on.

Counts (right / wrong without a question / asked / failed) go to the test's output; the test
asserts only the line that must never be crossed: no wrong control changed without a question.
Cases known to fail are what the next work builds (see `KNOWN_MISSES`).
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
    tally,
    yad_case,
)
from tests.real_app_cases import BROWSER_HELD_OUT, EDITOR_HELD_OUT, YAD_HELD_OUT

EDITORS = {"featherpad": ["featherpad"], "gtk4-print-editor": ["gtk4-print-editor"]}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("real-apps-held-out")
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


def test_held_out_cases(session: Path, browser: Browser, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    outcomes: list[Outcome] = []
    for i, case in enumerate(BROWSER_HELD_OUT):
        kiosk = Kiosk(str(tmp_path / f"b{i}.sqlite"))
        outcomes.append(browser_case(browser, kiosk, case.name, case.commands,
                                     dict(case.wanted)))
    for i, case in enumerate(YAD_HELD_OUT):
        kiosk = Kiosk(str(tmp_path / f"y{i}.sqlite"))
        outcomes.append(yad_case(kiosk, case.name, case.commands, dict(case.wanted)))
    for editor, cmd in sorted(EDITORS.items()):
        for i, case in enumerate(EDITOR_HELD_OUT):
            kiosk = Kiosk(str(tmp_path / f"{editor}{i}.sqlite"))
            outcomes.append(editor_case(cmd, tmp_path / f"{editor}{i}.txt", kiosk,
                                        f"{case.name} ({editor})", case.commands,
                                        dict(case.wanted)))
    with capsys.disabled():
        print(f"\nheld-out real-app cases: {tally(outcomes)}")
        for o in outcomes:
            if o.kind != "right":
                print(f"  {o.kind}: {o.case}: {o.detail}")
    assert not [o for o in outcomes if o.kind == "wrong"]
