"""What was said before: "do that again" and "not her, the doctor"."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from appliance.desktop.model import Snapshot
from appliance.intents.grammar.targets import ASK_FROM, Ambiguous, Unresolved, resolve
from appliance.intents.grammar.wording import strip_fillers
from appliance.intents.model import CONTROL_INTENTS, Intent

REPEAT = re.compile(
    r"(?:(?:do|try|say) (?:it|that|this|the same)(?: thing)? |(?:the )?same (?:thing )?)?"
    r"(?:again|once more|one more time)"
    r"|(?:repeat|redo)(?: (?:it|that|this|the last (?:one|thing)))?|same again",
    re.IGNORECASE,
)
AGAIN = re.compile(r"(?:\s+|\s*,\s*)(?:again|once more|one more time)$", re.IGNORECASE)
CORRECTION = re.compile(
    r"(?:no[,.!]?\s+)?(?:not (?:him|her|them|it|that|this|that one|this one|the \w+|\w+)"
    r"|i meant|i mean)[,.!]?\s+(?P<name>.+)|no[,.!]?\s+(?P<other>the .+)",
    re.IGNORECASE,
)
ASSISTANT_PREFIX = "assistant"
"""History lines the appliance said ("assistant asked: ..."), not the person."""
MAX_LOOK_BACK = 3

Parse = Callable[[str, Snapshot], Intent | None]
"""What a line means on a screen, with no history of its own."""


def _earlier(parse: Parse, snapshot: Snapshot, history: tuple[str, ...]) -> Iterator[Intent]:
    """What the last few things the person said mean on this screen, latest first."""
    for line in list(history)[::-1][:MAX_LOOK_BACK]:
        if line.casefold().startswith(ASSISTANT_PREFIX) or REPEAT.fullmatch(strip_fillers(line)):
            continue
        intent = parse(line, snapshot)
        if intent is not None and intent.intent not in CONTROL_INTENTS:
            yield intent


def replayed(
    parse: Parse, text: str, snapshot: Snapshot, history: tuple[str, ...]
) -> Intent | None:
    """The last request again: "do that again"."""
    for intent in _earlier(parse, snapshot, history):
        return intent.model_copy(update={"words": text})
    return None


def corrected(
    parse: Parse, text: str, name: str, snapshot: Snapshot, history: tuple[str, ...]
) -> Intent | None:
    """The last request again with another target: "not her, the doctor"."""
    for intent in _earlier(parse, snapshot, history):
        old = getattr(intent, "target", None)
        if not isinstance(old, str):
            continue
        was = next((n for n in snapshot.nodes if n.name == old), None)
        prefer = frozenset({was.role}) if was is not None else None
        try:
            t = resolve(name, snapshot, prefer, floor=ASK_FROM)
        except (Unresolved, Ambiguous):
            return None
        if t.node.name == old:
            return None
        return intent.model_copy(update={
            "target": t.node.name, "words": text,
            "confidence": min(intent.confidence, t.score),
        })
    return None
