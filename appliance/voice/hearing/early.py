"""An early hearing (at a pause) the person spoke past is abandoned at its next step, so that
the one hearing thread is free when they stop: Whisper's decode of "select" took as long as the
whole "select grandma" then waited for it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Abandoned(BaseException):
    """The person spoke on past the pause this early hearing was for. A BaseException, as
    asyncio's CancelledError is: no `except Exception` that keeps the person served takes it
    for a failure."""


_scope = threading.local()


@contextmanager
def hearing_early(spoke_on: threading.Event) -> Iterator[None]:
    """Within it, `checkpoint` on this thread gives up once `spoke_on` is set."""
    _scope.spoke_on = spoke_on
    try:
        yield
    finally:
        _scope.spoke_on = None


def checkpoint() -> None:
    """Between two steps of hearing: raise Abandoned when the early hearing this thread runs is
    no longer wanted (outside one, nothing)."""
    spoke_on: threading.Event | None = getattr(_scope, "spoke_on", None)
    if spoke_on is not None and spoke_on.is_set():
        raise Abandoned
