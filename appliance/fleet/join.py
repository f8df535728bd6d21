"""`appliance fleet join URL TOKEN`: pin the central server's certificate named in the token,
make this kiosk's batch signing key pair, exchange the one-time token (and the public key) for
this kiosk's own credential, and keep them."""

from __future__ import annotations

import httpx

from appliance.fleet.link import (
    FleetError,
    FleetLink,
    fingerprint,
    pinned_context,
    save_link,
    server_certificate,
    split_token,
)
from appliance.fleet.signing import new_private_key, public_key
from appliance.fleet.wire import Joined, JoinRequest


def join(url: str, token: str) -> FleetLink:
    secret, pin = split_token(token)
    url = url.rstrip("/")
    pem = server_certificate(url)
    if not fingerprint(pem).startswith(pin):
        raise FleetError(
            f"the server at {url} is not the one the token was made for (its certificate "
            f"begins {fingerprint(pem)[:8]}, the token names {pin[:8]}); nothing was stored"
        )
    signing_key = new_private_key()  # a new pair each join: the old one is worth nothing now
    request = JoinRequest(token=secret, public_key=public_key(signing_key))
    with httpx.Client(base_url=url, verify=pinned_context(pem), timeout=30.0) as client:
        try:
            reply = client.post("/v1/join", content=request.model_dump_json(),
                                headers={"Content-Type": "application/json"})
        except httpx.HTTPError as e:
            raise FleetError(f"cannot reach the central server at {url}: {e}") from None
    if reply.status_code != 200:
        detail = reply.json().get("detail", reply.status_code) if reply.content else ""
        raise FleetError(f"the central server refused to enroll this kiosk: {detail}")
    joined = Joined.model_validate_json(reply.content)
    link = FleetLink(url=url, kiosk=joined.kiosk, credential=joined.credential, certificate=pem,
                     signing_key=signing_key)
    save_link(link)
    return link
