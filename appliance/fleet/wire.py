"""What travels between a kiosk and the central server: pydantic models at the trust boundary.

A batch never names its kiosk: the central server knows the kiosk from its credential, so one
kiosk cannot write another's events."""

from __future__ import annotations

from itertools import pairwise
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_BATCH = 1000
"""Events in one batch at most: a batch is one PostgreSQL transaction on the central side."""
HEX64 = r"^[0-9a-f]{64}$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WireEvent(Strict):
    """One stored event as it leaves the kiosk, with its row of the kiosk's hash chain."""

    id: int = Field(ge=1, description="the kiosk journal's notification id")
    originator_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    originator_version: int = Field(ge=1)
    topic: str = Field(min_length=1, max_length=300)
    state: str = Field(max_length=4_000_000, description="the stored state, base64")
    digest: str = Field(pattern=HEX64, description="the chain's digest of the original event")
    link: str = Field(pattern=HEX64, description="the chain's link after this event")
    redacted_digest: str | None = Field(
        default=None, pattern=HEX64,
        description="keyed digest of the state as sent, when words were taken out of it",
    )


class Batch(Strict):
    """Events after `after` (the position the central server acknowledged), oldest first."""

    epoch: str = Field(pattern=r"^[0-9a-f]{32}$")
    after: int = Field(ge=0)
    events: list[WireEvent] = Field(min_length=1, max_length=MAX_BATCH)
    keys: list[tuple[int, str]] = Field(
        default=[], max_length=100, description="(first id, key id) of the kiosk's device keys"
    )

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


class Joined(Strict):
    kiosk: str
    credential: str
