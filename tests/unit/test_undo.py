"""Undo goes the way every action goes: ActionStarted on disk first, then the outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.audit.timeline import timeline
from appliance.desktop.model import Action, ActionResult, DesktopError
from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop
from appliance.journal.application import Journal
from appliance.settings import Settings
from appliance.wiring import build_planner, new_session
from tests.scenes import messages


class FailingRestore(SimDesktop):
    """Restoring fails, and changes nothing: raised, or reported as not taking effect."""

    raises = True

    def perform(self, action: Action) -> ActionResult:
        if action.kind != "restore":
            return super().perform(action)
        if self.raises:
            raise DesktopError("the window went away")
        return ActionResult(verified=False, detail="still there")


@pytest.mark.parametrize(
    ("raises", "spoken", "error"),
    [
        (True, "I couldn't undo that: the window went away", "the window went away"),
        (False, "I tried to undo that, but it didn't take.", "undo not verified: still there"),
    ],
)
def test_an_undo_that_fails_is_journaled_like_any_failed_action(
    tmp_path: Path, raises: bool, spoken: str, error: str
) -> None:
    store = str(tmp_path / "journal.sqlite")
    desktop = FailingRestore(Scene.model_validate(messages()))
    desktop.raises = raises
    session = new_session(Journal(store), desktop, build_planner(Settings(llm="off")))
    assert session.say("select doctor").decision == "executed"
    undo = session.say("undo")
    assert (undo.decision, undo.spoken) == ("failed", spoken)
    rows = timeline(Journal(store), turn=undo.turn_id)
    names = [r["event"] for r in rows]
    assert names[-4:] == ["ActionStarted", "ActionFailed", "Spoke", "TurnEnded"]
    assert rows[-3]["detail"] == error and rows[-4]["data"]["action"]["kind"] == "restore"
    assert "Undone" not in [r["event"] for r in timeline(Journal(store))]
    assert session.say("undo").decision == "failed"  # still undoable: nothing was undone
