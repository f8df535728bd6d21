"""The voice layer's TurnSink on a real `Session`: what is heard runs as a turn."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from uuid import UUID

from appliance.desktop.model import Desktop, Snapshot
from appliance.intents.aliases import Named, names_on_screen
from appliance.intents.planner import Planner
from appliance.journal.application import Journal
from appliance.journal.serving import renewed
from appliance.journal.store import StoreError
from appliance.session import TurnReport
from appliance.turn import Outcome
from appliance.voice.hearing.clarity import doubt_of
from appliance.voice.sink import Reply, ScreenNames, Utterance, screen_names_of, vocabulary_of
from appliance.wiring import new_session

DesktopFactory = Callable[[], AbstractContextManager[Desktop]]
SAY_AGAIN = "I could not finish that; please say it again."


class SessionSink:
    """Runs each utterance through `Session.say`; records `Spoke` once the audio is out."""

    def __init__(
        self,
        journal: Journal,
        desktop: DesktopFactory,
        planner: Planner,
        on_report: Callable[[TurnReport], None] | None = None,
        device: str = "microphone",
        on_journal: Callable[[Journal], None] | None = None,
    ) -> None:
        self.journal = journal
        self.on_journal = on_journal  # hears of the journal it goes on in after damage
        self.desktop = desktop
        self.planner = planner
        self.on_report = on_report
        self.device = device
        # The screen is read by the recognizer's thread and acted on by the turn's: one at a
        # time, since AT-SPI's GLib bindings failed with two threads in them at once.
        self._screen = threading.Lock()

    def vocabulary(self) -> list[str]:
        return vocabulary_of(self.screen_names())

    def screen_names(self) -> ScreenNames:
        """The names the grammar's {target} and {app} take on this screen (the closed set)."""
        with self._screen, self.desktop() as screen:
            snapshot = screen.snapshot()
            aliases = self.journal.aliases()  # under the lock: a turn uses the journal too
        names = screen_names_of(snapshot)
        # Names the person gave elements on this screen ("my doctor"): sentences said with them.
        given = names_on_screen(snapshot, aliases)
        return names._replace(targets=tuple(dict.fromkeys((*names.targets, *given))),
                              toggles=_with_given(names.toggles or (), snapshot, aliases),
                              selectable=_with_given(names.selectable or (), snapshot, aliases))

    def use(self, journal: Journal) -> None:
        """Go on in `journal`: the damaged one was set aside (by this process or another)."""
        self.journal = journal

    def _renewed(
        self, error: BaseException | None = None, notices: list[str] | None = None
    ) -> bool:
        """Go on in a fresh journal if the one open was set aside or is damaged past serving
        (appliance/journal/serving.py); True when it did."""
        fresh = renewed(self.journal, error, notices or [])
        if fresh is None:
            return False
        self.journal = fresh
        if self.on_journal is not None:
            self.on_journal(fresh)
        return True

    def handle(self, utterance: Utterance) -> Reply:
        self._renewed()  # set aside by another process since the last turn: its notice is said
        try:
            with self._screen, self.desktop() as screen:
                session = new_session(
                    self.journal, screen, self.planner, speaks_later=True, device=self.device
                )
                report = session.say(
                    utterance.text,
                    trigger="voice",
                    engine=utterance.engine,
                    confidence=utterance.confidence,
                    timings=utterance.timings,
                    doubt=doubt_of(utterance),
                )
        except Exception as e:
            if self._renewed(error=e):  # a damaged page, met part-way: the kiosk goes on
                return Reply("", " ".join([*self.journal.take_notices(), SAY_AGAIN]), False)
            if isinstance(e, StoreError):
                # The journal is the record of what happened: without it, do nothing, say so.
                return Reply("", "I can't write to my journal, so I did nothing.", False)
            raise
        turn_id = report.turn_id
        if self._renewed(notices=report.notices):  # the turn's reads met a damaged page
            report.notices = [*report.notices, *self.journal.take_notices()]
            turn_id = ""  # its turn stays in the file set aside: what is said is not recorded
        if self.on_report is not None:
            self.on_report(report)
        return Reply(
            turn_id,
            " ".join([*report.notices, report.spoken]).strip(),
            report.expects_answer,
            acted=report.decision == Outcome.executed,
        )

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        # Set aside meanwhile: the turn is in the old file, which is written no more.
        if not turn_id or self._renewed():
            return
        self.journal.spoke(UUID(turn_id), text, timings)

    def fault(self, message: str) -> None:
        """The microphone went away (or came back): journal it; the source retries by itself."""
        self._renewed()  # never into a file another process set aside
        self.journal.device_fault(self.device, message)


def _with_given(
    names: tuple[str, ...], snapshot: Snapshot, aliases: Sequence[Named]
) -> tuple[str, ...]:
    """`names`, and the names the person gave any of those elements on this screen."""
    given = names_on_screen(snapshot, [a for a in aliases if a.element in names])
    return tuple(dict.fromkeys((*names, *given)))
