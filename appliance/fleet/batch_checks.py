"""What the central server checks of a batch before it writes a line of it (docs/fleet.md, "What
the central server checks"): its place after the position held, the kiosk's signature, that it
brings something new, and that it continues the chain held."""

from __future__ import annotations

from appliance.fleet.link import FleetError
from appliance.fleet.signing import verifies
from appliance.fleet.wire import Batch


class OutOfOrder(FleetError):
    """A batch that starts past the position held: the uplink resumes there (409)."""

    def __init__(self, position: int, after: int) -> None:
        super().__init__(f"the batch starts after #{after}, the central copy ends at #{position}")
        self.position = position


class Replayed(OutOfOrder):
    """A batch whose every event is held already: a retry racing its first try, or a copy of
    an old batch sent again. `old`: it ends before the position held, so it is no retry."""

    def __init__(self, position: int, batch: Batch) -> None:
        first, last = batch.events[0].id, batch.events[-1].id
        FleetError.__init__(self, f"events #{first} to #{last} are held already, the central "
                                  f"copy ends at #{position}")
        self.position, self.old = position, last < position


class Unverified(FleetError):
    """A batch the central server cannot vouch for: refused (`status`), and the care team told."""

    status = 403


class ChainBreak(Unverified):
    """A signed batch that does not continue the chain held (its own history differs)."""

    status = 409


def check_signature(kiosk: str, batch: Batch, signed: bytes, public_key: bytes | None) -> None:
    """The batch is the kiosk's, as signed with the key it joined with: a bearer credential
    alone (leaked, or a kiosk's own turned against it) writes nothing."""
    if public_key is None:
        raise Unverified(f"kiosk {kiosk} joined before batches were signed: enroll it again "
                         "(appliance central enroll) and join with the new token")
    if not verifies(bytes(public_key), signed, batch.signature):
        raise Unverified(f"a batch for epoch {batch.epoch[:8]} (#{batch.events[0].id} to "
                         f"#{batch.events[-1].id}) is not signed with kiosk {kiosk}'s key")


def check_continues(batch: Batch, held: int, ours: str) -> None:
    """The batch's chain goes on from `ours`, the link held at `held` (the genesis link at 0):
    its own link there (before its first event, or one of its events when it overlaps what is
    held) is that one."""
    if batch.after == held:
        theirs: str | None = batch.previous
    else:
        theirs = next((e.link for e in batch.events if e.id == held), None)
    if theirs != ours:
        raise ChainBreak(f"a batch for epoch {batch.epoch[:8]} does not continue the chain held "
                         f"at #{held}: its history differs from the central copy's")
