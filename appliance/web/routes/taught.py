"""Taught names: the names the person gave things on the screen ("call Doctor Patel my doctor")
and the spots they named ("call 7 Save"), by application, with when and how each was taught
(and, for a spot, how it has worked since); a caregiver removes one, asked first, journaled
with their name (`AliasForgotten`, `TargetForgotten`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from appliance.audit.days import zone_name
from appliance.desktop.seeing.taught import TaughtTarget
from appliance.journal.alias_log import Alias
from appliance.web.accounts import LoginSession
from appliance.web.shared import CanChange, Caregiver, State, can_change, page
from appliance.web.voice import aliases_by_app, taught_by_app

router = APIRouter()

TARGET_ID = re.compile(r"[0-9a-f]{1,32}")
DONE = {"removed": "The name was removed: the appliance no longer knows that spot.",
        "unnamed": "The name was removed: the appliance no longer knows it.",
        "gone": "That name was no longer taught, so nothing was changed."}


@router.get("/taught", response_class=HTMLResponse)
async def taught(request: Request, web: State, who: Caregiver) -> Response:
    apps = taught_by_app(web.journal.taught_targets(), web.journal.taught_at(), web.zone)
    return page(request, "taught.html", who=who, title="Taught names", apps=apps,
                named=aliases_by_app(web.journal.aliases(), web.zone),
                can_change=can_change(who), zone=zone_name(web.zone),
                done=DONE.get(request.query_params.get("done", ""), ""))


class Removal(NamedTuple):
    """What the page that asks before a taught name is removed says about it."""

    name: str
    what: str
    after: str


def _spot_removal(target: TaughtTarget) -> Removal:
    """What removing a named spot ("call 7 Save") does."""
    return Removal(target.name, what=f"In {target.app}, window \u201c{target.window}\u201d.",
                   after="The appliance forgets that spot; the person can teach it again.")


def _name_removal(alias: Alias) -> Removal:
    """What removing a name for an element ("call Doctor Patel my doctor") does."""
    return Removal(alias.name, what=f"It means \u201c{alias.element}\u201d in {alias.app}.",
                   after=f"Saying \u201c{alias.name}\u201d no longer finds it; "
                         f"\u201c{alias.element}\u201d still does, and the person can give "
                         "the name again.")


def _ask_removal(request: Request, who: LoginSession, action: str,
                 removal: Removal | None) -> Response:
    """The page that asks before a removal posted to `action`; "not there any more" when
    `removal` is None (the name is no longer taught)."""
    if removal is None:
        return page(request, "message.html", 404, who=who, title="Not there any more",
                    message=DONE["gone"], back=("/taught", "Back to taught names"))
    return page(request, "voice_confirm.html", who=who, title="Remove this name?",
                asked=f"Remove \u201c{removal.name}\u201d?", what=removal.what,
                action=action, button="Yes, remove this name", back="/taught",
                after=removal.after)


def _removed(item_id: str, forget: Callable[[str], bool], done: str) -> Response:
    """Back to the page, saying `done` when `forget` dropped the taught item, else that it
    was no longer there (an id that cannot be one is not even looked for)."""
    found = TARGET_ID.fullmatch(item_id) is not None and forget(item_id)
    return RedirectResponse(f"/taught?done={done if found else 'gone'}", 303)


@router.get("/taught/{target_id}/remove", response_class=HTMLResponse)
async def remove_form(request: Request, target_id: str, web: State, who: CanChange) -> Response:
    target = next((t for t in web.journal.taught_targets() if t.id == target_id), None)
    return _ask_removal(request, who, f"/taught/{target_id}/remove",
                        None if target is None else _spot_removal(target))


@router.get("/taught/name/{alias_id}/remove", response_class=HTMLResponse)
async def unname_form(request: Request, alias_id: str, web: State, who: CanChange) -> Response:
    alias = next((a for a in web.journal.aliases() if a.id == alias_id), None)
    return _ask_removal(request, who, f"/taught/name/{alias_id}/remove",
                        None if alias is None else _name_removal(alias))


@router.post("/taught/{target_id}/remove")
async def remove(target_id: str, web: State, who: CanChange) -> Response:
    return _removed(target_id, lambda i: web.journal.forget_target(i, by=who.name), "removed")


@router.post("/taught/name/{alias_id}/remove")
async def unname(alias_id: str, web: State, who: CanChange) -> Response:
    return _removed(alias_id, lambda i: web.journal.forget_alias(i, by=who.name), "unnamed")
