"""The switch controller on the sim desktop with a real SQLite journal and the grammar planner.

Time is virtual: presses carry their own `t`, the test calls `tick(now)`, and the session's wall
clock is a number the test moves. Where edges matter, they go through the real `Gestures`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import pytest

from appliance.desktop.model import Desktop
from appliance.desktop.scene import Scene
from appliance.desktop.sim import SimDesktop
from appliance.intents.grammar import GrammarPlanner
from appliance.journal.application import Journal
from appliance.journal.store import StoreError
from appliance.panel.state import PanelState
from appliance.session import Session
from appliance.switch.controller import (
    NO_JOURNAL,
    STOPPED,
    YES_HINT,
    Listen,
    SwitchController,
    push_to_talk,
)
from appliance.switch.gestures import Gestures
from appliance.switch.model import Edge, Gesture, Press
from appliance.switch.talk import PushToTalk
from appliance.turn import Turn
from appliance.voice.sink import EnrolAction, EnrolState
from tests.scenes import messages

CONTROLS = "Message, Urgent and 3 more"
SEND_QUESTION = f"Send needs a yes. Say yes to send, or no. {YES_HINT}"


class Kiosk:
    """What the kiosk gives the controller: a voice, a panel, a microphone, two clocks."""

    def __init__(self, tmp: Path, scene: dict[str, Any] | None = None, **settings: Any) -> None:
        self.journal = Journal(str(tmp / "journal.sqlite"))
        for key, value in settings.items():
            self.journal.change_setting(key, value, by="test")
        self.desktop = SimDesktop(Scene.model_validate(scene or messages()))
        self.said: list[str] = []
        self.panel: list[PanelState] = []
        self.mic: list[Listen] = []
        self.mic_at: list[float] = []
        self.learning: EnrolState = "off"  # as the voice side would say
        self.asked: list[EnrolAction] = []  # what learning the voice was asked to do
        self.wall = 1_000_000.0
        self.now = 0.0
        self.controller = SwitchController(
            self.journal,
            self.screen,
            GrammarPlanner(),
            speak=self.said.append,
            show=self.panel.append,
            listen=self.listen,
            learn_voice=self.learn_voice,
            learning_voice=lambda: self.learning,
            clock=lambda: self.wall,
            device="test switch",
        )

    def learn_voice(self, action: EnrolAction) -> None:
        self.asked.append(action)
        after: dict[EnrolAction, EnrolState] = {
            "start": "taking", "pause": "paused", "skip": self.learning, "stop": "off"}
        self.learning = after[action]

    def screen(self) -> AbstractContextManager[Desktop]:
        return nullcontext(self.desktop)

    def listen(self, action: Listen, t: float) -> None:
        self.mic.append(action)
        self.mic_at.append(t)

    def tap(self, switch: int = 1) -> str:
        return self.controller.handle(Press(switch, "tap", self.now, 0.2))

    def press(self, switch: int, gesture: Gesture) -> str:
        held = {"tap": 0.2, "hold": 0.8, "long_hold": 2.5}[gesture]
        return self.controller.handle(Press(switch, gesture, self.now, held))

    def wait(self, seconds: float) -> None:
        """Let virtual time pass in 50 ms ticks, as the kiosk's loop would."""
        end = self.now + seconds
        while self.now < end - 1e-9:
            self.now = round(self.now + 0.05, 6)
            self.controller.tick(self.now)

    def scan_to(self, label: str, limit: float = 30.0) -> None:
        """Tick until `label` is offered (and fail if it never is)."""
        start = self.now
        while self.offered() != label:
            assert self.now - start < limit, f"{label!r} never offered; said {self.said[-8:]}"
            self.wait(0.05)

    def offered_after(self, steps: int) -> str | None:
        """Step scanning: switch 1 opens the menu, switch 2 moves on `steps` times."""
        self.tap()
        for _ in range(steps):
            self.tap(2)
        return self.offered()

    def mode(self) -> str:
        return self.panel[-1].mode

    def offered(self) -> str | None:
        offer = self.controller.scanner.current
        return offer.item.label if offer else None

    def element(self, name: str) -> dict[str, Any]:
        for node_id, *_rest, el in self.desktop._walk():
            if el.name == name:
                state = self.desktop.state_of(node_id)
                return {"value": state.value, "states": state.states, "presses": state.activations}
        raise AssertionError(name)

    def presses(self) -> list[tuple[int, str, str]]:
        return [
            (e.switch, e.gesture, e.meaning)
            for _id, e in self.journal.domain_events()
            if type(e).__qualname__ == "Device.SwitchPressed"
        ]

    def turns(self) -> list[Turn]:
        return list(reversed(self.journal.recent_turns()))


@pytest.fixture
def tmp(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


def test_auto_scan_reaches_send_press_selects_press_confirms(tmp: Path) -> None:
    k = Kiosk(tmp, scan_mode="auto")
    assert k.tap() == "scan_start"
    assert k.offered() == CONTROLS and k.said == [CONTROLS]
    assert k.mode() == "scanning" and k.panel[-1].offer == CONTROLS
    assert k.tap() == "scan_select"  # into the group
    k.scan_to("Send")
    assert k.tap() == "scan_select"
    assert k.said[-1] == SEND_QUESTION
    assert k.mode() == "confirming" and not k.controller.scanner.active
    assert k.element("Status")["value"] == "Draft"  # nothing sent before the yes
    assert k.controller.moment() == "confirming"
    assert k.tap() == "yes"
    assert k.element("Status")["value"] == "Message sent"
    assert k.element("Send")["presses"] == 1
    assert "Pressed Send." in k.said
    assert k.offered() == CONTROLS  # scanning carries on from the top
    assert k.presses() == [
        (1, "tap", "scan_start"),
        (1, "tap", f"scan_select: {CONTROLS}"),
        (1, "tap", "scan_select: Send"),
        (1, "tap", "yes"),
    ]
    send = k.turns()[-1]
    assert (send.trigger, send.confirmed_by, send.outcome) == ("switch", "switch", "executed")
    assert send.intent == {
        "confidence": 1.0,
        "words": "press Send",
        "intent": "activate",
        "target": "Send",
    }


def test_scan_offers_each_item_for_the_interval_and_stops_after_the_loops(tmp: Path) -> None:
    k = Kiosk(tmp, scan_mode="auto", scan_interval_s=1.0, scan_pause_first_s=0.5, scan_loops=2)
    k.tap()
    k.wait(1.45)
    assert k.offered() == CONTROLS
    k.wait(0.1)
    assert k.offered() == "Contacts"
    k.wait(60)
    assert not k.controller.scanner.active and k.said[-1] == STOPPED
    offers = [s for s in k.said if s != STOPPED]
    top = [CONTROLS, "Contacts", "Speak a command", "Undo", "Cancel", "Learn my voice",
           "Stop scanning"]
    assert offers == top * 2
    assert k.mode() == "idle"


def test_step_scanning_two_switches(tmp: Path) -> None:
    k = Kiosk(tmp, scan_mode="step")
    assert k.tap(2) == "scan_start"
    k.wait(30)
    assert k.offered() == CONTROLS  # no timer in step scanning
    assert k.tap(2) == "scan_next" and k.offered() == "Contacts"
    k.tap(1)
    assert k.offered() == "Grandma"
    k.tap(2)
    k.tap(1)  # Doctor
    assert "selected" in k.element("Doctor")["states"]
    assert "selected" not in k.element("Grandma")["states"]
    assert k.said[-2:] == ["Selected Doctor.", CONTROLS]


def test_switch_two_says_no(tmp: Path) -> None:
    k = Kiosk(tmp, scan_mode="step")
    k.tap(1)
    k.tap(1)  # into the controls
    k.tap(2)
    k.tap(2)  # Send
    assert k.offered() == "Send"
    k.tap(1)
    assert k.controller.moment() == "confirming"
    assert k.tap(2) == "no"
    assert k.element("Status")["value"] == "Draft" and k.element("Send")["presses"] == 0
    turn = k.turns()[-1]
    assert turn.outcome == "cancelled" and turn.confirmed_by == ""


def test_one_switch_no_press_before_timeout_is_no(tmp: Path) -> None:
    k = Kiosk(tmp, scan_mode="auto", confirm_timeout_s=10.0)
    k.tap()
    k.tap()
    k.scan_to("Send")
    k.tap()
    assert k.controller.question_expires == k.wall + 10.0
    k.wall += 9.0
    k.wait(1.0)
    assert k.turns()[-1].pending
    k.wall += 1.5
    k.wait(0.05)
    assert k.said[-1] == "The earlier question timed out, so I did nothing."
    assert k.turns()[-1].outcome == "timed_out"
    assert k.element("Send")["presses"] == 0
    assert k.controller.moment() == "idle" and k.mode() == "idle"


def test_tap_to_talk_and_tap_to_stop(tmp: Path) -> None:
    k = Kiosk(tmp)
    assert k.tap() == "talk_start"
    assert k.mic == ["start"] and k.mode() == "listening"
    assert k.controller.moment() == "listening"
    assert k.tap() == "talk_stop"
    assert k.mic == ["start", "stop"]
    k.controller.listening_ended()
    assert k.controller.moment() == "idle"
    assert k.tap() == "talk_start"
    assert k.tap(2) == "cancel"
    assert k.mic[-1] == "cancel"
    assert [m for _s, _g, m in k.presses()] == ["talk_start", "talk_stop", "talk_start", "cancel"]


def test_hold_to_talk_through_real_gestures(tmp: Path) -> None:
    """Edges go through the real recogniser: listening starts at the hold, stops at release."""
    k = Kiosk(tmp, switch_talk="hold")
    gestures = Gestures(k.journal.settings())
    k.controller.feed(gestures.feed(Edge(1, True, 0.0)))
    k.controller.feed(gestures.tick(0.81))
    assert k.mic == ["start"]
    k.controller.feed(gestures.tick(3.0))  # a long sentence: the long hold is not a cancel
    k.controller.feed(gestures.feed(Edge(1, False, 4.0)))
    assert k.mic == ["start", "stop"]
    assert k.mic_at == [0.0, 4.0]  # from the moment the switch went down
    assert k.presses() == [(1, "hold", "talk_start"), (1, "long_hold", "none")]


def gate(k: Kiosk) -> tuple[PushToTalk, Gestures]:
    """The voice side's real PushToTalk, told what the controller asks of the microphone."""
    talk = PushToTalk.from_settings(k.journal.settings())
    to_gate = push_to_talk(talk)

    def listen(action: Listen, t: float) -> None:
        k.listen(action, t)
        to_gate(action, t)

    k.controller.listen = listen
    return talk, Gestures(k.journal.settings())


def test_push_to_talk_gate_tap_mode(tmp: Path) -> None:
    k = Kiosk(tmp)
    talk, gestures = gate(k)
    assert not talk.claims(1.0, 2.0)  # no press: speech needs the wake phrase
    k.controller.feed(gestures.feed(Edge(1, True, 10.0)))
    k.controller.feed(gestures.feed(Edge(1, False, 10.2)))
    assert k.mic_at == [10.2] and talk.claims(11.0, 12.5)
    k.controller.listening_ended()
    assert not talk.claims(20.0, 21.0)  # one press, one command
    k.now = 30.0
    k.tap()
    k.tap(2)
    assert k.mic[-1] == "cancel" and not talk.claims(31.0, 32.0)


def test_push_to_talk_gate_hold_mode(tmp: Path) -> None:
    k = Kiosk(tmp, switch_talk="hold")
    talk, gestures = gate(k)
    k.controller.feed(gestures.feed(Edge(1, True, 10.0)))
    for t in (10.5, 10.9, 12.0):
        k.controller.feed(gestures.tick(t))
    k.controller.feed(gestures.feed(Edge(1, False, 13.0)))
    assert k.mic == ["start", "stop"] and k.mic_at == [10.0, 13.0]
    assert talk.claims(10.2, 12.5)  # speech begun while held
    assert not talk.claims(14.0, 15.0)  # and not after the release


def test_spoken_question_answered_by_switch(tmp: Path) -> None:
    """A question asked by voice (through the same journal) takes a switch press as its yes."""
    k = Kiosk(tmp)
    Session(k.journal, k.desktop, GrammarPlanner(), clock=lambda: k.wall).say("press send")
    assert k.controller.moment() == "confirming"
    assert k.tap() == "yes"
    assert k.element("Send")["presses"] == 1
    assert k.turns()[-1].confirmed_by == "switch"


def test_long_hold_undoes_the_last_turn_and_cancels_a_question(tmp: Path) -> None:
    k = Kiosk(tmp, scan_mode="step")
    k.tap()
    k.tap()
    k.tap(2)  # Urgent, ticked
    assert k.offered() == "Urgent, ticked"
    k.tap()
    assert "checked" not in k.element("Urgent")["states"]
    k.press(1, "long_hold")  # while scanning: stop scanning
    assert not k.controller.scanner.active and k.said[-1] == STOPPED
    assert k.press(1, "hold") == "none"
    assert k.press(1, "long_hold") == "undo"
    assert "checked" in k.element("Urgent")["states"]
    assert k.turns()[-1].outcome == "undone"
    Session(k.journal, k.desktop, GrammarPlanner(), clock=lambda: k.wall).say("press send")
    assert k.press(2, "long_hold") == "cancel"
    assert k.turns()[-1].outcome == "cancelled" and k.element("Send")["presses"] == 0


def test_which_question_is_answered_by_scanning_its_options(tmp: Path) -> None:
    data = messages()
    window = data["applications"][0]["windows"][0]["children"]
    window += [
        {"role": "push button", "name": "Save draft"},
        {"role": "push button", "name": "Save copy"},
    ]
    k = Kiosk(tmp, data)
    Session(k.journal, k.desktop, GrammarPlanner(), clock=lambda: k.wall).say("press save")
    assert k.controller.moment() == "choosing"
    assert k.tap() == "scan_start"
    assert k.offered() == "Save draft"
    k.scan_to("Save copy")
    assert k.tap() == "scan_select"
    assert k.element("Save copy")["presses"] == 1 and k.element("Save draft")["presses"] == 0
    assert k.turns()[-1].outcome == "executed"


def test_text_field_is_focused_then_listened_for(tmp: Path) -> None:
    k = Kiosk(tmp, scan_mode="step")
    k.tap()
    k.tap()
    assert k.offered() == "Message, text field"
    k.tap()
    assert "focused" in k.element("Message")["states"]
    assert k.mic == ["start"] and k.controller.moment() == "listening"


def test_fixed_items(tmp: Path) -> None:
    k = Kiosk(tmp, scan_mode="step")
    assert k.offered_after(2) == "Speak a command"
    k.tap()
    assert k.mic == ["start"] and not k.controller.scanner.active
    k.tap(2)  # cancel listening
    assert k.offered_after(5) == "Learn my voice"
    k.tap()
    assert k.asked == ["start"] and not k.controller.scanner.active
    k.learning = "off"  # the person said "stop" to it
    assert k.offered_after(6) == "Stop scanning"
    k.tap()
    assert not k.controller.scanner.active and k.said[-1] == STOPPED
    k.tap()
    k.tap()  # into the controls
    for _ in range(5):
        k.tap(2)
    assert k.offered() == "Back"
    k.tap()
    assert k.offered() == CONTROLS


def test_while_learning_the_voice_the_scan_pauses_skips_and_stops_it(tmp: Path) -> None:
    """Learning the person's voice takes the switch: its menu pauses, goes on, skips a phrase
    and stops; once it has stopped the screen's menu is back."""
    k = Kiosk(tmp, scan_mode="step")
    k.learning = "taking"
    k.tap()
    assert k.controller.moment() == "scanning" and k.offered() == "Pause learning my voice"
    k.tap(2)
    assert k.offered() == "Skip this phrase"
    k.tap()
    assert k.asked == ["skip"] and not k.controller.scanner.active
    assert k.offered_after(0) == "Pause learning my voice"
    k.tap()
    assert k.learning == "paused" and k.controller.moment() == "enrolling"
    assert k.offered_after(0) == "Go on learning my voice"
    k.tap()  # go on
    assert k.offered_after(2) == "Stop learning my voice"
    k.tap()
    assert k.asked == ["skip", "pause", "start", "stop"] and k.learning == "off"
    k.tap()
    assert k.offered() == CONTROLS, "the screen's own menu again"
    assert [m for _s, _g, m in k.presses()][:2] == ["scan_start", "scan_next"]
    assert ("scan_select: Skip this phrase") in [m for _s, _g, m in k.presses()]


def test_while_learning_the_voice_without_scanning_taps_pause_and_skip(tmp: Path) -> None:
    """With scanning off, switch 1 pauses and goes on, switch 2 skips the phrase, and a long
    hold stops; each press journaled with what it meant. No press is taken for talking."""
    k = Kiosk(tmp)
    k.learning = "taking"
    assert k.tap() == "enrol_pause" and k.learning == "paused"
    assert k.tap() == "enrol_pause" and k.learning == "taking"
    assert k.tap(2) == "enrol_skip"
    assert k.press(1, "long_hold") == "enrol_stop" and k.learning == "off"
    assert k.asked == ["pause", "start", "skip", "stop"] and k.mic == []
    assert [m for _s, _g, m in k.presses()] == [
        "enrol_pause", "enrol_pause", "enrol_skip", "enrol_stop"]
    assert k.tap() == "talk_start", "a tap talks again once learning stopped"


def test_hold_to_scan_through_real_gestures(tmp: Path) -> None:
    """The scan moves while switch 1 is held and the release selects; the tap the release also
    makes is journaled but not acted on twice."""
    k = Kiosk(
        tmp, scan_mode="auto", scan_hold_to_scan=True, scan_interval_s=1.0, scan_pause_first_s=0.0
    )
    gestures = Gestures(k.journal.settings())

    def edge(down: bool, t: float) -> None:
        k.now = t
        k.controller.feed(gestures.feed(Edge(1, down, t)))

    def hold_for(t0: float, t1: float) -> None:
        edge(True, t0)
        t = t0
        while t < t1:
            t = round(t + 0.05, 6)
            k.controller.feed(gestures.tick(t))
            k.controller.tick(t)
        edge(False, t1)

    edge(True, 0.0)
    edge(False, 0.2)  # a tap starts scanning
    assert k.offered() == CONTROLS
    k.wait(10)
    assert k.offered() == CONTROLS  # not held: no movement
    hold_for(11.0, 11.3)  # a quick press selects what is offered
    assert k.offered() == "Message, text field"
    hold_for(12.0, 14.5)  # moves twice while held: Urgent, Send; release selects Send
    assert k.said[-1] == SEND_QUESTION
    edge(True, 15.0)
    edge(False, 15.2)  # a tap: yes
    assert k.element("Send")["presses"] == 1
    assert k.presses() == [
        (1, "tap", "scan_start"),
        (1, "tap", f"scan_select: {CONTROLS}"),
        (1, "hold", "scan_hold"),
        (1, "long_hold", "scan_hold"),
        (1, "tap", "yes"),
    ]


def test_every_press_is_journaled_even_when_it_means_nothing(tmp: Path) -> None:
    k = Kiosk(tmp)
    assert k.tap(2) == "none"
    assert k.press(1, "hold") == "none"
    assert k.presses() == [(2, "tap", "none"), (1, "hold", "none")]
    assert k.said == []


def test_journal_failure_does_nothing_and_says_so(tmp: Path) -> None:
    k = Kiosk(tmp, scan_mode="auto")

    def broken(*_a: object, **_k: object) -> None:
        raise StoreError("cannot write to the journal: disk I/O error")

    k.journal.switch_pressed = broken  # type: ignore[method-assign]
    assert k.tap() == "none"
    assert k.said == [NO_JOURNAL] and not k.controller.scanner.active


def test_a_question_asked_by_voice_times_out_on_ticks(tmp: Path) -> None:
    """No press at all: ticks notice the voice's question and time it out as a no."""
    k = Kiosk(tmp, confirm_timeout_s=5.0)
    Session(k.journal, k.desktop, GrammarPlanner(), clock=lambda: k.wall).say("press send")
    k.wait(1.0)
    assert k.controller.question_expires == k.wall + 5.0
    k.wall += 6.0
    k.wait(1.0)
    assert k.said == ["The earlier question timed out, so I did nothing."]
    assert k.turns()[-1].outcome == "timed_out" and k.element("Send")["presses"] == 0


def test_bench_runs_the_controller_end_to_end() -> None:
    """A short run of the benchmark's own code (timings are reported, not asserted)."""
    from appliance_lab.bench.switch import press_latency, scan_jitter

    latency = press_latency(rounds=2)
    assert latency["presses_journaled"] == 17
    assert latency["select_to_action_journaled"]["n"] == 2
    assert latency["yes_to_action_journaled"]["n"] == 2
    jitter = scan_jitter(steps=3, interval_s=0.3)
    assert jitter["n"] == 3 and jitter["max_ms"] >= jitter["p50_ms"] >= 0.0
