"""The `appliance` command (docs/architecture.md, "The command-line contract").

Every error a user can cause ends as one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import typer
from typer.core import TyperGroup
from typer.exceptions import TyperException

from appliance.audit.timeline import AuditQueryError
from appliance.desktop.model import Desktop, DesktopError
from appliance.desktop.scene import SceneError
from appliance.desktop.sim import SimDesktop
from appliance.journal.serving import renewed
from appliance.journal.store import StoreError
from appliance.journal.verification import HeadError
from appliance.limits import MAX_UTTERANCE_CHARS, control_characters, escape_controls
from appliance.settings import Settings, SettingsError, caregiver_name, parse_value
from appliance.wiring import (
    build_planner,
    journal_planner,
    journal_settings,
    new_session,
    open_journal,
    opened_desktop,
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain click help: flags read as `--json` and `--panel / --no-panel` (typer's rich panels
    # print `<bool>` after them), and no box drawing for a screen reader to spell out.
    rich_markup_mode=None,
    help="Offline, voice-first accessibility appliance.",
)
audit_app = typer.Typer(help="The caregiver's view of the journal.", invoke_without_command=True)
settings_app = typer.Typer(help="Caregiver settings (each change is journaled).")
app.add_typer(audit_app, name="audit")
app.add_typer(settings_app, name="settings")
models_app = typer.Typer(help="Speech and language models on this device.")
app.add_typer(models_app, name="models")
switch_app = typer.Typer(help="The switch (one or two buttons) and its settings.")
app.add_typer(switch_app, name="switch")
central_app = typer.Typer(help="The central server: many kiosks' journals in one PostgreSQL.")
app.add_typer(central_app, name="central")
fleet_app = typer.Typer(help="This kiosk's link to a central server (docs/fleet.md).")
app.add_typer(fleet_app, name="fleet")

USER_ERRORS: tuple[type[Exception], ...] = (
    StoreError,
    SceneError,
    SettingsError,
    DesktopError,
    AuditQueryError,
    HeadError,
    FileNotFoundError,
)

DesktopOpt = Annotated[
    str, typer.Option("--desktop", help="atspi, or sim:SCENE.json (written back after the turn)")
]
StoreOpt = Annotated[
    str | None, typer.Option("--store", help="SQLite file path or postgresql:// URL")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object")]


class CliError(Exception):
    """A one-line error for the user."""


SAY_AGAIN = "That turn could not be finished; say it again."


def checked_words(text: str, doing: str) -> str:
    """The words of `say` or `plan`, refused in one line before anything is read or acted on:
    empty, longer than a person says at once, not UTF-8, or holding control characters."""
    if not text.strip():
        raise CliError(f"nothing to {doing}: the text is empty")
    if len(text) > MAX_UTTERANCE_CHARS:
        raise CliError(
            f"the text is too long to {doing} ({len(text)} characters; at most "
            f"{MAX_UTTERANCE_CHARS}): say it in shorter parts"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes that were not UTF-8 arrive as lone surrogates
        raise CliError(
            f"the text to {doing} is not valid UTF-8; check the terminal's encoding"
        ) from None
    controls = control_characters(text.replace("\n", " ").replace("\t", " "))
    if controls:
        raise CliError(
            f"the text to {doing} holds the control character {controls[0]!r}; "
            "type plain words"
        )
    return text.replace("\n", " ").replace("\t", " ")


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, default=str))


def _scene_json(desktop: Desktop) -> dict[str, Any] | None:
    """The scene after the turn, as printed: hidden fields show the redaction marker."""
    if not isinstance(desktop, SimDesktop):
        return None
    from appliance.desktop.model import shown_value

    data = desktop.scene.to_json()

    def hide(elements: list[dict[str, Any]]) -> None:
        for el in elements:
            if "value" in el:
                el["value"] = shown_value(el.get("role"), el["value"])
            hide(el.get("children", []))

    for group in ("applications", "launchable"):
        for application in data.get(group, []):
            for window in application.get("windows", []):
                hide(window.get("children", []))
    return data


@app.command()
def say(
    text: Annotated[str, typer.Argument(help="what the user said")],
    desktop: DesktopOpt = "atspi",
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run one turn from text (no audio)."""
    text = checked_words(text, "say")
    journal = open_journal(store)
    with opened_desktop(desktop) as screen:
        session = new_session(journal, screen, journal_planner(journal))
        try:
            report = session.say(text)
        except Exception as e:
            fresh = renewed(journal, e)  # a damaged page met part-way: set aside for the next
            if fresh is None:
                raise
            raise CliError(" ".join([*fresh.take_notices(), SAY_AGAIN])) from None
    fresh = renewed(journal, notices=report.notices)  # the turn's reads met a damaged page
    if fresh is not None:
        report.notices += fresh.take_notices()
    if as_json:
        data = report.as_json()
        scene = _scene_json(screen)
        if scene is not None:
            data["desktop"] = scene
        _print_json(data)
    else:
        for notice in report.notices:
            typer.echo(notice, err=True)
        typer.echo(escape_controls(report.spoken))


@app.command()
def plan(
    text: Annotated[str, typer.Argument(help="what the user said")],
    desktop: DesktopOpt = "atspi",
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    show_context: Annotated[
        bool, typer.Option("--show-context", help="print exactly what the language model gets")
    ] = False,
) -> None:
    """Show the intent and the validator's decision; nothing is performed or journaled."""
    from appliance.desktop.model import Snapshot
    from appliance.intents.model import dump_intent
    from appliance.policy.validator import Decision, validate

    text = checked_words(text, "plan")
    settings = journal_settings(store)
    with opened_desktop(desktop, write_back=False) as screen:
        snapshot: Snapshot = screen.snapshot()
    if show_context:
        from appliance.intents.grammar import GrammarPlanner
        from appliance.intents.prompt import render_context

        # The request is hidden as `say` hides it in the journal; the grammar alone decides
        # whether it carries a secret, so showing the context never waits on the model.
        judged = validate(GrammarPlanner().plan(text, snapshot).intent, snapshot, settings)
        typer.echo(render_context(judged.shown_words(text, snapshot), snapshot), nl=False)
        return
    proposal = build_planner(settings).plan(text, snapshot)
    verdict = validate(proposal.intent, snapshot, settings)
    decision = {
        Decision.execute: "would_execute",
        Decision.confirm: "needs_confirmation",
        Decision.reject: "rejected",
        Decision.clarify: "clarify",
        Decision.answer: "answered",
        Decision.control: "control",
        Decision.show: "would_show",
    }[verdict.decision]
    shown = verdict.shown_intent()
    data = {
        "transcript": verdict.shown_words(text, snapshot),
        "intent": dump_intent(shown) if shown else None,
        "decision": decision,
        "risk": verdict.risk.value,
        "reasons": list(verdict.reasons),
        "spoken": "",
        "turn_id": None,
        "planner": proposal.planner,
        "latency_ms": round(proposal.latency_ms, 3),
        "notices": list(proposal.notes),
    }
    if as_json:
        _print_json(data)
    else:
        typer.echo(f"{decision}: {data['intent']} {'; '.join(verdict.reasons)}")


@audit_app.callback()
def audit(
    ctx: typer.Context,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    since: Annotated[
        str | None, typer.Option(help="e.g. 2026-11-21, 09:00, 2h, 30m, today")
    ] = None,
    turn: Annotated[str | None, typer.Option(help="one turn, by id or short id")] = None,
) -> None:
    """Show the timeline of what happened and why."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = store
        return
    from appliance.audit.timeline import parse_since, render_table, timeline

    start = parse_since(since)  # a bad --since is named before the journal is looked for
    journal = open_journal(store, create=False)
    rows = timeline(journal, since=start, turn=turn)
    for notice in journal.take_notices():
        typer.echo(notice, err=True)
    if as_json:
        _print_json(rows)
    else:
        typer.echo(render_table(rows))


@audit_app.command("verify")
def audit_verify(
    ctx: typer.Context,
    store: StoreOpt = None,
    expect: Annotated[
        str | None,
        typer.Option("--expect", help="a head printed by an earlier verify, e.g. 42:1a2b3c4d"),
    ] = None,
    witness: Annotated[
        Path | None,
        typer.Option(
            "--witness", help="a file (kept off the journal's disk) holding the last verified head"
        ),
    ] = None,
) -> None:
    """Check the HMAC chain and the snapshots; exit non-zero and name the damage if any."""
    from appliance.journal.verification import parse_head

    expected = parse_head(expect) if expect else None
    if witness is not None and expected is None and witness.exists():
        expected = parse_head(_read_witness(witness))
    journal = open_journal(store or ctx.obj, create=False)
    breaks = journal.verify(expected)
    if breaks:
        for b in breaks[1:]:  # stored text in a break is shown escaped, never run by the terminal
            typer.echo(escape_controls(f"also: {b}"), err=True)
        first = str(breaks[0])
        whole = first.startswith(("cannot verify", "the journal cannot", "the journal file"))
        raise CliError(first if whole else f"journal tampered: {first}")
    head = journal.head()
    if witness is not None:
        _write_witness(witness, str(head))
    typer.echo(
        f"journal intact: {head.count} events, hash chain verified; "
        f"head {head} (last event #{head.notification_id})"
    )


@audit_app.command("retain")
def audit_retain(
    ctx: typer.Context,
    store: StoreOpt = None,
    by: Annotated[str, typer.Option(help="who is running it")] = "caregiver",
) -> None:
    """Remove what was said and typed from events older than the transcript_days setting."""
    journal = open_journal(store or ctx.obj, create=False)
    days = journal.settings().transcript_days
    if not days:
        typer.echo("transcript_days is 0: what was said is kept; nothing removed")
        return
    removed = journal.apply_retention(by=caregiver_name(by))
    typer.echo(f"removed the words from {removed} events older than {days} days")
    takes = _prune_learned_takes(store or ctx.obj, days)
    if takes:
        typer.echo(f"removed {takes} take{'' if takes == 1 else 's'} of the person's voice "
                   f"learned more than {days} days ago")


def _prune_learned_takes(store: str | None, days: int) -> int:
    """Takes learned from use go with the transcripts; enrolled ones stay until removed."""
    from appliance.journal.store import voice_profile_path
    from appliance.voice.hearing.profile import VoiceProfile

    return VoiceProfile(voice_profile_path(store)).prune_learned(days * 86400)


def _read_witness(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise CliError(f"cannot read the witness {path}: {e}") from None


def _write_witness(path: Path, head: str) -> None:
    """Replaced whole (a temporary file renamed), so a crash never leaves half a head."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_text(head + "\n", encoding="utf-8")
        temporary.replace(path)
    except OSError as e:
        raise CliError(f"cannot write the witness {path}: {e.strerror}") from None


@app.command()
def undo(
    desktop: DesktopOpt = "atspi",
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Undo the most recent undoable turn (as if the user said 'undo that') on the screen it
    changed: the real one, or --desktop sim:SCENE.json for a turn done on a scene file."""
    try:
        say("undo", desktop=desktop, store=store, as_json=as_json)
    except DesktopError:
        if desktop != "atspi":
            raise
        _undo_without_a_screen(store, as_json)


def _undo_without_a_screen(store: str | None, as_json: bool) -> None:
    """No screen here (no display, no accessibility bus): nothing to undo is still an answer;
    a turn to undo names the screen it needs."""
    stack = open_journal(store).undo_stack()
    if stack:
        done = stack[0].spoken[-1] if stack[0].spoken else "the last turn"
        raise CliError(
            f"I can't reach the screen's accessibility service; the last turn ({done}) is "
            "undone on the screen it changed: run this there, or for a scene file: "
            "appliance undo --desktop sim:SCENE.json"
        )
    spoken = "There's nothing to undo."
    if as_json:
        _print_json({"transcript": "undo", "decision": "rejected", "spoken": spoken})
    else:
        typer.echo(spoken)


@app.command()
def replay(
    store: StoreOpt = None,
    since: Annotated[str | None, typer.Option(help="start of the period")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-run recorded actions on a sim built from their before-states; report divergence."""
    from appliance.audit.replay import replay_journal
    from appliance.audit.timeline import parse_since

    start = parse_since(since)
    report = replay_journal(open_journal(store, create=False), since=start)
    if as_json:
        _print_json(report)
    else:
        typer.echo(
            f"replayed {report['actions']} actions from {report['turns']} turns: "
            f"{len(report['divergences'])} divergent"
        )
        for line in report["names"]:  # names given to elements, as the audit tells them
            typer.echo(f"  {escape_controls(line)}")
        for d in report["divergences"]:
            typer.echo(f"  turn {d['turn']} step {d['step']}: {d['detail']}")
    if report["divergences"]:
        raise typer.Exit(1)


@settings_app.command("show")
def settings_show(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Show the current caregiver settings."""
    journal = open_journal(store, create=False)
    current = journal.settings()
    for notice in journal.take_notices():
        typer.echo(notice, err=True)
    if as_json:
        _print_json(current.model_dump(mode="json"))
    else:
        for key, value in current.model_dump(mode="json").items():
            typer.echo(escape_controls(f"{key} = {value}"))


# A value may be a negative number (`-5`), which click would otherwise take for an option.
@settings_app.command("set", context_settings={"ignore_unknown_options": True})
def settings_set(
    key: str,
    value: str,
    by: Annotated[str, typer.Option(help="who is making the change")],
    store: StoreOpt = None,
) -> None:
    """Change a setting; the journal records who changed what from what to what."""
    by = caregiver_name(by)
    parsed = parse_value(key, value)
    journal = open_journal(store)
    old, new = journal.change_setting(key, parsed, by=by)
    for notice in journal.take_notices():  # e.g. a damaged file set aside on opening it
        typer.echo(notice, err=True)
    typer.echo(f"{key}: {old} -> {new} (by {by})")


def _log_to_stderr() -> None:
    """APPLIANCE_LOG=info (set by the device's unit) sends the voice layer's log lines (engines
    chosen, what each segment was taken for) to stderr, which is the system journal there."""
    import logging
    import os

    level = os.environ.get("APPLIANCE_LOG", "").upper()
    if level in ("DEBUG", "INFO", "WARNING"):
        logging.basicConfig(level=level, format="%(name)s: %(message)s")


@app.command()
def run(
    audio: Annotated[
        Path | None, typer.Option("--audio", help="a WAV file instead of the mic")
    ] = None,
    desktop: DesktopOpt = "atspi",
    store: StoreOpt = None,
    speak_to: Annotated[Path | None, typer.Option("--speak-to", help="write replies here")] = None,
    panel: Annotated[bool, typer.Option(help="show the status panel (needs a display)")] = True,
    switch: Annotated[bool, typer.Option(help="take presses from a switch if one is found")] = True,
    as_json: JsonOpt = False,
) -> None:
    """Listen (microphone, or a WAV file until its end) and watch the switch; run every command."""
    from appliance.health.heartbeat import heartbeat_path
    from appliance.journal.store import voice_profile_path
    from appliance.kiosk import run_kiosk
    from appliance.session import TurnReport
    from appliance.web.handoff import enrol_path, notes_path, pairing_path, web_dir

    _log_to_stderr()
    if speak_to is not None:  # found out now, not after the commands have been carried out
        from appliance.voice.audio.output import check_speak_to

        check_speak_to(speak_to)
    journal = open_journal(store)

    def report(turn: TurnReport) -> None:
        if as_json:
            _print_json(turn.as_json())
        else:
            typer.echo(f"heard: {turn.transcript}  ->  {turn.spoken}  [{turn.decision}]")

    start_notices: list[str] = []  # said once the audio is open: a missing mic is one line
    run_kiosk(
        journal,
        lambda: opened_desktop(desktop),
        journal_planner(journal, on_default=start_notices.append),
        audio,
        speak_to,
        report,
        lambda notice: typer.echo(notice, err=True),
        panel=panel,
        switch=switch,
        start_notices=start_notices,
        pairing_file=pairing_path(store),
        notes_file=notes_path(store),
        enrol_file=enrol_path(store),
        heartbeat_file=heartbeat_path(web_dir(store)),
        voice_profile=voice_profile_path(store),
    )


@app.command()
def enroll(
    files: Annotated[list[Path] | None, typer.Argument(help="WAV files, one take each")] = None,
    wake: Annotated[bool, typer.Option("--wake", help="the files are the wake phrase")] = False,
    speech: Annotated[
        bool, typer.Option("--speech", help="the files are the person talking freely")
    ] = False,
    room: Annotated[
        bool, typer.Option("--room", help="the file is the room's own sound, no one speaking")
    ] = False,
    phrase: Annotated[
        str | None, typer.Option("--phrase", help="the command the files say")
    ] = None,
    show: Annotated[bool, typer.Option("--list", help="show what is enrolled")] = False,
    forget: Annotated[
        bool, typer.Option("--forget", help="remove the takes of PHRASE, or all of them")
    ] = False,
    by: Annotated[str, typer.Option(help="who is enrolling")] = "caregiver",
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Teach the appliance the person's own voice: their takes of the wake phrase
    (`--wake A.wav ...`), of a command (`--phrase "tick urgent" A.wav ...`) or of them talking
    freely (`--speech A.wav ...`, up to 30 s each, which the wake phrase is told apart from),
    or the sound of their room with no one speaking (`--room A.wav`, 5-60 s, the noise every
    take is also learned in), kept on this device beside the journal, never in it; `--list`
    shows them, `--forget [--phrase P]` removes them."""
    from appliance.journal.store import voice_profile_path
    from appliance.voice.enrolment import enrol_files
    from appliance.voice.hearing.profile import TakeKind, VoiceProfile

    chosen = [name for name, on in (("--wake", wake), ("--speech", speech), ("--room", room),
                                    ("--list", show), ("--forget", forget)) if on]
    if len(chosen) > 1:
        raise CliError(f"choose one of {', '.join(chosen)}")
    profile = VoiceProfile(voice_profile_path(store))
    if show or forget:
        if files:
            raise CliError(f"{chosen[0]} takes no WAV files")
        if forget:
            journal = open_journal(store)
            count = profile.forget(phrase)
            if count:
                journal.voice_takes_removed(phrase or "", count, by=caregiver_name(by))
            typer.echo(f"removed {count} take{'' if count == 1 else 's'}"
                       + (f" of '{phrase}'" if phrase else ""))
            return
        _print_takes(profile, as_json)
        return
    if not (wake or speech or room) and phrase is None:
        raise CliError("say what the files are: --wake, --speech, --room, or "
                       "--phrase \"the command\"")
    if (wake or speech or room) and phrase is not None:
        raise CliError(f"{chosen[0]} and --phrase: the files are one or the other")
    kind = (TakeKind.WAKE if wake else TakeKind.SPEECH if speech
            else TakeKind.ROOM if room else TakeKind.COMMAND)
    journal = open_journal(store)
    done = enrol_files(profile, kind, phrase, journal.settings().wake_phrase, files or [])
    journal.voice_takes_added(done.phrase, done.kind.value, len(done.takes), "enrolled",
                              by=caregiver_name(by))
    count = len(profile.takes(done.phrase))
    typer.echo(f"added {len(done.takes)} take{'' if len(done.takes) == 1 else 's'} of "
               f"'{done.phrase}' ({count} in all)")


def _print_takes(profile: Any, as_json: bool) -> None:
    takes = profile.takes()
    if as_json:
        _print_json({"profile": str(profile.path), "takes": [
            {"id": t.id, "phrase": t.phrase, "kind": t.kind.value, "source": t.source.value,
             "pending": t.pending, "seconds": round(t.seconds, 2)} for t in takes]})
        return
    if not takes:
        typer.echo("nothing is enrolled yet")
        return
    counts: dict[tuple[str, str], list[Any]] = {}
    for t in takes:
        counts.setdefault((t.kind.value, t.phrase), []).append(t)
    for (kind, said), group in counts.items():
        waiting = sum(t.pending for t in group)
        extra = f", {waiting} waiting for a second yes" if waiting else ""
        what = {"wake": "wake phrase", "speech": "free speech",
                "room": "the room's own sound"}.get(kind, "command")
        typer.echo(f"{said} ({what}): {len(group)} take{'' if len(group) == 1 else 's'}{extra}")


@switch_app.command("probe")
def switch_probe(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List the input devices that could be the switch, and which one would be used."""
    from dataclasses import asdict

    from appliance.switch.devices import probe

    found = probe(open_journal(store).settings())
    if as_json:
        _print_json([asdict(c) for c in found])
    else:
        for c in found:
            typer.echo("  ".join(f"{k}={v}" for k, v in asdict(c).items()))
    # The same exit with and without --json: non-zero when no device would be used.
    if not found:
        raise CliError("No switch found: plug one in, or set switch_device and switch_keys.")
    if not any(c.chosen for c in found):
        raise CliError(
            "None of these would be used as the switch: set switch_device and switch_keys."
        )


@app.command()
def doctor(
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    names: Annotated[str | None, typer.Option("--only", help="e.g. journal,disk")] = None,
) -> None:
    """Check this device end to end, one line per part; exit 1 when any part has a problem."""
    from appliance.health.doctor import UnknownCheck, line, only, probes, problems, report, run_all

    try:
        chosen = only(probes(store), names)
    except UnknownCheck as e:
        _fail(str(e), 2)
    results = run_all(chosen, None if as_json else lambda r: typer.echo(line(r)))
    if as_json:
        _print_json(report(results))
    if problems(results):
        raise CliError(f"a problem with: {', '.join(problems(results))}")


@app.command()
def listen(
    audio: Annotated[Path, typer.Argument(help="a WAV file")],
    as_json: JsonOpt = False,
) -> None:
    """Transcripts and timings of a WAV file; nothing is planned or performed."""
    from appliance.voice.commands import listen as heard_in

    segments = heard_in(audio)
    if as_json:
        _print_json(segments)
    else:
        for s in segments:
            typer.echo(f"{s.get('text', '')!r} {s.get('timings', {})}")


@models_app.callback(invoke_without_command=True)
def models(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Show the speech models: installed, packaged, verified."""
    if ctx.invoked_subcommand is not None:
        return
    from appliance.intents.llm_models import embedded_status
    from appliance.intents.ollama import ollama_status
    from appliance.voice.commands import models_status

    settings = Settings()
    report: dict[str, Any] = {
        "speech": models_status(),
        "ollama": ollama_status(settings.ollama_host),
        "embedded": embedded_status(),
    }
    if as_json:
        _print_json(report)
        return
    for row in report["speech"]:
        typer.echo("speech  " + "  ".join(f"{k}={v}" for k, v in row.items()))
    typer.echo("ollama  " + "  ".join(f"{k}={v}" for k, v in report["ollama"].items()))
    for row in report["embedded"]["models"]:
        typer.echo("gguf    " + "  ".join(f"{k}={v}" for k, v in row.items()))


@models_app.command("install")
def models_install(
    name: Annotated[str | None, typer.Argument(help="e.g. vosk-model-small-en-us")] = None,
    ollama: Annotated[str | None, typer.Option("--ollama", help="pull this Ollama model")] = None,
) -> None:
    """Install a speech model (download + sha256) or pull an Ollama model, with progress."""
    if ollama:
        from appliance.intents.ollama import models_install_ollama

        models_install_ollama(ollama, host=Settings().ollama_host)
        typer.echo(f"pulled {ollama}")
        return
    if not name:
        raise CliError("name a model to install, or --ollama MODEL")
    from appliance.voice.commands import models_install as install

    install(name)
    typer.echo(f"installed {name}")


@models_app.command("verify")
def models_verify(as_json: JsonOpt = False) -> None:
    """Check every installed model's checksum."""
    from appliance.voice.commands import models_verify as verify

    rows = verify()
    if as_json:
        _print_json(rows)
    else:
        for row in rows:
            typer.echo("  ".join(f"{k}={v}" for k, v in row.items()))
    if any(not row.get("ok", True) for row in rows):
        raise typer.Exit(1)


@app.command()
def serve(
    store: StoreOpt = None,
    desktop: DesktopOpt = "atspi",
    port: Annotated[int, typer.Option(min=1, max=65535, help="loopback port")] = 8400,
    lan: Annotated[bool, typer.Option(
        help="serve the home network over TLS (a self-signed certificate made on first start)"
    )] = False,
    host: Annotated[str | None, typer.Option(help="with --lan: the address to serve on")] = None,
    create: Annotated[bool, typer.Option(
        help="make the journal if there is none (the device's unit does; by hand, a mistyped "
        "--store is refused instead)"
    )] = False,
    central_db: Annotated[str | None, typer.Option(
        help="postgresql:// URL of a central server's database: adds the Fleet page")] = None,
) -> None:
    """The caregiver web page: http://127.0.0.1:PORT/ on this machine, or https on the LAN."""
    if host is not None and not lan:
        _fail("--host is for --lan; without it the page is served on 127.0.0.1 only", 2)
    from appliance.web.serve import run_server

    run_server(store, port, desktop, lan=lan, host=host, create=create, central_db=central_db)


@app.command()
def demo(
    store: StoreOpt = None,
    keep: Annotated[Path | None, typer.Option(help="keep the demo files here")] = None,
    text: Annotated[bool, typer.Option("--text", help="typed lines instead of speech")] = False,
) -> None:
    """The main job on embedded defaults: a spoken session on the bundled scene, then the audit."""
    from appliance.demo import run_demo, run_spoken_demo

    if text:
        run_demo(store=store, keep=keep)
    else:
        run_spoken_demo(store=store, keep=keep)


LAB = "appliance_lab"
"""The lab's package (lab/, installed with the dev extra): every benchmark is there, none here."""


def _lab(module: str) -> ModuleType:
    """A module of the lab, imported only when a benchmark runs."""
    if importlib.util.find_spec(LAB) is None:
        raise CliError(
            "the benchmarks are in the lab, which is not installed here: `make setup` installs "
            "it (with the dev extra)"
        )
    return importlib.import_module(f"{LAB}.{module}")


def _progress(prefix: str) -> Callable[[str], None]:
    # Minutes of work: progress on stderr, the JSON alone on stdout.
    return lambda line: typer.echo(f"{prefix}: {line}", err=True)


class _Benchmarks(TyperGroup):
    """`appliance bench NAME`: an unknown NAME is refused in one line naming the benchmarks."""

    # Any: typer's click types are its own private copy of click's (typer._click).
    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands:
            *names, last = self.commands
            raise CliError(f"unknown benchmark {args[0]!r}; choose {', '.join(names)} or {last}")
        return super().resolve_command(ctx, args)


bench_app = typer.Typer(cls=_Benchmarks, invoke_without_command=True)
app.add_typer(bench_app, name="bench")


@bench_app.callback()
def bench(ctx: typer.Context, store: StoreOpt = None) -> None:
    """On-device benchmark reports (JSON), run by the lab (the dev extra); none named: core."""
    if ctx.invoked_subcommand is None:
        bench_core(store)


@bench_app.command("core")
def bench_core(store: StoreOpt = None) -> None:
    """The grammar, a turn's overhead and the journal's rates."""
    _print_json(_lab("bench.core").bench_core(store))


@bench_app.command("voice")
def bench_voice(
    sample: Annotated[int, typer.Option(
        min=0, help="held-out items per voice and condition (0: no held-out part)",
    )] = 2,
    fa_hours: Annotated[float, typer.Option(
        min=0.0, help="hours of non-wake speech and noise for false accepts")] = 1.0,
    recognizers: Annotated[str, typer.Option(
        help="recognizers compared on the held-out part")] = "open,closed",
    held_out_only: Annotated[bool, typer.Option(help="only the held-out section")] = False,
) -> None:
    """The voice pipeline's stages, barge-in, and the spoken corpus's held-out part."""
    _print_json(_lab("bench.voice").bench_voice(
        held_out_sample=sample, fa_hours=fa_hours,
        recognizers=[r.strip() for r in recognizers.split(",") if r.strip()],
        held_out_only=held_out_only, progress=_progress("bench voice"),
    ))


@bench_app.command("voice-apps")
def bench_voice_apps(
    voices: Annotated[int, typer.Option(
        min=0, help="the first N voices of each part (0: all)")] = 0,
    cases: Annotated[str, typer.Option(help="only the cases whose names hold this text")] = "",
) -> None:
    """Spoken commands to real applications over AT-SPI."""
    _print_json(_lab("bench.spoken.apps").bench_voice_apps(
        voices, progress=_progress("bench voice-apps"), cases=lambda case: cases in case.name))


@bench_app.command("voice-corpus")
def bench_voice_corpus(
    out: Annotated[Path | None, typer.Option(help="where to write it")] = None,
    part: Annotated[str, typer.Option(help="tune or heldout")] = "tune",
    limit: Annotated[int | None, typer.Option(min=1, help="at most this many items")] = None,
) -> None:
    """Write the spoken corpus as WAVs (and manifest.jsonl)."""
    corpus, voices = _lab("bench.spoken.corpus"), _lab("bench.spoken.voices")
    if out is None or part not in ("tune", "heldout"):
        raise CliError("voice-corpus needs --out DIR and --part tune or heldout")
    try:
        n = corpus.write_corpus(out, part, limit, progress=_progress("voice-corpus"))
    except voices.SynthesisError as e:
        raise CliError(str(e)) from None
    typer.echo(f"{n} items in {out} (manifest.jsonl)")


@bench_app.command("voice-enrolled")
def bench_voice_enrolled(
    per: Annotated[int, typer.Option(
        min=0, help="test items per voice and condition (0: false accepts only)")] = 4,
    voices: Annotated[int, typer.Option(min=0, help="the part's first N voices (0: all)")] = 0,
    fa_hours: Annotated[float, typer.Option(
        min=0.0, help="hours of non-wake audio with the profiles in use, earlier runs' "
        "included")] = 0.5,
    part: Annotated[str, typer.Option(help="heldout or tune")] = "heldout",
    arms: Annotated[str, typer.Option(help="before (no profile), after, or both")] =
        "before,after",
    jobs: Annotated[int, typer.Option(min=1, help="children at once")] = 1,
    fa_before: Annotated[bool, typer.Option(
        help="false accepts without a profile too, on the same audio")] = False,
    reuse: Annotated[bool, typer.Option(
        help="an arm saved in --work for the same items is not run again")] = False,
    work: Annotated[Path | None, typer.Option(
        help="profiles and false-accept results (default .cache/personal-templates)")] = None,
    speech: Annotated[bool, typer.Option(
        help="the enrolment ends with half a minute of each voice talking freely")] = False,
    room: Annotated[bool, typer.Option(
        help="and with half a minute of its room, no one speaking")] = False,
) -> None:
    """The person's own voice (issue 44): before and after enrolment, per condition."""
    if part not in ("tune", "heldout"):
        raise CliError("voice-enrolled needs --part tune or heldout")
    chosen = [a.strip() for a in arms.split(",") if a.strip()]
    if not chosen or any(a not in ("before", "after") for a in chosen):
        raise CliError("--arms is before, after, or before,after")
    _print_json(_lab("bench.spoken.personal_bench").bench_voice_enrolled(
        part=part, per=per, voices=voices, fa_hours=fa_hours, workdir=work, arms=chosen,
        jobs=jobs, fa_arms=["after", "before"] if fa_before else ["after"], reuse=reuse,
        speech=speech, room=room, progress=_progress("bench voice-enrolled")))


@bench_app.command("desktop")
def bench_desktop() -> None:
    """AT-SPI snapshots and actions: a 500-widget GTK window, then real applications."""
    report = _lab("bench.desktop").bench_desktop()
    report["real_apps"] = _lab("bench.desktop_real").bench_real_apps(
        progress=_progress("bench desktop"))
    report["seen"] = _lab("bench.desktop_seen").bench_seen()  # OCR: words found, its cost
    _print_json(report)


@bench_app.command("planner")
def bench_planner() -> None:
    """The planners' accuracy and latency: the grammar, the language models, both."""
    from appliance.intents.grammar import GrammarPlanner

    planner = _lab("bench.planner")
    llms = planner.packaged_llms()
    _print_json({
        "corpus": planner.bench_planner(
            GrammarPlanner(), llms, planner.CORPUS, progress=_progress("bench planner: corpus")),
        "held_out": planner.bench_planner(
            GrammarPlanner(), llms, planner.HELD_OUT,
            progress=_progress("bench planner: held out")),
    })


@bench_app.command("switch")
def bench_switch() -> None:
    """The switch: press to action latency, and scan step jitter."""
    _print_json(_lab("bench.switch").bench_switch())


@bench_app.command("web")
def bench_web() -> None:
    """The caregiver page: the day page, a turn reaching the page, memory."""
    _print_json(_lab("bench.web").bench_web(progress=_progress("bench web")))


@bench_app.command("fleet")
def bench_fleet(
    store: StoreOpt = None,
    kiosks: Annotated[int, typer.Option(min=1, max=500, help="simulated kiosks")] = 20,
) -> None:
    """Simulated kiosks pushing their journals to one central server."""
    _print_json(_lab("bench.fleet").bench_fleet(
        store, kiosks=kiosks, progress=_progress("bench fleet")))


@bench_app.command("boot")
def bench_boot() -> None:
    """The device image under QEMU, from power-on to the first command."""
    boot, vm = _lab("bench.boot"), _lab("bench.vm")
    try:
        _print_json(boot.bench_boot(_progress("bench boot")))
    except vm.VMError as e:
        raise CliError(str(e)) from None

DbOpt = Annotated[str, typer.Option(
    "--db", envvar="APPLIANCE_CENTRAL_DB", help="postgresql:// URL of the central database")]
CentralHostOpt = Annotated[str | None, typer.Option(
    "--host", help="the central's address (default: this machine's LAN address)")]
CentralStateOpt = Annotated[Path | None, typer.Option(
    "--state", help="the central's folder for its TLS certificate")]


def _central_certificate(host: str | None, state: Path | None) -> tuple[str, Any]:
    from appliance.fleet.operations import central_dir
    from appliance.web.tls import certificate, lan_address

    address = host or lan_address()
    return address, certificate(central_dir(state), address)


@central_app.command("serve")
def central_serve(
    db: DbOpt, host: CentralHostOpt = None, state: CentralStateOpt = None,
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8500,
) -> None:
    """Receive the kiosks' batches over HTTPS and write them to PostgreSQL, exactly once."""
    from appliance.fleet.central_app import run_central

    address, made = _central_certificate(host, state)
    typer.echo(f"appliance central: certificate (SHA-256) {made.fingerprint}", err=True)
    run_central(db, address, port, made.cert, made.key)


@central_app.command("enroll")
def central_enroll(
    name: Annotated[str, typer.Argument(help="the kiosk's name, e.g. room-12")],
    db: DbOpt, host: CentralHostOpt = None, state: CentralStateOpt = None,
) -> None:
    """Print a one-time token (good once, for a day) for `appliance fleet join`."""
    from appliance.fleet.operations import enroll

    _address, made = _central_certificate(host, state)
    token = enroll(db, name, made.fingerprint)
    typer.echo(f"appliance central: on kiosk {name}: appliance fleet join URL TOKEN", err=True)
    typer.echo(token)


@central_app.command("revoke")
def central_revoke(name: str, db: DbOpt) -> None:
    """Refuse a kiosk from now on (enrolling it again lifts this)."""
    from appliance.fleet.operations import revoke

    revoke(db, name)
    typer.echo(f"kiosk {name} revoked")


@central_app.command("status")
def central_status(db: DbOpt, as_json: JsonOpt = False) -> None:
    """Every kiosk: last seen, events, refusals and failures, alerts."""
    from appliance.fleet.operations import overview, overview_lines

    kiosks = overview(db)
    typer.echo(json.dumps(kiosks) if as_json else overview_lines(kiosks))


@fleet_app.command("join")
def fleet_join(
    url: Annotated[str, typer.Argument(help="https://CENTRAL:8500")],
    token: Annotated[str, typer.Argument(help="what appliance central enroll printed")],
) -> None:
    """Enroll this kiosk: pin the central's certificate, keep this kiosk's credential."""
    from appliance.fleet.join import join
    from appliance.fleet.link import link_path

    link = join(url, token)
    typer.echo(f"joined {link.url} as kiosk {link.kiosk}; the link is in {link_path()}")


@fleet_app.command("uplink")
def fleet_uplink(
    store: StoreOpt = None,
    once: Annotated[bool, typer.Option("--once", help="send what is pending, then exit")] = False,
    batch: Annotated[int, typer.Option(min=1, max=1000, help="events a batch at most")] = 500,
) -> None:
    """Push this kiosk's journal to the central server, following it as it grows."""
    from appliance.fleet.operations import uplink
    from appliance.web.handoff import web_dir

    sent = uplink(store, web_dir(store), once, batch)
    if sent is not None:
        _print_json(sent)


@fleet_app.command("status")
def fleet_status(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """How far behind the central copy is (what the health page shows)."""
    from appliance.fleet.operations import uplink_status
    from appliance.web.handoff import web_dir

    typer.echo(uplink_status(web_dir(store), as_json))


def main() -> None:
    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except typer.Abort:
        _fail("aborted")
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except TyperException as e:  # usage errors: unknown command, missing argument
        _fail(e.format_message().replace("\n", " "), code=2)
    except KeyboardInterrupt:
        _fail("interrupted", code=130)
    except Exception as e:  # the promise: never a traceback
        if isinstance(e, (CliError, *USER_ERRORS, *_extra_errors())):
            _fail(str(e))
        _fail(f"internal error: {type(e).__name__}: {e}", code=70)


def _extra_errors() -> tuple[type[Exception], ...]:
    """Errors of the optional extras (voice, llm, desktop), when they are installed."""
    found: list[type[Exception]] = []
    for module, name in (
        ("appliance.voice.errors", "VoiceError"),
        ("appliance.intents.ollama", "ModelInstallError"),
        ("appliance.switch.devices", "SwitchError"),
    ):
        with suppress(ImportError):
            found.append(getattr(importlib.import_module(module), name))
    return tuple(found)


def _fail(message: str, code: int = 1) -> None:
    first = message.strip().splitlines()[0] if message.strip() else "error"
    typer.echo(f"appliance: {escape_controls(first)}", err=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
