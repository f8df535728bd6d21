"""`appliance run`: one journal, with the voice pipeline, the switch and the status panel around it.

The voice pipeline runs turns on its own worker thread and the switch on its own; one lock makes
them take turns with the journal and the screen, so a press never lands half-way through a
spoken command. The switch and the panel are optional: no switch plugged in or no display means
a one-line notice and a voice-only kiosk.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appliance.desktop.marks import Marks
from appliance.intents.planner import Planner
from appliance.journal.application import Journal
from appliance.journal.serving import renewed
from appliance.journal.store import StoreError
from appliance.panel.link import NullPanel, Panel, PanelLink
from appliance.panel.state import Badge, Bounds, Mode, PanelState
from appliance.session import TurnReport, recover_interrupted
from appliance.switch.controller import (
    NO_VOICE_TO_LEARN,
    DesktopFactory,
    SwitchController,
    push_to_talk,
)
from appliance.switch.evdev_source import SwitchInput
from appliance.switch.model import Edge, Press
from appliance.switch.talk import PushToTalk, TalkingSink
from appliance.systemd_notify import ServiceNotifier
from appliance.turn import Outcome
from appliance.voice.sink import EnrolAction, Reply, TurnSink, Utterance
from appliance.web.handoff import CodeWatch, NoteWatch, spoken_code

if TYPE_CHECKING:
    from appliance.voice.audio.sources import AudioSource
    from appliance.voice.commands import VoiceControls

log = logging.getLogger(__name__)

TICK_S = 0.25  # the scan's clock has its own due times; this only bounds how late a timeout is
SWITCH_DEVICE = "switch"
ENROL_REQUEST_S = 120.0  # a caregiver's "learn her voice now" older than this is dropped unsaid
CANNOT_ENROL = ("I cannot learn a voice with the speech recognition in use here. A caregiver can "
                "check Health on the caregiver page.")


def overlay(marks: Marks | None) -> dict[str, Any]:
    """The badges and grid a `PanelState` draws for what "show numbers" or "show grid" shows."""
    if marks is None:
        return {"badges": (), "grid": None}
    if marks.kind == "numbers":
        return {"badges": tuple(Badge(number=m.number, bounds=Bounds(
            x=m.bounds[0], y=m.bounds[1], width=m.bounds[2], height=m.bounds[3]))
            for m in marks.numbers), "grid": None}
    g = marks.grid()
    cells = tuple(
        Badge(number=n, bounds=Bounds(x=c.x, y=c.y, width=c.width, height=c.height))
        for n, c in enumerate(g.cells(), start=1)
    )
    return {"badges": cells, "grid": Bounds(x=g.x, y=g.y, width=g.width, height=g.height)}


@dataclass
class PanelFeed:
    """Keeps the last transcript and reply so each state sent to the panel is a whole picture.

    The voice and switch threads both show states: one at a time, so lines never interleave."""

    panel: Panel
    transcript: str = ""
    reply: str = ""
    journal: str = ""
    marks: dict[str, Any] = field(default_factory=lambda: overlay(None))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def show(self, state: PanelState) -> None:
        with self.lock:
            self.transcript, self.reply = state.transcript, state.reply
            # never blocks (PanelLink writes without waiting)
            self.panel.show(state.model_copy(update={"journal": self.journal, **self.marks}))

    def overlay(self, marks: dict[str, Any] | None) -> None:
        """Numbers or the grid stay drawn across states until a turn hides them."""
        with self.lock:
            self.marks = overlay(Marks.model_validate(marks) if marks else None)

    def mode(self, mode: Mode, transcript: str | None = None, reply: str | None = None) -> None:
        with self.lock:
            self.transcript = self.transcript if transcript is None else transcript
            self.reply = self.reply if reply is None else reply
            state = PanelState(
                mode=mode, transcript=self.transcript, reply=self.reply, journal=self.journal,
                **self.marks,
            )
            self.panel.show(state)


class KioskSink(TalkingSink):
    """The voice side's sink: turns run under the kiosk lock and are shown on the panel."""

    def __init__(
        self,
        sink: TurnSink,
        talk: PushToTalk,
        lock: threading.RLock,
        feed: PanelFeed,
        after_turn: Callable[[], None],
        after_spoke: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(sink, talk)
        self.lock = lock
        self.feed = feed
        self.after_turn = after_turn
        self.after_spoke = after_spoke
        self._asks = False  # the last reply asked a question: the panel shows "yes or no"

    def handle(self, utterance: Utterance) -> Reply:
        self.feed.mode("thinking", transcript=utterance.text, reply="")
        with self.lock:
            reply = super().handle(utterance)
            self.after_turn()
        self._asks = reply.expects_answer
        self.feed.mode("speaking" if reply.spoken else self._after(), reply=reply.spoken)
        return reply

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        with self.lock:
            super().spoke(turn_id, text, timings)
            self.after_spoke()
        if turn_id:  # a turn's reply is out; words the switch had spoken (no turn) leave the
            self.feed.mode(self._after())  # panel to the switch side, e.g. still scanning

    def _after(self) -> Mode:
        return "confirming" if self._asks else "idle"


class Kiosk:
    """Owns the lock, the panel, push-to-talk and (when one is plugged in) the switch."""

    def __init__(
        self,
        journal: Journal,
        desktop: DesktopFactory,
        planner: Planner,
        panel: bool = True,
        switch: bool = True,
        on_notice: Callable[[str], None] = log.warning,
        pairing_file: Path | None = None,
        notes_file: Path | None = None,
        enrol_file: Path | None = None,
    ) -> None:
        self.journal = journal
        self.pairing = CodeWatch(pairing_file) if pairing_file else None
        self.notes = NoteWatch(notes_file) if notes_file else None
        self.enrol_requests = NoteWatch(enrol_file) if enrol_file else None
        self.voice: VoiceControls | None = None  # set once the voice pipeline runs
        self.on_notice = on_notice
        self.lock = threading.RLock()
        self.settings = journal.settings()
        shown = panel and bool(os.environ.get("DISPLAY"))
        self.feed = PanelFeed(PanelLink() if shown else NullPanel())
        self.talk = PushToTalk.from_settings(self.settings)
        self.speak: Callable[[str], None] = lambda text: log.info("not spoken: %s", text)
        self.controller = SwitchController(
            journal,
            desktop,
            planner,
            speak=lambda text: self.speak(text),
            show=self.feed.show,
            listen=push_to_talk(self.talk),
            learn_voice=self.learn_voice,
            learning_voice=lambda: "off" if self.voice is None else self.voice.enrolment(),
            device=SWITCH_DEVICE,
        )
        self.input: SwitchInput | None = None
        if switch:
            self.input = SwitchInput(self.settings, self.on_switch, self._on_fault)
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        # Who else holds the journal (the voice sink), told when a damaged one is set aside.
        self.followers: list[Callable[[Journal], None]] = []
        self._set_aside = ""  # after the panel's head once this process went on in a new journal

    def attach_voice(self, voice: VoiceControls) -> None:
        """The voice pipeline is up: the switch's words go out through its TTS from now on, and
        a caregiver's request to learn the person's voice can be met."""

        def speak(text: str) -> None:
            try:
                voice.say(text)
            except RuntimeError:  # the pipeline's loop has closed: the kiosk is stopping
                log.info("not spoken: %s", text)

        self.speak = speak
        self.voice = voice

    def sink(self, inner: TurnSink) -> KioskSink:
        return KioskSink(
            inner, self.talk, self.lock, self.feed, self._voice_turn_done, self._note_head
        )

    def start(self) -> None:
        self._note_head()
        self.feed.mode("idle")
        if self.input is not None:
            # No switch yet: say so once and keep looking; one may be plugged in later.
            self.input.start(wait=True)
        self._ticker = threading.Thread(target=self._tick, name="switch-tick", daemon=True)
        self._ticker.start()

    def recover(self) -> list[str]:
        """What a crash left half-done (an action with no outcome), marked and to be said."""
        with self.lock:
            try:
                return recover_interrupted(self.journal)
            except StoreError as e:
                log.warning("%s", e)
                return []

    def stop(self) -> None:
        self._stop.set()
        if self.input is not None:
            self.input.stop()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
        self.feed.panel.close()

    # -- threads -----------------------------------------------------------------------

    def on_switch(self, event: Edge | Press) -> None:
        with self.lock:
            self._follow()
            self.controller.handle(event)
            self._note_head()

    def _follow(self) -> None:
        """Before writing: never into a file another process set aside as damaged (its old
        position would stand as the new journal's witness); called under the lock."""
        try:
            fresh = renewed(self.journal)
        except StoreError as e:  # the new one cannot be opened: said, and tried again next time
            log.warning("%s", e)
            return
        if fresh is not None:
            self.use_journal(fresh)

    def use_journal(self, journal: Journal) -> None:
        """Go on in `journal`: the damaged one was set aside (appliance/journal/serving.py).
        The panel says so after the head until the kiosk restarts."""
        with self.lock:  # the voice side's fault path comes from the audio thread
            self.journal = journal
            self.controller.journal = journal
            for follower in self.followers:
                follower(journal)
            self._set_aside = " (a damaged journal was set aside: see Health)"
            self._note_head()

    def _note_head(self) -> None:
        """The journal's head on the panel, the witness a caregiver notes to catch a truncation
        later (`audit verify --expect`); read under the lock, after the turn's last write."""
        try:
            self.feed.journal = f"Journal {self.journal.head()}{self._set_aside}"
        except StoreError as e:
            try:
                fresh = renewed(self.journal, e)  # a damaged page under the head: go on afresh
            except StoreError:
                fresh = None
            if fresh is None:
                self.feed.journal = "Journal unreadable"
                log.warning("%s", e)
                return
            self.use_journal(fresh)
            notices = fresh.take_notices()  # said now: the switch's turn is already over
            if notices:
                self.speak(" ".join(notices))

    def _on_fault(self, message: str) -> None:
        """The switch went, came back, or was never there: journal it and say it once."""
        with self.lock:
            self._follow()
            self.journal.device_fault(SWITCH_DEVICE, message)
        self.on_notice(message)

    def _voice_turn_done(self) -> None:
        self._note_head()
        if self.controller.listening:
            self.controller.listening_ended()

    def check_web(self) -> None:
        """What the web page handed over: a pairing code to say and show, once; a note to
        announce ("Carol undid: ..."), so the person knows what was done for them."""
        code = self.pairing.fresh() if self.pairing else None
        if code is not None:
            self.feed.mode("idle", reply=f"Pairing code: {code[:4]} {code[4:]}")
            self.speak(f"A caregiver is pairing with me. The code is {spoken_code(code)}.")
        note = self.notes.take() if self.notes else None
        if note is not None:
            self.feed.mode("idle", reply=note)
            self.speak(note)
        self.check_enrol_request()

    def check_enrol_request(self) -> None:
        """A caregiver's "learn her voice now" from the web page, met once the voice runs. One
        the kiosk was not running to hear is dropped: hours later it would surprise the person."""
        if self.voice is None or self.enrol_requests is None:
            return
        by = self.enrol_requests.take(newer_than=time.time() - ENROL_REQUEST_S)
        if by is not None:
            self.speak(f"{' '.join(by.split())[:60]} asked me to learn your voice.")
            self.learn_voice("start")

    def learn_voice(self, action: EnrolAction) -> None:
        """Learning the person's voice started, paused, skipped on or stopped (the switch's
        choices; a caregiver's request starts it)."""
        if self.voice is None:
            self.speak(NO_VOICE_TO_LEARN)
        elif not self.voice.enrol(action):
            self.speak(CANNOT_ENROL)

    def _tick(self) -> None:
        while not self._stop.is_set():
            self.check_web()
            now = time.monotonic()
            due = self.controller.next_due()
            wait = TICK_S if due is None else min(TICK_S, max(0.0, due - now))
            if self._stop.wait(wait):
                return
            with self.lock:
                try:
                    self._follow()
                    self.controller.tick(time.monotonic())
                except Exception:
                    log.exception("switch tick failed")  # the next tick tries again


def run_kiosk(
    journal: Journal,
    desktop: DesktopFactory,
    planner: Planner,
    audio: Path | None,
    speak_to: Path | None,
    on_report: Callable[[TurnReport], None],
    on_notice: Callable[[str], None],
    panel: bool = True,
    switch: bool = True,
    start_notices: Sequence[str] = (),
    pairing_file: Path | None = None,
    notes_file: Path | None = None,
    enrol_file: Path | None = None,
    heartbeat_file: Path | None = None,
    voice_profile: Path | None = None,
) -> None:
    """Run until the WAV file ends or the process is stopped; switch faults (none found,
    unplugged, back) go to `on_notice` as well as the journal, after `start_notices`.
    `heartbeat_file`: where the caregiver page learns whether it is listening now;
    `voice_profile`: the person's takes (appliance/voice/hearing/profile.py)."""
    from appliance.health.heartbeat import HeartbeatWriter
    from appliance.session_sink import SessionSink
    from appliance.voice.commands import open_audio, run_audio

    source = open_audio(audio)  # a bad file or no microphone is the one line said, not a notice
    pulse = HeartbeatWriter(heartbeat_file) if heartbeat_file is not None else None
    if pulse is not None:
        source = _metered(source, pulse.heard)
    for notice in start_notices:
        on_notice(notice)
    kiosk = Kiosk(journal, desktop, planner, panel=panel, switch=switch, on_notice=on_notice,
                  pairing_file=pairing_file, notes_file=notes_file, enrol_file=enrol_file)

    def reported(report: TurnReport) -> None:
        kiosk.feed.overlay(report.marks)
        on_report(report)

    inner = SessionSink(journal, desktop, planner, reported, on_journal=kiosk.use_journal)
    kiosk.followers.append(inner.use)
    sink = kiosk.sink(inner)
    service = ServiceNotifier()
    heard = threading.Event()

    def heartbeat() -> None:
        """Each chunk read. The first means the pipeline hears: systemd gets READY and a person
        at a live microphone hears "Ready" (after a crash too: they can speak again)."""
        service.beat()
        if not heard.is_set():
            heard.set()
            service.ready("listening")
            service.start_watchdog()
            for notice in ["Ready." if source.live else "", *kiosk.recover()]:
                if notice:
                    kiosk.speak(notice)
            kiosk.check_enrol_request()  # asked for while it started: before any speech is heard

    def learned(phrase: str) -> None:
        with kiosk.lock:
            kiosk.journal.voice_takes_added(phrase, "command", 1, "learned", by="the person's yes")

    def frequent() -> list[str]:
        """What the person said most in the recent turns that were carried out."""
        with kiosk.lock:
            turns = kiosk.journal.recent_turns()
        said = Counter(t.transcripts[0].casefold() for t in turns
                       if t.transcripts and t.trigger == "voice" and t.outcome == Outcome.executed)
        return [text for text, _count in said.most_common()]

    def enrolled(phrase: str, kind: str, takes: int) -> None:
        with kiosk.lock:
            kiosk.journal.voice_takes_added(phrase, kind, takes, "enrolled", by="the person")

    days = kiosk.settings.transcript_days
    if voice_profile is not None and days:  # learned takes go with the transcripts
        from appliance.voice.hearing.profile import VoiceProfile

        VoiceProfile(voice_profile).prune_learned(days * 86400)
    kiosk.start()
    if pulse is not None:
        pulse.start()  # "starting" while the speech models load, then what it hears
    try:
        stats = run_audio(
            audio, sink, speak_to, wake_phrase=kiosk.settings.wake_phrase,
            on_controls=kiosk.attach_voice, source=source, heartbeat=heartbeat,
            barge_in=kiosk.settings.barge_in, wake_check=kiosk.settings.wake_check,
            profile=voice_profile, learn_voice=kiosk.settings.learn_voice,
            end_of_speech_s=kiosk.settings.end_of_speech_s or None, on_learned=learned,
            on_enrolled=enrolled, frequent=frequent,
        )
    finally:
        service.stopping()
        service.close()
        kiosk.stop()
        if pulse is not None:
            pulse.stop()
    with kiosk.lock:
        kiosk.journal.count_ignored_speech(inner.device, stats.ignored)


def _metered(source: AudioSource, heard: Callable[[bytes], None]) -> AudioSource:
    """`source`, telling `heard` of each chunk read. Inside a ResilientSource, so that the
    pipeline still knows it for one (its faults are journaled) and a reopened device is too."""
    from appliance.health.heartbeat import Metered
    from appliance.voice.audio.sources import ResilientSource

    if isinstance(source, ResilientSource):
        source.inner = Metered(source.inner, heard)
        return source
    return Metered(source, heard)
