"""The held-out real-application cases: written before tuning, run, never tuned on.

Counts (right / wrong without a question / asked / failed) go to the test's output; the test
asserts only the line that must never be crossed: no wrong control changed without a question.
The misses it prints are grammar and resolver work (choosing an option by a phrasing the
grammar reads as pressing the label; "use X for Y" unparsed), not the adapter's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.apps.real_apps import (
    EDITORS,
    Browser,
    Kiosk,
    Outcome,
    browser_case,
    editor_case,
    tally,
    yad_case,
)
from tests.real_app_cases import BROWSER_HELD_OUT, EDITOR_HELD_OUT, YAD_HELD_OUT


def test_held_out_cases(real_session: Path, real_browser: Browser, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    outcomes: list[Outcome] = []
    for i, case in enumerate(BROWSER_HELD_OUT):
        kiosk = Kiosk(str(tmp_path / f"b{i}.sqlite"))
        outcomes.append(browser_case(real_browser, kiosk, case.name, case.commands,
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
