"""A recogniser that flips a command's meaning must not act on it unasked.

Whisper tiny.en hears Piper's "uncheck urgent" as "and check Urgent". The end-to-end test runs
the real pipeline (webrtcvad, Whisper tiny.en, Piper speech) into the real Session on the sim.
"""

from __future__ import annotations

from pathlib import Path

from appliance.audit.timeline import timeline
from appliance.journal.application import Journal
from appliance.policy.doubts import Doubt
from appliance.session import Session, TurnReport
from appliance.session_sink import SessionSink
from appliance.settings import Settings
from appliance.voice.audio.sources import WavSource
from appliance.voice.commands import engines, run_voice
from appliance.voice.hearing.clarity import doubt_of, heard_clearly, letter_alike
from appliance.voice.sink import Utterance
from appliance.wiring import build_planner, opened_desktop
from tests.integration.test_switch_talk import audio, element, scene

__all__ = ["scene"]  # a fixture


def test_a_command_cannot_begin_with_and() -> None:
    assert not heard_clearly("and check Urgent.")
    assert not heard_clearly("And tick urgent")
    assert heard_clearly("check urgent")
    assert heard_clearly("and")  # nothing after it: nothing to act on anyway
    assert heard_clearly("select grandma and then click send")


def test_the_doubt_of_an_utterance_is_its_words_or_its_recognisers() -> None:
    assert doubt_of(Utterance("and tick urgent", "whisper", 0.9)) == Doubt.BEGAN_WITH_AND
    assert doubt_of(Utterance("tick urgent", "closed:whisper", 0.4,
                              doubt=Doubt.LESS_SURE)) == Doubt.LESS_SURE
    assert doubt_of(Utterance("tick urgent", "closed:whisper", 0.9)) == ""
    assert letter_alike("c", ["z", "t"]) == (
        "the key named sounds like another: C may have been T or Z")
    assert letter_alike("8", ["a"]) == "the key named sounds like another: 8 may have been A"


def test_words_to_write_heard_unsurely_are_read_back_unless_secret(
    tmp_path: Path, scene: Path
) -> None:
    """The person hears what would be typed, and can say no; words for a secret field never
    leave the turn, so that question does not say them."""
    journal = Journal(str(tmp_path / "journal.sqlite"))
    planner = build_planner(Settings(llm="off"))
    for said, question in (
        ("type the lord grandma in the message box",
         "Did you mean type the lord grandma into Message? Say yes or no."),
        ("type 4321 into PIN", "Did you mean type into PIN? Say yes or no."),
    ):
        with opened_desktop(f"sim:{scene}") as desktop:
            report = Session(journal, desktop, planner).say(said, doubt=Doubt.WORDS_UNSURE)
        assert (report.decision, report.spoken) == ("needs_confirmation", question), report
    with opened_desktop(f"sim:{scene}") as desktop:  # words heard with no doubt: typed
        report = Session(journal, desktop, planner).say("type see you soon in the message box")
    assert report.decision == "executed", report
    assert element(scene, "Message").value == "see you soon"


def test_a_doubtful_command_asks_before_it_acts(tmp_path: Path, scene: Path) -> None:
    journal = Journal(str(tmp_path / "journal.sqlite"))
    planner = build_planner(Settings(llm="off"))
    urgent_before = "checked" in element(scene, "Urgent").states
    with opened_desktop(f"sim:{scene}") as desktop:
        report = Session(journal, desktop, planner).say(
            "and untick urgent", doubt=Doubt.BEGAN_WITH_AND
        )
    assert report.decision == "needs_confirmation"
    assert report.spoken == "Did you mean untick Urgent? Say yes or no."
    # The caregiver's trace says why it asked; the spoken question does not need to.
    validated = next(r for r in timeline(journal, turn=report.turn_id)
                     if r["event"] == "Validated")
    assert validated["detail"].endswith(
        "unsure what was meant; heard doubtfully: it began with 'and', often a misheard 'un'"
    ), validated
    assert ("checked" in element(scene, "Urgent").states) == urgent_before
    with opened_desktop(f"sim:{scene}") as desktop:
        answer = Session(journal, desktop, planner).say("yes")
    assert answer.decision == "executed"
    assert "checked" not in element(scene, "Urgent").states


def test_uncheck_misheard_as_and_check_is_asked_not_done(tmp_path: Path, scene: Path) -> None:
    assert "checked" in element(scene, "Urgent").states
    pcm, _ = audio("Hey juniper, uncheck urgent.")
    journal = Journal(str(tmp_path / "journal.sqlite"))
    reports: list[TurnReport] = []
    sink = SessionSink(journal, lambda: opened_desktop(f"sim:{scene}"),
                       build_planner(Settings(llm="off")), reports.append)
    run_voice(WavSource(pcm=pcm), sink, engines("whisper"))
    assert len(reports) == 1
    heard = reports[0].transcript.lower()
    if heard.startswith("and"):  # misheard, as Whisper tiny.en does today: a question
        assert reports[0].decision == "needs_confirmation", reports[0]
        assert reports[0].spoken.startswith("Did you mean tick Urgent?")
        assert "checked" in element(scene, "Urgent").states
    else:  # heard right: done
        assert heard.startswith("uncheck"), heard
        assert "checked" not in element(scene, "Urgent").states



def test_an_undo_heard_as_a_no_with_no_question_open_is_asked_about(
    tmp_path: Path, scene: Path
) -> None:
    """Whisper writes "undo that" as "don't do that", a "no": with no question to answer and
    something to undo, the person is asked whether they meant the undo, and a yes does it."""
    journal = Journal(str(tmp_path / "journal.sqlite"))
    planner = build_planner(Settings(llm="off"))

    def say(text: str, trigger: str = "voice", doubt: str = "") -> TurnReport:
        with opened_desktop(f"sim:{scene}") as desktop:
            return Session(journal, desktop, planner).say(text, trigger=trigger, doubt=doubt)

    assert say("don't do that").spoken == "There's no question waiting for an answer.", \
        "nothing to undo: a no with nothing to say no to"
    assert say("type hello in the message box").decision == "executed"
    asked = say("Don't do that.")
    assert (asked.decision, asked.spoken) == (
        "needs_confirmation", "Did you mean undo that? Say yes or no."), asked
    assert asked.intent is not None and asked.intent["intent"] == "undo"
    assert element(scene, "Message").value == "hello", "nothing undone before the yes"
    validated = next(r for r in timeline(journal, turn=asked.turn_id)
                     if r["event"] == "Validated")
    assert validated["detail"].endswith(f"heard doubtfully: {Doubt.UNDO_ALIKE}"), validated
    done = say("yes")
    assert (done.decision, done.turn_id) == ("undone", asked.turn_id), done
    assert element(scene, "Message").value == ""

    assert say("type hello in the message box").decision == "executed"
    typed = say("don't do that", trigger="text")
    assert typed.decision == "rejected", "typed words are what was meant"
    assert say("don't do it").spoken == "Did you mean undo it? Say yes or no."
    assert say("no").decision == "cancelled"
    assert element(scene, "Message").value == "hello", "a no undoes nothing"

    doubted = say("undo that", doubt=Doubt.LESS_SURE)
    assert doubted.spoken == "Did you mean undo that? Say yes or no.", "a doubted undo asks too"
    assert say("yes").decision == "undone"
    assert say("undo that", doubt=Doubt.LESS_SURE).spoken == "There's nothing to undo.", \
        "nothing to ask about"


def test_a_yes_heard_doubtfully_asks_again_and_only_a_clear_yes_acts(
    tmp_path: Path, scene: Path
) -> None:
    """A "no" at 5 dB that Whisper writes as "yeah" comes with a doubt: it is no yes. The same
    question is asked again and stays open for its whole wait; a doubtful no still declines
    (saying no is always safe), and a clear yes then acts. The trace says why it asked again."""
    from datetime import UTC

    from appliance.audit.story import story_of

    journal = Journal(str(tmp_path / "journal.sqlite"))
    planner = build_planner(Settings(llm="off"))
    now = [1000.0]

    def say(text: str, doubt: str = "") -> TurnReport:
        with opened_desktop(f"sim:{scene}") as desktop:
            return Session(journal, desktop, planner, clock=lambda: now[0]).say(
                text, doubt=doubt)

    asked = say("and untick urgent", doubt=Doubt.BEGAN_WITH_AND)
    assert asked.decision == "needs_confirmation", asked
    question = asked.spoken
    wait = Settings().confirm_timeout_s
    for _again in range(2):
        now[0] += 0.9 * wait  # each asking again gives the whole wait again
        again = say("yeah", doubt=Doubt.OTHER_ANSWER)
        assert (again.decision, again.turn_id, again.spoken, again.expects_answer) == (
            "needs_confirmation", asked.turn_id, f"I'm not sure that was a yes. {question}",
            True), again
        assert "checked" in element(scene, "Urgent").states, "nothing done on a doubtful yes"
    now[0] += 0.9 * wait
    done = say("yes")
    assert (done.decision, done.turn_id) == ("executed", asked.turn_id), done
    assert "checked" not in element(scene, "Urgent").states
    steps = [s.text for s in story_of(journal, asked.turn_id[:8], UTC).steps]
    again_step = ("Not taken as a yes, as it may have misheard (the answer sounded more like "
                  "the person's own takes of the other answer): asked again")
    assert steps.count(again_step) == 2, steps
    assert steps.index(again_step) > steps.index("Answer heard: \u201cyeah\u201d"), steps

    asked = say("and tick urgent", doubt=Doubt.BEGAN_WITH_AND)
    declined = say("no", doubt=Doubt.OTHER_ANSWER)
    assert (declined.decision, declined.turn_id) == ("cancelled", asked.turn_id), declined
    assert "checked" not in element(scene, "Urgent").states
