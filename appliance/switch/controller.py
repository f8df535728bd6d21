"""The switch controller the kiosk runs: presses in; journal, session, voice and panel out.

Every press is journaled with what it meant before anything is done about it. What it does runs
through `Session.choose`, so a switch goes through the same validate -> confirm -> act path as a
spoken command. Time: presses carry their monotonic `t`, `tick(now)` gives scanning its clock,
and `clock` (wall time, the session's) decides when an open question has waited long enough.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Literal

from appliance.desktop.model import Desktop, DesktopError
from appliance.intents.model import Cancel, Confirm, Deny, Intent, Undo
from appliance.intents.planner import Planner
from appliance.journal.application import Journal
from appliance.journal.store import StoreError
from appliance.panel.state import Mode, PanelState
from appliance.session import TurnReport
from appliance.settings import Settings
from appliance.switch.meaning import Meaning, Moment, meaning_of
from appliance.switch.menu import Command, Menu, MenuItem, learning_menu, options_menu, scan_menu
from appliance.switch.model import Edge, Press
from appliance.switch.scan import Offer, Scanner, ScanTiming, Stopped
from appliance.switch.talk import PushToTalk
from appliance.turn import Turn
from appliance.voice.sink import EnrolAction, EnrolState
from appliance.wiring import new_session

DesktopFactory = Callable[[], AbstractContextManager[Desktop]]
Listen = Literal["start", "stop", "cancel"]
"""What the voice layer is asked to do (from monotonic time t): listen, stop and run what was
heard, or drop it. `push_to_talk` turns these into calls on the voice side's `PushToTalk`."""

NO_JOURNAL = "I can't write to my journal, so I did nothing."
STOPPED = "Scanning stopped."
NO_VOICE_TO_LEARN = "I can learn a voice only while I listen to the microphone."
LEARNING: dict[Command, EnrolAction] = {
    "learn_voice": "start", "pause_learning": "pause", "skip_phrase": "skip",
    "stop_learning": "stop",
}
"""The switch menu's choices that steer learning the person's voice."""
YES_HINT = "Press for yes."
QUESTION_POLL_S = 1.0


class SwitchController:
    """Keeps the moment (idle, listening, a question open, scanning) and acts on each press."""

    def __init__(
        self,
        journal: Journal,
        desktop: DesktopFactory,
        planner: Planner,
        *,
        speak: Callable[[str], None],
        show: Callable[[PanelState], None],
        listen: Callable[[Listen, float], None] | None = None,
        learn_voice: Callable[[EnrolAction], None] | None = None,
        learning_voice: Callable[[], EnrolState] = lambda: "off",
        clock: Callable[[], float] = time.time,
        device: str = "switch",
    ) -> None:
        """`learn_voice`: enrolment at the kiosk started, paused, skipped on or stopped;
        `learning_voice`: whether it is going on now."""
        self.journal = journal
        self.desktop = desktop
        self.planner = planner
        self.speak = speak
        self.show = show
        self.listen = listen or (lambda _action, _t: None)
        self.learn_voice = learn_voice or (lambda _action: self._say(NO_VOICE_TO_LEARN))
        self.learning_voice = learning_voice
        self.clock = clock
        self.device = device
        self.settings: Settings = journal.settings()
        self.scanner = Scanner(ScanTiming.from_settings(self.settings))
        self.listening = False
        self.question_expires: float | None = None  # wall clock, while a question is open
        self._top: Menu | None = None
        self._from_scan = False  # the open question came from a scan selection
        self._released: tuple[int, float, Meaning, str] | None = None
        self._transcript = ""
        self._reply = ""
        self._looked_at = float("-inf")

    # -- input -------------------------------------------------------------------------

    def feed(self, items: Iterable[Edge | Press]) -> list[Meaning]:
        return [self.handle(item) for item in items]

    def handle(self, item: Edge | Press) -> Meaning:
        """Act on one accepted edge or press; returns what it meant."""
        try:
            return self._handle(item)
        except StoreError:
            # Without the journal there is no record of what happened: do nothing, say so.
            self.scanner.stop()
            self._say(NO_JOURNAL)
            return "none"

    def tick(self, now: float) -> None:
        """Move the scan on (`now`: monotonic seconds) and time out a question left unanswered."""
        try:
            self._tick(now)
        except StoreError:
            self.scanner.stop()
            self._say(NO_JOURNAL)

    def _tick(self, now: float) -> None:
        if now - self._looked_at >= QUESTION_POLL_S and not self.listening:
            # A question may have been asked by voice: look now and then, not on every tick.
            self._looked_at = now
            self._refresh_question()
        shown: Offer | None = None
        for event in self.scanner.tick(now):
            if isinstance(event, Stopped):
                shown = None
                self._from_scan = False
                self._say(STOPPED)
            else:
                shown = event
        if shown is not None:
            self._announce(shown)
        if self.question_expires is not None and self.clock() > self.question_expires:
            self._expire()

    def next_due(self) -> float | None:
        """The monotonic time the next `tick` has work (an offer to make); None if none is timed."""
        return self.scanner.due()

    def listening_ended(self) -> None:
        """The voice layer finished the utterance a press started: pick up any question it asked."""
        self.listening = False
        self._refresh_question()
        self._show()

    def moment(self) -> Moment:
        if self.listening:
            return "listening"
        if self.scanner.active:
            return "scanning"
        pending = self._refresh_question()
        if pending is None:
            return "idle" if self.learning_voice() == "off" else "enrolling"
        return "choosing" if pending.asks_which else "confirming"

    # -- inside: input -----------------------------------------------------------------

    def _handle(self, item: Edge | Press) -> Meaning:
        if isinstance(item, Edge):
            return self._edge(item)
        self.settings = self.journal.settings()
        released = self._released
        self._released = None
        if released is not None and item.gesture == "tap" and released[:2] == (item.switch, item.t):
            # The release already acted (hold-to-scan, hold-to-talk): record it, don't repeat it.
            self.journal.switch_pressed(self.device, item.switch, item.gesture, released[3])
            return released[2]
        moment = self.moment()
        meaning = meaning_of(item, moment, self.settings)
        self.journal.switch_pressed(self.device, item.switch, item.gesture, self._words(meaning))
        by_edges = moment == "scanning" and self.settings.scan_hold_to_scan and item.switch == 1
        if not by_edges:
            # Hold-to-talk listens from when the switch went down, not from when the hold was known.
            held = meaning == "talk_start" and item.gesture == "hold"
            self._do(meaning, item.t - item.held_s if held else item.t)
        return meaning

    def _edge(self, edge: Edge) -> Meaning:
        if not (self.listening or self.scanner.active):
            return "none"  # edges only steer hold-to-talk and hold-to-scan
        meaning = meaning_of(edge, self.moment(), self.settings)
        if meaning == "none":
            return meaning
        if not edge.down:
            self._released = (edge.switch, edge.t, meaning, self._words(meaning))
        if meaning == "scan_hold":
            self.scanner.hold(edge.t)
        else:
            self._do(meaning, edge.t)
        return meaning

    def _words(self, meaning: Meaning) -> str:
        """The journaled meaning, with the item a scan press chose."""
        offer = self.scanner.current
        if meaning == "scan_select" and offer is not None:
            return f"{meaning}: {offer.item.label}"
        return meaning

    def _do(self, meaning: Meaning, t: float) -> None:
        match meaning:
            case "talk_start" | "talk_stop":
                self._talk("start" if meaning == "talk_start" else "stop", t)
            case "cancel" if self.listening:
                self._talk("cancel", t)
            case "cancel":
                self._run(Cancel(words="cancel"), "cancel", t)
            case "yes":
                self._run(Confirm(words="yes"), "yes", t)
            case "no":
                self._run(Deny(words="no"), "no", t)
            case "undo":
                self._run(Undo(words="undo"), "undo", t)
            case "scan_start":
                self._scan(t)
            case "scan_next" if self.scanner.active:
                self._announce(self.scanner.next(t))
            case "scan_select":
                held = self.settings.scan_hold_to_scan
                offer = self.scanner.release() if held else self.scanner.current
                if offer is not None:
                    self._select(offer.item, t)
            case "scan_stop":
                self.scanner.stop()
                self._from_scan = False
                self._say(STOPPED)
            case "enrol_pause":
                self.learn_voice("start" if self.learning_voice() == "paused" else "pause")
            case "enrol_skip":
                self.learn_voice("skip")
            case "enrol_stop":
                self.learn_voice("stop")

    # -- inside: scanning --------------------------------------------------------------

    def _scan(self, t: float) -> None:
        self.scanner = Scanner(ScanTiming.from_settings(self.settings))
        pending = self.journal.pending_turn()
        learning = self.learning_voice()
        if pending is not None and pending.asks_which:
            menu = options_menu(pending.prompt, pending.options)
        elif learning != "off":
            menu = learning_menu(paused=learning == "paused")
        else:
            try:
                with self.desktop() as screen:
                    menu = scan_menu(screen.snapshot())
            except DesktopError as e:
                self._say(str(e))
                return
        self._top = menu
        self._announce(self.scanner.start(menu, t))

    def _select(self, item: MenuItem, t: float) -> None:
        if item.submenu is not None:
            self._announce(self.scanner.start(item.submenu, t))
        elif item.command == "back" and self._top is not None:
            self._announce(self.scanner.start(self._top, t))
        elif item.command == "stop":
            self.scanner.stop()
            self._from_scan = False
            self._say(STOPPED)
        elif item.command == "talk":
            self.scanner.stop()
            self._talk("start", t)
        elif item.command in LEARNING:
            self.scanner.stop()
            self.learn_voice(LEARNING[item.command])
        elif item.intent is not None:
            self.scanner.stop()
            self._from_scan = True
            report = self._run(item.intent, item.words, t)
            if item.talk_after and report is not None and report.decision == "executed":
                self._from_scan = False
                self._talk("start", t)

    def _announce(self, offer: Offer) -> None:
        self.speak(offer.item.label)
        self.show(self._offered(offer))

    def _offered(self, offer: Offer) -> PanelState:
        return PanelState(
            mode="scanning",
            transcript=self._transcript,
            reply=self._reply,
            offer=offer.item.label,
            highlight=offer.item.bounds,
        )

    # -- inside: the session -----------------------------------------------------------

    def _run(self, intent: Intent, words: str, t: float) -> TurnReport | None:
        """One intent through `Session.choose`; what it says is spoken and shown."""
        self._transcript = words
        self._show("thinking")
        try:
            with self.desktop() as screen:
                session = new_session(
                    self.journal, screen, self.planner, clock=self.clock, device=self.device
                )
                report = session.choose(intent, words, trigger="switch")
        except DesktopError as e:
            self._say(str(e))
            return None
        pending = self._refresh_question()
        hint = [YES_HINT] if pending is not None and not pending.asks_which else []
        self._say(" ".join([*report.notices, report.spoken, *hint]).strip())
        if pending is not None:
            if pending.asks_which and self.settings.scan_mode != "off":
                self._scan(t)  # offer the options straight away
        elif self._from_scan:
            self._from_scan = False
            if self.settings.scan_mode != "off":
                self._scan(t)  # carry on from the top, as Switch Control does
        return report

    def _expire(self) -> None:
        try:
            with self.desktop() as screen:
                session = new_session(
                    self.journal, screen, self.planner, clock=self.clock, device=self.device
                )
                text = session.expire_due()
        except DesktopError as e:
            text = str(e)
        self.question_expires = None
        if text:  # it had not been answered some other way meanwhile
            self._from_scan = False
            self.scanner.stop()
            self._say(text)

    def _refresh_question(self) -> Turn | None:
        pending = self.journal.pending_turn()
        self.question_expires = pending.expires_at if pending is not None else None
        return pending

    # -- inside: voice and panel -------------------------------------------------------

    def _talk(self, action: Listen, t: float) -> None:
        self.listening = action == "start"
        self.listen(action, t)
        self._show("listening" if self.listening else "thinking" if action == "stop" else None)

    def _say(self, text: str) -> None:
        self._reply = text or self._reply
        if text:
            self.speak(text)
        self._show()

    def _show(self, mode: Mode | None = None) -> None:
        offer = self.scanner.current
        if mode is None and offer is not None:
            self.show(self._offered(offer))
            return
        if mode is None:
            mode = "listening" if self.listening else "idle"
            if not self.listening and self.question_expires is not None:
                mode = "confirming"
        self.show(PanelState(mode=mode, transcript=self._transcript, reply=self._reply))


def push_to_talk(talk: PushToTalk) -> Callable[[Listen, float], None]:
    """The `listen` callback for the voice pipeline's push-to-talk gate."""

    def listen(action: Listen, t: float) -> None:
        if action == "start":
            if talk.mode == "hold":
                talk.down(t)
            else:
                talk.tap(t)
        elif talk.mode == "hold":
            talk.up(t)
        if action == "cancel":
            talk.cancel()

    return listen
