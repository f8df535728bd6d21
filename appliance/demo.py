"""`appliance demo`: a short scripted session on the bundled scene, then the audit timeline."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import typer

from appliance.audit.timeline import render_table, timeline
from appliance.desktop.sim import SimDesktop
from appliance.journal.application import Journal
from appliance.scenes import bundled_scene
from appliance.wiring import journal_planner, new_session, open_journal, opened_desktop

DEMO_LINES = (
    "type hello grandma in the message box",
    "click send",
    "yes",
    "untick urgent",
    "undo that",
    "what is on the screen",
)


SPOKEN_DEMO = (
    "hey juniper, type hello grandma in the message box",
    "hey juniper, click send",
    "yes",
    "hey juniper, undo that",
)


def _workspace(keep: Path | None) -> tuple[Path, Path]:
    """A folder with a fresh copy of the bundled scene (kept only when asked)."""
    workdir = keep or Path(tempfile.mkdtemp(prefix="appliance-demo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    scene = workdir / "scene.json"
    shutil.copyfile(bundled_scene(), scene)
    return workdir, scene


def _audit(journal: Journal, workdir: Path, keep: Path | None) -> None:
    typer.echo("Audit timeline:\n")
    typer.echo(render_table(timeline(journal)))
    breaks = journal.verify()
    typer.echo("\nHash chain: " + ("intact." if not breaks else f"BROKEN: {breaks[0]}"))
    kept = workdir / "journal.sqlite"
    if keep is not None and kept.exists():  # shown in a browser by `appliance serve`
        typer.echo(f"The caregiver's page: appliance serve --store {kept}, "
                   "then open http://127.0.0.1:8400/")
    if keep is None:
        shutil.rmtree(workdir, ignore_errors=True)


def run_demo(store: str | None = None, keep: Path | None = None) -> None:
    """The session typed instead of spoken: quick, and needs no speech models."""
    workdir, scene = _workspace(keep)
    journal = open_journal(store or str(workdir / "journal.sqlite"))
    typer.echo(f"Demo on the bundled Messages scene (files in {workdir}).")
    planner = journal_planner(journal, on_default=typer.echo)
    typer.echo("")
    for line in DEMO_LINES:
        desktop = SimDesktop.from_file(scene)
        report = new_session(journal, desktop, planner).say(line)
        desktop.save()
        typer.echo(f"  you:       {line}")
        typer.echo(f"  appliance: {report.spoken}   [{report.decision}]\n")
    _audit(journal, workdir, keep)


def run_spoken_demo(store: str | None = None, keep: Path | None = None) -> None:
    """Piper speaks the session, the voice pipeline hears it, the sim acts, the audit shows it."""
    from appliance.session import TurnReport
    from appliance.session_sink import SessionSink

    # Lazy: the voice pipeline is an optional extra (voice); `demo --text` runs without it.
    from appliance.voice.commands import engines, run_audio, synthesize_demo_audio

    workdir, scene = _workspace(keep)
    journal = open_journal(store or str(workdir / "journal.sqlite"))
    typer.echo("Loading the speech models (offline; a few seconds)...")
    engines(progress=True)
    audio = synthesize_demo_audio(list(SPOKEN_DEMO), workdir / "demo.wav")
    typer.echo(f"Synthesized the spoken session: {len(SPOKEN_DEMO)} lines with Piper.\n")

    def show(report: TurnReport) -> None:
        typer.echo(f"  heard:     {report.transcript}")
        typer.echo(f"  appliance: {report.spoken}   [{report.decision}]\n")

    planner = journal_planner(journal, on_default=lambda notice: typer.echo(notice + "\n"))
    sink = SessionSink(journal, lambda: opened_desktop(f"sim:{scene}"), planner, show)
    replies = workdir / "replies.wav"
    stats = run_audio(audio, sink, replies)
    journal.count_ignored_speech(sink.device, stats.ignored)
    if keep is not None:
        typer.echo(f"Spoken replies: {replies}\n")
    run_switch_demo(journal, scene)
    _audit(journal, workdir, keep)


def run_switch_demo(journal: Journal, scene: Path, target: str = "Send") -> None:
    """One switch, auto-scan: wait for `target` to be offered, press, press again for yes.

    Presses come from the script and time from a virtual clock, as in the tests; on a kiosk
    they come from evdev and the monotonic clock (`appliance run`)."""
    from appliance.switch.controller import SwitchController
    from appliance.switch.model import Press

    journal.change_setting("scan_mode", "auto", by="demo")
    typer.echo("A switch user, one switch, auto-scan (a scripted press; the clock is virtual):\n")
    clock = [0.0]
    controller = SwitchController(
        journal,
        lambda: opened_desktop(f"sim:{scene}"),
        journal_planner(journal),
        speak=lambda text: typer.echo(f"  appliance: {text}"),
        show=lambda _state: None,
    )

    def press() -> None:
        typer.echo("  (press)")
        controller.handle(Press(1, "tap", clock[0], 0.1))

    ids = {n.id for n in SimDesktop.from_file(scene).snapshot().nodes if n.name == target}
    press()  # start scanning
    while (offer := controller.scanner.current) is not None and offer.item.label != target:
        if ids & set(offer.item.node_ids):
            press()  # the group that holds the target: go in
            continue
        clock[0] += 0.1
        controller.tick(clock[0])
    press()  # select it: Send asks for a yes
    press()  # yes
    journal.change_setting("scan_mode", "off", by="demo")
    typer.echo("")
