"""`appliance serve`: the caregiver web page on loopback, next to the journal it shows."""

from __future__ import annotations

import sys

from appliance.web.accounts import Accounts
from appliance.web.app import WebState, create_app
from appliance.web.handoff import notes_path, pairing_path, web_dir
from appliance.web.pairing import PairingOffer
from appliance.wiring import open_journal

LOOPBACK = "127.0.0.1"


def run_server(store: str | None, port: int, desktop: str = "atspi") -> None:
    import uvicorn

    open_journal(store, create=False)  # no journal yet: said in one line, none made
    journal = open_journal(store)  # writable: the web's own events go into it
    folder = web_dir(store)
    state = WebState(journal=journal, accounts=Accounts(folder / "web.sqlite"),
                     pairing=PairingOffer(pairing_path(store)), secure=False,
                     desktop=desktop, notes=notes_path(store), folder=folder)
    if not state.accounts.has_owner():
        state.pairing.new()
        print(f"appliance serve: not paired yet; the pairing code is in {state.pairing.path}",
              file=sys.stderr)
    print(f"appliance serve: http://{LOOPBACK}:{port}/", file=sys.stderr, flush=True)
    # An open live page never holds up a stop (systemd's, or Ctrl-C) for long.
    uvicorn.run(create_app(state), host=LOOPBACK, port=port, log_level="warning",
                server_header=False, timeout_graceful_shutdown=2)
