"""The settings page: every caregiver sees the settings, the owner and caregivers change them."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from appliance.health.language_model import in_words
from appliance.journal.application import Journal
from appliance.settings import Settings
from appliance.web.settings_form import Group, changes, groups
from appliance.web.shared import Caregiver, Form, State, can_change, page

router = APIRouter()


def with_now(shown: list[Group], journal: Journal) -> list[Group]:
    """The language model's group says what this device really uses, as Health does: the
    setting's standard value (Ollama) is only used where the device has it."""
    for group in shown:
        if any(f.key == "llm" for f in group.fields):
            group.now = in_words(journal.settings(), journal.chosen_settings()).words
    return shown


@router.get("/settings", response_class=HTMLResponse)
async def settings_page(request: Request, web: State, who: Caregiver) -> Response:
    return page(request, "settings.html", who=who, can_change=can_change(who),
                groups=with_now(groups(web.journal.settings()), web.journal))


@router.post("/settings", response_class=HTMLResponse)
async def settings_save(request: Request, web: State, who: Caregiver, data: Form) -> Response:
    if not can_change(who):
        return Response("A viewer cannot change settings.", 403)
    current = web.journal.settings()
    changed, errors = changes(current, data)
    if errors:  # nothing is saved until every field is right
        shown = with_now(groups(current, errors, data), web.journal)
        wrong = [f for g in shown for f in g.fields if f.error]
        return page(request, "settings.html", 400, who=who, can_change=True,
                    groups=shown, wrong=wrong)
    for key, value in changed.items():
        web.journal.change_setting(key, value, by=who.name)
    if "transcript_days" in changed:
        web.journal.apply_retention(by=who.name)
    return page(request, "settings.html", who=who, can_change=True, posted=True,
                saved=[Settings.label(key) for key in changed],
                groups=with_now(groups(web.journal.settings()), web.journal))
