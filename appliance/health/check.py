"""One check's answer, and running a check so that a crash or a hang is an answer too."""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

State = Literal["ok", "problem", "unknown"]
T = TypeVar("T")


@dataclass(frozen=True)
class Check:
    """`what` names the part as a person would; `detail` says what was found or what to do."""

    what: str
    state: State
    detail: str

    @property
    def key(self) -> str:
        return key_of(self.what)


def key_of(what: str) -> str:
    """A stable name for JSON and --only: "Speech models" is speech_models, "AT-SPI" atspi."""
    return re.sub(r"[^a-z0-9]+", "_", what.lower().replace("-", "")).strip("_")


@dataclass(frozen=True)
class Probe:
    """A check to run with a bound: `when_hung` is what to do if it does not answer in time."""

    what: str
    run: Callable[[], Check]
    timeout_s: float
    when_hung: str


@dataclass(frozen=True)
class Examined:
    check: Check
    took_s: float


def current_user() -> str:
    """Who runs the check, for "not readable by ..." (a uid with no name when there is none)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


def first_line(error: BaseException) -> str:
    """An error's first line, for a check's one-line detail. Not the journal's copy: the QEMU
    guest (scripts/build-vm.sh) packs health/ without the journal."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def within(work: Callable[[], T], timeout_s: float) -> T | None:
    """`work()`'s result, or None when it raises or takes longer than `timeout_s`."""
    answers: list[T] = []

    def run() -> None:
        with contextlib.suppress(Exception):  # the caller's fallback stands for any failure
            answers.append(work())

    worker = threading.Thread(target=run, name="bounded", daemon=True)
    worker.start()
    worker.join(timeout_s)
    return answers[0] if answers else None


def examine(probe: Probe) -> Examined:
    """The probe's answer; a raised exception or no answer within its time is a problem.

    The check runs in a daemon thread, so one stuck in a driver or a D-Bus call is left behind
    rather than waited for; file descriptor 2 is put back if it was silenced at that moment."""
    answers: list[Check] = []

    def work() -> None:
        try:
            answers.append(probe.run())
        except Exception as e:  # any failure of the check itself is its answer, never a traceback
            answers.append(Check(probe.what, "problem", (
                f"the check itself failed ({type(e).__name__}: {first_line(e)}); "
                "this is a bug in appliance doctor: please report it with this line")))

    stderr = os.dup(2)
    started = time.monotonic()
    worker = threading.Thread(target=work, name=f"check {probe.what}", daemon=True)
    worker.start()
    worker.join(probe.timeout_s)
    took = time.monotonic() - started
    try:
        if answers:  # under the probe's name, which --only and the JSON's "check" use
            return Examined(replace(answers[0], what=probe.what), took)
        os.dup2(stderr, 2)  # a check hung while native stderr was silenced
        return Examined(Check(probe.what, "problem", (
            f"no answer within {probe.timeout_s:g} s: {probe.when_hung}")), took)
    finally:
        os.close(stderr)
