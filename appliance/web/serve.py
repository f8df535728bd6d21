"""`appliance serve`: the caregiver web page on loopback, next to the journal it shows."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from appliance.journal.store import default_store_path
from appliance.web.accounts import Accounts
from appliance.web.app import WebState, create_app
from appliance.web.pairing import PairingOffer
from appliance.wiring import open_journal

LOOPBACK = "127.0.0.1"


def web_dir(store: str | None) -> Path:
    """Beside a SQLite journal; for PostgreSQL, the state folder a default journal uses."""
    if store and not store.startswith("postgresql"):
        return Path(store).resolve().parent
    return default_store_path().parent


def pairing_path(folder: Path) -> Path:
    """Where the kiosk picks up the pairing code: the user's runtime folder (memory only)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return (Path(runtime) / "appliance" if runtime else folder) / "pairing-code"


def run_server(store: str | None, port: int) -> None:
    import uvicorn

    open_journal(store, create=False)  # no journal yet: said in one line, none made
    journal = open_journal(store)  # writable: the web's own events go into it
    folder = web_dir(store)
    state = WebState(journal=journal, accounts=Accounts(folder / "web.sqlite"),
                     pairing=PairingOffer(pairing_path(folder)), secure=False)
    if not state.accounts.has_owner():
        state.pairing.new()
        print(f"appliance serve: not paired yet; the pairing code is in {state.pairing.path}",
              file=sys.stderr)
    print(f"appliance serve: http://{LOOPBACK}:{port}/", file=sys.stderr, flush=True)
    uvicorn.run(create_app(state), host=LOOPBACK, port=port, log_level="warning",
                server_header=False)
