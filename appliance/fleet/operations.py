"""What `appliance central ...` and `appliance fleet ...` do (the commands themselves are in
appliance/cli.py). Heavy imports (FastAPI, httpx, psycopg's pool) happen inside each one."""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any

from appliance.fleet.link import PIN_HEX, FleetError
from appliance.fleet.refusals import UNKNOWN_SENDERS

KIOSK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def central_dir(state: Path | None) -> Path:
    """--state, else $XDG_STATE_HOME/appliance-central: the central's TLS certificate."""
    if state is not None:
        return state
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "appliance-central"


def enroll(db: str, name: str, fingerprint: str) -> str:
    """A one-time token for kiosk `name`: SECRET.PIN, the pin being the start of the central
    certificate's SHA-256 `fingerprint`, so the kiosk can tell it reached this server."""
    from appliance.fleet.central_store import CentralStore

    if not KIOSK_NAME.fullmatch(name):
        raise FleetError(f"a kiosk name is letters, digits, . _ - (at most 64), not {name!r}")
    store = CentralStore(db, pool_size=2)
    try:
        secret = store.enroll(name)
    finally:
        store.close()
    return f"{secret}.{fingerprint.replace(':', '').lower()[:PIN_HEX]}"


def revoke(db: str, name: str) -> None:
    from appliance.fleet.central_store import CentralStore

    store = CentralStore(db, pool_size=2)
    try:
        if not store.revoke(name):
            raise FleetError(f"no enrolled, unrevoked kiosk {name!r}")
    finally:
        store.close()


def overview(db: str) -> list[dict[str, Any]]:
    from appliance.fleet.central_store import CentralStore

    store = CentralStore(db, pool_size=2)
    try:
        return store.overview()
    finally:
        store.close()


def overview_lines(kiosks: list[dict[str, Any]]) -> str:
    return "\n".join(
        (f"{k['kiosk']}: {k['state']}" if k["kiosk"] == UNKNOWN_SENDERS else
         f"{k['kiosk']}: {k['state']}, {k['events']} events, {k['turns']} commands "
         f"({k['refused']} refused, {k['failed']} failed), {k['requests_refused']} requests "
         f"refused, last seen {k['last_seen']}")
        + "".join(f"\n  ! {a}" for a in k["alerts"])
        for k in kiosks
    ) or "no kiosks enrolled"


def uplink(
    store: str | None, status_folder: Path, once: bool, batch: int = 500
) -> dict[str, Any] | None:
    """Push the journal at `store` to the central server the kiosk joined: what is pending
    (`once`), or following the journal until interrupted."""
    import httpx

    from appliance.fleet.link import link_path, load_link
    from appliance.fleet.uplink import STATUS_FILE, Uplink
    from appliance.wiring import open_journal

    link = load_link()
    if link is None:
        raise FleetError("this kiosk has not joined a central server: appliance fleet join")
    running = Uplink(open_journal(store), link, status_folder / STATUS_FILE, batch=batch,
                     link_file=link_path())
    try:
        if once:
            try:
                while running.push_once():
                    pass
            except httpx.HTTPError as e:
                raise FleetError(f"cannot reach the central server at {link.url}: {e}") from None
            running.status.state = "ok"
            running.save_status(force=True)  # for the health page, as a running uplink does
            return {"acknowledged": running.status.acknowledged}
        print(f"appliance fleet: pushing to {link.url} as {link.kiosk}", file=sys.stderr,
              flush=True)
        running.run(threading.Event())
        return None
    finally:
        running.close()


def uplink_status(status_folder: Path, as_json: bool) -> str:
    from appliance.fleet.uplink import read_status

    status = read_status(status_folder)
    if status is None:
        raise FleetError("no uplink has run for this journal")
    if as_json:
        return json.dumps(status)
    return (f"{status['state']}: {status['lag_events']} events ({status['lag_s']} s) behind "
            f"{status['central']} {status['detail']}").rstrip()
