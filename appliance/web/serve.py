"""`appliance serve`: the caregiver web page on loopback, next to the journal it shows."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from appliance.journal.store import voice_profile_path
from appliance.systemd_notify import ServiceNotifier
from appliance.web.accounts import Accounts
from appliance.web.app import create_app
from appliance.web.handoff import enrol_path, notes_path, pairing_path, post_note, web_dir
from appliance.web.pairing import PairingOffer
from appliance.web.shared import WebState
from appliance.wiring import open_journal

LOOPBACK = "127.0.0.1"


def run_server(store: str | None, port: int, desktop: str = "atspi", lan: bool = False,
               host: str | None = None, create: bool = False,
               central_db: str | None = None) -> None:
    """On loopback over HTTP; with `lan`, on the home network's address over TLS only. With
    `central_db`, a Fleet page lists the central server's kiosks (read only)."""
    import uvicorn

    if central_db is None and not create:
        open_journal(store, create=False)  # no journal yet: said in one line, none made
    # At the central server, and on a device (--create), the page's own journal is made if missing.
    journal = open_journal(store)  # writable: the web's own events go into it
    journal.apply_retention(by="retention")  # transcripts older than the caregiver chose
    folder = web_dir(store)
    state = WebState(journal=journal, accounts=Accounts(folder / "web.sqlite"),
                     pairing=PairingOffer(pairing_path(store)), secure=lan,
                     desktop=desktop, notes=notes_path(store), folder=folder,
                     voice=None if central_db is not None else voice_profile_path(store),
                     enrol=None if central_db is not None else enrol_path(store))
    if central_db is not None:
        from appliance.fleet.central_store import CentralStore

        state.fleet = CentralStore(central_db, pool_size=2)
    address, cert, key = host or LOOPBACK, None, None
    if lan:
        from appliance.web.tls import certificate, lan_address, spoken_fingerprint

        address = host or lan_address()
        made = certificate(folder, address)
        cert, key = str(made.cert), str(made.key)
        print(f"appliance serve: certificate fingerprint (SHA-256) {made.fingerprint}",
              file=sys.stderr)
        post_note(notes_path(store), "The caregiver page is at "
                  f"{address}. Its certificate begins {spoken_fingerprint(made.fingerprint)}.")
    if not state.accounts.has_owner():
        state.pairing.new()
        print(f"appliance serve: not paired yet; the pairing code is in {state.pairing.path}",
              file=sys.stderr)
    scheme = "https" if lan else "http"
    print(f"appliance serve: {scheme}://{address}:{port}/", file=sys.stderr, flush=True)
    # An open live page never holds up a stop (systemd's, or Ctrl-C) for long.
    server = uvicorn.Server(uvicorn.Config(
        create_app(state), host=address, port=port, log_level="warning", server_header=False,
        timeout_graceful_shutdown=2, ssl_certfile=cert, ssl_keyfile=key))
    service = ServiceNotifier()
    threading.Thread(target=_say_ready, args=(server, service, f"{scheme}://{address}:{port}/"),
                     name="ready", daemon=True).start()
    server.run()
    service.stopping()


def _say_ready(server: Any, service: ServiceNotifier, url: str) -> None:
    """READY for systemd once the socket is bound and the server takes requests."""
    while not server.started and not server.should_exit:
        time.sleep(0.05)
    if server.started:
        service.ready(f"serving {url}")
