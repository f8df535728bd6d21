"""The person's voice: the phrases in their voice profile (a SQLite file beside the journal,
appliance/voice/hearing/profile.py), each take to play, delete or approve. Every deletion is
asked first on a page of its own; every deletion and approval is journaled with the caregiver's
name (never the audio). Addresses name takes by number only: the words said never appear in a
URL, and nothing here is logged."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from appliance.audit.days import zone_name
from appliance.voice.hearing.profile import Take, TakeKind, VoiceProfile
from appliance.web.handoff import post_note
from appliance.web.shared import CanChange, Caregiver, State, WebState, can_change, page
from appliance.web.voice import PhraseRow, phrases, wav_of

router = APIRouter()

DONE = {
    "take": "The take was deleted.",
    "phrase": "Every take of that phrase was deleted.",
    "all": "Every recording of the person's voice was deleted from this device.",
    "approved": "The take is used from now on.",
    "gone": "That was no longer there, so nothing was changed.",
    "asked": ("The kiosk is asking the person now: it says each phrase, and they say it back a "
              "few times. Saying \u201cstop\u201d ends it; asking again goes on where it "
              "stopped."),
}
NO_PROFILE = ("This is the care home's server: the person's voice is kept on their own device "
              "only, so there is nothing to show here.")


def _profile(web: WebState) -> VoiceProfile | None:
    return VoiceProfile(web.voice) if web.voice is not None else None


def _take(profile: VoiceProfile | None, take_id: int) -> Take | None:
    if profile is None:
        return None
    return next((t for t in profile.takes() if t.id == take_id), None)


def _phrase_of(web: WebState, take_id: int) -> PhraseRow | None:
    """The phrase the take `take_id` is of, with all its takes."""
    profile = _profile(web)
    take = _take(profile, take_id)
    if profile is None or take is None:
        return None
    shown = phrases(profile.takes(take.phrase), web.zone)
    return next((p for p in shown if p.phrase == take.phrase), None)


def _gone(request: Request, who: Caregiver) -> Response:
    return page(request, "message.html", 404, who=who, title="Not there any more",
                message=DONE["gone"], back=("/voice", "Back to the person's voice"))


def _done(what: str) -> Response:
    return RedirectResponse(f"/voice?done={what}", 303)


@router.get("/voice", response_class=HTMLResponse)
async def voice(request: Request, web: State, who: Caregiver) -> Response:
    profile = _profile(web)
    shown = phrases(profile.takes(), web.zone) if profile is not None else []
    return page(request, "voice.html", who=who, title="The person's voice", phrases=shown,
                can_change=can_change(who), here=profile is not None,
                done=DONE.get(request.query_params.get("done", ""), ""),
                wake_phrase=web.journal.settings().wake_phrase, zone=zone_name(web.zone),
                no_profile=NO_PROFILE)


@router.post("/voice/enrol", response_class=HTMLResponse)
async def enrol(request: Request, web: State, who: CanChange) -> Response:
    """Enrolment at the kiosk begun from here: only while the kiosk is listening, so that a
    request never waits to surprise the person later."""
    kiosk = web.kiosk()
    if web.enrol is None or kiosk is None or not kiosk.ok:
        now = kiosk.headline if kiosk is not None else "There is no kiosk here"
        return page(request, "message.html", 409, who=who, title="The kiosk is not listening",
                    message=f"{now}: it can learn the person's voice only while it listens. "
                    "Nothing was started.", back=("/voice", "Back to the person's voice"))
    post_note(web.enrol, who.name)
    return _done("asked")


@router.get("/voice/take/{take_id}/audio")
async def take_audio(take_id: int, web: State, who: CanChange) -> Response:
    """The take as a WAV, for the page's player; never cached, never logged."""
    profile = _profile(web)
    pcm = profile.audio(take_id) if profile is not None else b""
    if not pcm:
        return Response("Not there any more.", 404)
    return Response(wav_of(pcm), media_type="audio/wav", headers={"Cache-Control": "no-store"})


@router.get("/voice/take/{take_id}/delete", response_class=HTMLResponse)
async def take_delete_form(request: Request, take_id: int, web: State,
                           who: CanChange) -> Response:
    shown = _phrase_of(web, take_id)
    take = next((t for t in shown.takes if t.id == take_id), None) if shown else None
    if shown is None or take is None:
        return _gone(request, who)
    return page(request, "voice_confirm.html", who=who, title="Delete this take?",
                asked="Delete this take?", action=f"/voice/take/{take_id}/delete",
                what=f"Take {take.number} of {shown.title}: {take.how.lower()}, "
                     f"{take.length}, recorded {take.when}.",
                play=take_id, button="Yes, delete this take",
                after="It is deleted from this device at once; the other takes stay.")


@router.post("/voice/take/{take_id}/delete")
async def take_delete(take_id: int, web: State, who: CanChange) -> Response:
    profile = _profile(web)
    take = _take(profile, take_id)
    if profile is None or take is None or not profile.delete_take(take_id):
        return _done("gone")
    web.journal.voice_takes_removed(take.phrase, 1, by=who.name)
    return _done("take")


@router.post("/voice/take/{take_id}/approve")
async def take_approve(take_id: int, web: State, who: CanChange) -> Response:
    """A take learned from one yes, approved: used from now on, as a second yes would."""
    profile = _profile(web)
    take = _take(profile, take_id)
    if profile is None or take is None or not take.pending or not profile.approve(take_id):
        return _done("gone")
    web.journal.voice_takes_added(take.phrase, take.kind.value, 1, "approved", by=who.name)
    return _done("approved")


@router.get("/voice/phrase/{take_id}/delete", response_class=HTMLResponse)
async def phrase_delete_form(request: Request, take_id: int, web: State,
                             who: CanChange) -> Response:
    shown = _phrase_of(web, take_id)
    if shown is None:
        return _gone(request, who)
    after = ("Until the wake phrase is enrolled again, the appliance listens for it as it "
             "does for anyone's voice." if shown.wake else
             "The wake phrase is then told apart from the person's other speech by their wake "
             "takes alone." if shown.kind == TakeKind.SPEECH else
             "The takes then keep only their copies in made-up noise, not in this room's."
             if shown.kind == TakeKind.ROOM else
             "The appliance still understands this command; only the person's own takes of "
             "it go.")
    return page(request, "voice_confirm.html", who=who, title="Delete this phrase?",
                asked=f"Delete every take of {shown.title}?",
                action=f"/voice/phrase/{take_id}/delete", what=shown.counts + ".",
                button="Yes, delete every take of it", after=after)


@router.post("/voice/phrase/{take_id}/delete")
async def phrase_delete(take_id: int, web: State, who: CanChange) -> Response:
    profile = _profile(web)
    take = _take(profile, take_id)
    if profile is None or take is None:
        return _done("gone")
    count = profile.forget(take.phrase)
    if not count:
        return _done("gone")
    web.journal.voice_takes_removed(take.phrase, count, by=who.name)
    return _done("phrase")


@router.get("/voice/delete-all", response_class=HTMLResponse)
async def all_delete_form(request: Request, web: State, who: CanChange) -> Response:
    profile = _profile(web)
    takes = profile.takes() if profile is not None else []
    if not takes:
        return _gone(request, who)
    count = len({t.phrase for t in takes})
    return page(request, "voice_confirm.html", who=who, title="Delete everything?",
                asked="Delete every recording of the person's voice?",
                action="/voice/delete-all",
                what=f"All {len(takes)} takes, of {count} phrase{'' if count == 1 else 's'}.",
                button="Yes, delete every recording",
                after="The appliance then listens as it does for anyone's voice, until the "
                      "person enrols again.")


@router.post("/voice/delete-all")
async def all_delete(web: State, who: CanChange) -> Response:
    profile = _profile(web)
    count = profile.forget(None) if profile is not None else 0
    if not count:
        return _done("gone")
    web.journal.voice_takes_removed("", count, by=who.name)
    return _done("all")
