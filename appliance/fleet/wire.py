"""What travels between a kiosk and the central server: pydantic models at the trust boundary.

A batch never names its kiosk: the central server knows the kiosk from its credential, so one
kiosk cannot write another's events. Every field is bounded to what its column holds, so a
malformed value is refused (422) before it reaches PostgreSQL."""

from __future__ import annotations

import base64
import binascii
from itertools import pairwise
from typing import Annotated, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

MAX_BATCH = 1000
"""Events in one batch at most: a batch is one PostgreSQL transaction on the central side."""
BIGINT = 2**63 - 1
"""The largest notification id PostgreSQL's bigint holds."""
INTEGER = 2**31 - 1
"""The largest originator version PostgreSQL's integer holds."""
HEX32 = r"^[0-9a-f]{32}$"
HEX64 = r"^[0-9a-f]{64}$"


def _storable(text: str) -> str:
    """PostgreSQL text holds neither a NUL nor a lone surrogate (which a JSON escape can make)."""
    if "\x00" in text:
        raise ValueError("holds a NUL character")
    try:
        text.encode()
    except UnicodeEncodeError:
        raise ValueError("is not valid UTF-8") from None
    return text


def _base64(text: str) -> str:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("is not base64") from None
    return text


NotificationId = Annotated[int, Field(ge=1, le=BIGINT)]
Epoch = Annotated[str, Field(pattern=HEX32)]
Link = Annotated[str, Field(pattern=HEX64)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WireEvent(Strict):
    """One stored event as it leaves the kiosk, with its row of the kiosk's hash chain."""

    id: NotificationId = Field(description="the kiosk journal's notification id")
    originator_id: str = Field(pattern=HEX32)
    originator_version: int = Field(ge=1, le=INTEGER)
    topic: Annotated[str, Field(min_length=1, max_length=300), AfterValidator(_storable)]
    state: Annotated[str, Field(max_length=4_000_000, description="the stored state, base64"),
                     AfterValidator(_base64)]
    digest: str = Field(pattern=HEX64, description="the chain's digest of the original event")
    link: Link = Field(description="the chain's link after this event")
    redacted_digest: str | None = Field(
        default=None, pattern=HEX64,
        description="keyed digest of the state as sent, when words were taken out of it",
    )


class Batch(Strict):
    """Events after `after` (the position the central server acknowledged), oldest first,
    signed by the kiosk (appliance/fleet/signing.py)."""

    epoch: Epoch
    after: int = Field(ge=0, le=BIGINT)
    previous: Link = Field(description="the kiosk's chain link at `after` (chain.GENESIS at 0)")
    events: list[WireEvent] = Field(min_length=1, max_length=MAX_BATCH)
    keys: list[tuple[NotificationId, Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]]] = Field(
        default=[], max_length=100, description="(first id, key id) of the kiosk's device keys"
    )
    signature: str = Field(pattern=r"^[A-Za-z0-9+/]{86}==$",
                           description="Ed25519, base64, over signing.signed_text")

    @model_validator(mode="after")
    def _in_order(self) -> Self:
        ids = [e.id for e in self.events]
        if ids[0] <= self.after or any(b <= a for a, b in pairwise(ids)):
            raise ValueError("a batch's events must follow `after` in rising order")
        return self


class Position(Strict):
    """How far the central server holds this kiosk's epoch."""

    kiosk: str
    epoch: str
    position: int
    link: str | None = Field(default=None, description="the chain link held at `position`")


class JoinRequest(Strict):
    token: str = Field(min_length=16, max_length=200)
    public_key: str = Field(pattern=r"^[A-Za-z0-9+/]{43}=$",
                            description="the kiosk's Ed25519 public key, base64")


class Joined(Strict):
    kiosk: str
    credential: str
