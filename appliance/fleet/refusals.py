"""Requests the central server refuses: one structured log line each, counted per kiosk and per
address, and a Fleet alert when one of them is refused too often or a batch does not verify."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from appliance.fleet.alerts import raise_alert

if TYPE_CHECKING:  # psycopg is heavy: the fleet commands that only print need none of it
    from psycopg import Cursor
    from psycopg.rows import DictRow

REQUESTS_REFUSED_ALERT = 10
"""Requests refused within an hour, from one kiosk or one address naming none, before an alert."""
UNKNOWN_SENDERS = "(unknown senders)"
"""Whom the alerts about an address that named no kiosk are filed under (no kiosk is named so)."""
ALERT_KIND = "refused requests"

log = logging.getLogger("appliance.central.refusals")


@dataclass(frozen=True)
class Refusal:
    """One refused request. Nothing in it comes from a token or a credential: the reason is
    the server's own words, the address the peer's."""

    status: int
    reason: str
    address: str
    kiosk: str | None
    path: str
    alert: str = ""
    """Said to the care team at once (a batch that does not verify), besides being counted."""

    def line(self) -> str:
        """The log line: JSON, ASCII only, so what a sender put in a path cannot forge lines."""
        return json.dumps({
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "refused": self.status, "address": self.address, "kiosk": self.kiosk,
            "path": self.path[:120], "reason": self.reason[:300],
        })


def record(c: Cursor[DictRow], refusal: Refusal) -> None:
    """Count the refusal for its address and its kiosk (when known) and raise the alerts due:
    past the threshold, for the kiosk, or for the address when no kiosk was named."""
    address = _count(c, f"address {refusal.address}")
    kiosk = _count(c, f"kiosk {refusal.kiosk}") if refusal.kiosk else None
    last = f"the last: {refusal.status}, {refusal.reason}"
    if refusal.kiosk and kiosk is not None:
        if _due(c, f"kiosk {refusal.kiosk}", kiosk):
            raise_alert(c, refusal.kiosk, ALERT_KIND,
                        f"{kiosk} requests refused within an hour ({last})")
    elif _due(c, f"address {refusal.address}", address):
        raise_alert(c, "", ALERT_KIND, f"{address} requests from {refusal.address} refused "
                                       f"within an hour, naming no kiosk ({last})")
    if refusal.alert and refusal.kiosk:
        # One line a day for the same finding: an uplink retries it with back-off.
        c.execute("SELECT 1 FROM fleet_alerts WHERE kiosk=%s AND kind='batch refused' "
                  "AND detail=%s AND raised_at > now() - interval '1 day'",
                  (refusal.kiosk, refusal.alert))
        if c.fetchone() is None:
            raise_alert(c, refusal.kiosk, "batch refused", refusal.alert)


def _count(c: Cursor[DictRow], source: str) -> int:
    """Refusals from `source` in its current hour's window, this one included."""
    c.execute(
        "INSERT INTO fleet_refusals AS r (source) VALUES (%s) ON CONFLICT (source) DO UPDATE SET "
        "total=r.total+1, last_at=now(), "
        "in_window=CASE WHEN r.window_start > now() - interval '1 hour' "
        "THEN r.in_window+1 ELSE 1 END, "
        "alerted=r.alerted AND r.window_start > now() - interval '1 hour', "
        "window_start=CASE WHEN r.window_start > now() - interval '1 hour' "
        "THEN r.window_start ELSE now() END RETURNING in_window", (source,))
    row = c.fetchone()
    assert row is not None
    return int(row["in_window"])


def _due(c: Cursor[DictRow], source: str, in_window: int) -> bool:
    """Past the threshold and not yet alerted in this window (then marked alerted)."""
    if in_window < REQUESTS_REFUSED_ALERT:
        return False
    c.execute("UPDATE fleet_refusals SET alerted=true WHERE source=%s AND NOT alerted "
              "RETURNING source", (source,))
    return c.fetchone() is not None
