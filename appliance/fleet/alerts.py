"""The Fleet alerts the central server raises, shown on the Fleet page for a day."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # psycopg is heavy: the fleet commands that only print need none of it
    from psycopg import Cursor
    from psycopg.rows import DictRow


def raise_alert(c: Cursor[DictRow], kiosk: str, kind: str, detail: str) -> None:
    """In the caller's transaction: the alert stands or falls with what it reports."""
    c.execute("INSERT INTO fleet_alerts (kiosk, kind, detail) VALUES (%s, %s, %s)",
              (kiosk, kind, detail))
