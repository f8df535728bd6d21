"""The timeline projection: every stored event as one readable row, oldest first."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from uuid import UUID

from appliance.audit.words import TAUGHT, taught_words
from appliance.journal.aggregates import Device
from appliance.journal.application import Journal
from appliance.limits import escape_controls

EVENT_NAMES = {"Created": "SettingsCreated"}
DEVICES = {Device.create_id(name): name for name in ("microphone", "switch", "web", "journal")}
"""The devices the appliance records events of, by their aggregate's id (a fault names none)."""
SINCE_HELP = "try 2026-11-21, 09:00, 2h, today or yesterday"


class AuditQueryError(ValueError):
    """A question to the audit that cannot be answered as asked; the message is one line."""


class SinceError(AuditQueryError):
    pass


class NoSuchTurn(AuditQueryError):
    pass


def parse_since(text: str | None, now: datetime | None = None,
                zone: tzinfo = UTC) -> datetime | None:
    """'2026-11-21', '2026-11-21T09:00', '09:00', '2h', '30m', '7d', 'today', 'yesterday' ->
    aware datetime; a day or a clock time without a zone is one in `zone`."""
    if not text:
        return None
    now = (now or datetime.now(UTC)).astimezone(zone)
    try:
        return _since(text.strip(), now)
    except (ValueError, OverflowError):  # 25:99, 99999999999d, 2026-13-45
        raise SinceError(f"cannot read --since {escape_controls(text)!r}; {SINCE_HELP}") from None


def _since(text: str, now: datetime) -> datetime:
    if text in ("today", "yesterday"):
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
        back = timedelta(days=1 if text == "yesterday" else 0)
        return (midnight - back).replace(tzinfo=now.tzinfo)
    if m := re.fullmatch(r"(\d+)\s*([smhd])", text):
        unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[m.group(2)]
        return now - timedelta(**{unit: int(m.group(1))})
    if re.fullmatch(r"\d{1,2}:\d{2}", text):
        hour, minute = map(int, text.split(":"))
        return now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=now.tzinfo)


def _detail(name: str, e: Any) -> str:
    if name in TAUGHT:  # taught spots, names given to elements, takes of the voice: in words
        return taught_words(name, {k: v for k, v in vars(e).items() if k != "timestamp"})
    match name:
        case "TurnStarted":
            return f"trigger={e.trigger}"
        case "Heard":
            return f'"{e.transcript}" ({e.engine})'
        case "Planned":
            return _planned(e.intent, e.planner)
        case "Answered":
            return f'"{e.transcript}" ({e.engine}): {_planned(e.intent, e.planner)}'
        case "Validated":
            reasons = "; ".join(e.reasons)
            step = f" step {e.step}" if e.step is not None else ""
            return f"{e.decision}{step}, {e.risk}" + (f": {reasons}" if reasons else "")
        case "ConfirmationAsked":
            options = getattr(e, "options", [])
            return f'"{e.prompt}"' + (f" options {options}" if options else "")
        case "Clarified":
            return f"chose {e.choice}"
        case "Confirmed" | "Declined":
            return f"by {e.by}"
        case "ActionStarted":
            return f"{e.action.get('kind')} {e.target}"
        case "ActionSucceeded":
            return f"{'verified' if e.verified else 'not verified'} via {e.via}"
        case "ActionFailed":
            return str(e.error)
        case "Spoke":
            return f'"{e.text}"'
        case "Undone":
            return f"by turn {e.by_turn[:8]}"
        case "TurnEnded":
            return str(e.outcome)
        case "DeviceRegistered":
            return str(e.name)
        case "DeviceFault":
            return str(e.message)
        case "SpeechIgnored":
            return f"{e.count} without the wake phrase"
        case "SwitchPressed":
            return f"switch {e.switch} {e.gesture.replace('_', ' ')}: {e.meaning}"
        case "SettingChanged":
            return f"{e.key}: {e.old} -> {e.new} by {e.by}"
        case "Prompted":
            return f"the language model was given {len(e.context)} characters (see the turn)"
        case "EpochStarted":
            return _epoch_started(e)
        case "EpochRestarted":
            return f"journal epoch {e.epoch[:8]}: {e.reason}"
        case "JournalChecked":
            return f"intact, head {e.head}" if e.intact else f"damaged: {e.problem}"
        case "WebAccess":
            return f"{e.what.replace('_', ' ')} by {e.caregiver} from {e.address}"
    return ""


def _epoch_started(e: Any) -> str:
    """The epoch, and the damaged file this journal was started in place of, if it was (an
    EpochStarted stored before those fields existed has none)."""
    started = f"journal epoch {e.epoch[:8]}"
    replaced = getattr(e, "replaces", "")
    if not replaced:
        return started
    head = getattr(e, "replaced_head", "") or "could not be read"
    return (f"{started}, in place of the damaged {replaced} ({getattr(e, 'damage', '')}; "
            f"its last head {head})")


def _planned(intent: dict[str, Any] | None, planner: str) -> str:
    intent = intent or {}
    fields = {k: v for k, v in intent.items() if k not in ("confidence", "words", "intent")}
    conf = intent.get("confidence")
    what = intent.get("intent", "nothing understood")
    return f"{what} {fields} by {planner}" + (f", confidence {conf:.2f}" if conf else "")


def timeline(
    journal: Journal, since: datetime | None = None, turn: str | None = None,
    start: int = 1, end: int | None = None,
) -> list[dict[str, Any]]:
    """Every event (since `since`, of the turn whose id starts with `turn`) as one row.

    A `turn` that names no turn in the journal is NoSuchTurn, not an empty timeline."""
    wanted = turn.replace("-", "").lower() if turn is not None else None
    if wanted is not None and not re.fullmatch(r"[0-9a-f]{1,32}", wanted):
        raise NoSuchTurn(
            f"no turn {escape_controls(turn or '')!r}: a turn id is hex digits, as audit shows it"
        )
    rows = []
    seen_turn = False
    for nid, e in journal.domain_events(start):
        if end is not None and nid > end:
            break
        oid = e.originator_id.hex
        if wanted is not None and not oid.startswith(wanted):
            continue
        seen_turn = True
        if since and e.timestamp < since:
            continue
        rows.append(row_of(nid, e))
    if wanted is not None and not seen_turn:
        raise NoSuchTurn(f"no turn {turn!r} in the journal")
    return rows


def device_name(originator_id: UUID) -> str:
    """The name of the device an event is of ("microphone"), or "" when it is not known."""
    return DEVICES.get(originator_id, "")


WINDOW = 3000
"""Events read for one page: a few hundred turns. A page reads the journal's tail, never all
of it, so it takes as long with a million events as with a thousand."""


def first_at(journal: Journal, since: datetime, step: int = WINDOW) -> int:
    """A notification id at or before the first event at `since`, found by stepping back
    from the end (what a caregiver looks at is a small tail of a long journal)."""
    start = journal.recorder.max_notification_id() or 0
    while start > 1:
        start = max(1, start - step)
        first = next(iter(journal.domain_events(start)), None)
        if first is None or first[1].timestamp < since:
            break
    return max(1, start)


def row_of(nid: int, e: Any) -> dict[str, Any]:
    """One event (an aggregate's own dataclass) as a timeline row."""
    aggregate, _, name = type(e).__qualname__.rpartition(".")
    name = EVENT_NAMES.get(name, name)
    return {
        "seq": nid,
        "time": e.timestamp.isoformat(timespec="milliseconds"),
        "aggregate": aggregate,
        "turn": e.originator_id.hex[:8] if aggregate == "Turn" else "",
        "device": device_name(e.originator_id) if aggregate == "Device" else "",
        "event": name,
        "detail": _detail(name, e),
        "data": {
            k: v
            for k, v in e.__dict__.items()
            if k not in ("originator_id", "originator_version", "timestamp")
        },
    }


def render_table(rows: list[dict[str, Any]]) -> str:
    """One line per event; control characters in recorded text are shown escaped, so what was
    said or typed can never move the cursor, recolour or reorder the caregiver's terminal."""
    if not rows:
        return "The journal is empty."
    lines = [f"{'time':<12} {'turn':<8} {'event':<20} detail"]
    for r in rows:
        clock = r["time"][11:23]
        detail = escape_controls(str(r["detail"]))
        lines.append(f"{clock:<12} {r['turn']:<8} {escape_controls(r['event']):<20} {detail}")
    return "\n".join(lines)
