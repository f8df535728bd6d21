"""What the grammar plans for a sentence on a scene, and what the appliance did from audio:
both on the real Session, GrammarPlanner and a fresh sim desktop of the scene."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from appliance.desktop.sim import SimDesktop
from appliance.scenes import bundled_scene
from appliance.session import TurnReport
from appliance.session_sink import SessionSink
from appliance.voice.hearing.closed_set import SentenceSet, closed_set
from appliance.voice.hearing.wake import words
from appliance.voice.sink import Reply, Utterance, screen_names_of, vocabulary_of

SCENES_DIR = Path(__file__).resolve().parents[1] / "scenes"
# Not part of the action: `words` is the sentence as heard (the action is the same whether
# "press the send button" or "press send button" was heard), the rest are the planner's notes.
IGNORED_KEYS = frozenset({"words", "confidence", "reason", "rationale", "explanation"})
_PUNCT = re.compile(r"[^\w\s']")


def scene_path(name: str) -> Path:
    """messages: the bundled scene; radio, settings, mail: the lab's bench/scenes."""
    if name == "messages":
        return bundled_scene()
    path = SCENES_DIR / f"{name}.json"
    if not path.exists():
        raise ValueError(f"no scene named {name!r}")
    return path


@cache
def heard_on(scene: str) -> tuple[SentenceSet, list[str]]:
    """A scene's closed set and the open path's prompt words, as the pipeline reads them off
    the screen when the appliance is not replying (commands.answers_around)."""
    names = screen_names_of(SimDesktop.from_file(scene_path(scene)).snapshot())
    return closed_set(*names), [*vocabulary_of(names), "yes", "no"]


def normalized(value: Any) -> Any:
    """Free text as a transcript has it: lower case, no punctuation, single spaces."""
    if isinstance(value, str):
        return " ".join(_PUNCT.sub(" ", value.lower()).split())
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in sorted(value.items()) if k not in IGNORED_KEYS}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


@dataclass
class Turn:
    """One heard command: what was heard, the action taken, and the pipeline's timings."""

    utterance: Utterance
    outcome: dict[str, Any]
    turn_id: str
    timings: dict[str, float] = field(default_factory=dict)


def outcome_of(report: TurnReport) -> dict[str, Any]:
    """The action a turn took, comparable between a typed and a heard sentence."""
    return {"decision": str(report.decision),
            "intent": normalized(report.intent) if report.intent else None}


class SceneSink:
    """The real SessionSink, each turn on a fresh copy of one scene; records what each turn
    did. Replies are not spoken (the bench measures hearing and acting) and, unless `asks`,
    open no listening window for an answer."""

    def __init__(self, scene: str, workdir: Path, asks: bool = False) -> None:
        from appliance.intents.grammar import GrammarPlanner
        from appliance.wiring import open_journal

        self._src = scene_path(scene)
        self._copy = workdir / f"{scene}.json"
        journal = open_journal(str(workdir / "journal.sqlite"))
        self.inner = SessionSink(journal, self._desktop, GrammarPlanner(), self._record)
        self.turns: list[Turn] = []
        self._utterance: Utterance | None = None
        self._asks = asks

    @contextmanager
    def _desktop(self) -> Iterator[SimDesktop]:
        # Replaced whole, never rewritten in place: a read of the names meanwhile sees the old
        # file or the new one ("bad scene ... Invalid JSON" otherwise).
        fresh = self._copy.with_suffix(".fresh")
        shutil.copyfile(self._src, fresh)
        fresh.replace(self._copy)
        yield SimDesktop.from_file(self._copy)

    def _record(self, report: TurnReport) -> None:
        assert self._utterance is not None
        self.turns.append(Turn(self._utterance, outcome_of(report), report.turn_id))

    def vocabulary(self) -> list[str]:
        return self.inner.vocabulary()

    def handle(self, utterance: Utterance) -> Reply:
        self._utterance = utterance
        reply = self.inner.handle(utterance)
        return Reply(reply.turn_id, "", self._asks and reply.expects_answer)

    def spoke(self, turn_id: str, text: str, timings: dict[str, float]) -> None:
        self.inner.spoke(turn_id, text, timings)
        for turn in reversed(self.turns):
            if turn.turn_id == turn_id:
                turn.timings = timings
                break

    def __getattr__(self, name: str) -> Any:
        # What the voice layer may ask of a sink beyond TurnSink (the closed-set recognizer's
        # sentences, push-to-talk) is the real SessionSink's.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


@cache
def planned(scene: str, sentence: str) -> dict[str, Any]:
    """What the appliance does for `sentence`, written, on a fresh `scene`: the text as the
    wake gate passes it on (lower case words, no punctuation)."""
    with tempfile.TemporaryDirectory() as tmp:
        sink = SceneSink(scene, Path(tmp))
        sink.handle(Utterance(" ".join(words(sentence)), "text", None, {}))
        return sink.turns[-1].outcome
