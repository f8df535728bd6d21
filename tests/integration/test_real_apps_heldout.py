"""The held-out real-application cases: written before tuning, run, never tuned on.

Three sets, reported apart: each was written before it was first run, and once run and its
misses read, it counts as seen; the newest is the unseen measure. Counts (right / wrong without
a question / asked / failed) go to the test's output; the test asserts only the line that must
never be crossed: no wrong control changed without a question.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.apps.real_apps import (
    EDITORS,
    Browser,
    FormServer,
    Kiosk,
    Outcome,
    browser_case,
    editor_case,
    start_chromium,
    stop,
    tally,
    yad_case,
)
from tests.real_app_cases import (
    BROWSER_HELD_OUT,
    BROWSER_HELD_OUT_2,
    BROWSER_HELD_OUT_3,
    EDITOR_HELD_OUT,
    EDITOR_HELD_OUT_2,
    EDITOR_HELD_OUT_3,
    YAD_HELD_OUT,
    YAD_HELD_OUT_2,
    YAD_HELD_OUT_3,
    Case,
)

SETS = {
    "first (seen)": (BROWSER_HELD_OUT, YAD_HELD_OUT, EDITOR_HELD_OUT),
    "second (seen)": (BROWSER_HELD_OUT_2, YAD_HELD_OUT_2, EDITOR_HELD_OUT_2),
    "third (unseen)": (BROWSER_HELD_OUT_3, YAD_HELD_OUT_3, EDITOR_HELD_OUT_3),
}


def _run(tag: str, browser_cases: tuple[Case, ...], yad_cases: tuple[Case, ...],
         editor_cases: tuple[Case, ...], browser: Browser, tmp: Path) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for i, case in enumerate(browser_cases):
        kiosk = Kiosk(str(tmp / f"{tag}b{i}.sqlite"))
        outcomes.append(browser_case(browser, kiosk, case.name, case.commands,
                                     dict(case.wanted)))
    for i, case in enumerate(yad_cases):
        kiosk = Kiosk(str(tmp / f"{tag}y{i}.sqlite"))
        outcomes.append(yad_case(kiosk, case.name, case.commands, dict(case.wanted)))
    for editor, cmd in sorted(EDITORS.items()):
        for i, case in enumerate(editor_cases):
            kiosk = Kiosk(str(tmp / f"{tag}{editor}{i}.sqlite"))
            outcomes.append(editor_case(cmd, tmp / f"{tag}{editor}{i}.txt", kiosk,
                                        f"{case.name} ({editor})", case.commands,
                                        dict(case.wanted)))
    return outcomes


def test_held_out_cases(real_session: Path, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    wrong: list[Outcome] = []
    for n, (name, cases) in enumerate(SETS.items()):
        # Each set on a fresh page: one set's ticks and sent form are not another's.
        form = FormServer()
        browser = start_chromium(tmp_path / f"chromium{n}", form)
        try:
            outcomes = _run(f"s{n}", *cases, browser, tmp_path)
        finally:
            stop(browser.proc)
            form.close()
        with capsys.disabled():
            print(f"\nheld-out real-app cases, {name} set: {tally(outcomes)}")
            for o in outcomes:
                if o.kind != "right":
                    print(f"  {o.kind}: {o.case}: {o.detail}")
        wrong += [o for o in outcomes if o.kind == "wrong"]
    assert not wrong
