"""The composition root: the one place that builds the journal, the desktop, the planner and
`Session`. The command line, the demo, the benches, the voice sink and the switch get them here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from appliance.desktop.model import Desktop, DesktopError
from appliance.desktop.scene import SceneError, check_can_save
from appliance.desktop.sim import SimDesktop
from appliance.journal.application import Journal
from appliance.journal.serving import open_reader, open_writer
from appliance.journal.store import NoJournal
from appliance.settings import Settings

if TYPE_CHECKING:  # names for hints only: `appliance --help` loads neither
    from appliance.desktop.seeing.taught import TaughtTarget
    from appliance.intents.planner import Planner
    from appliance.session import Session


def open_journal(store: str | None, create: bool = True) -> Journal:
    """The journal at `store` (SQLite path or postgresql:// URL; None is the default file).

    A SQLite file damaged past serving is set aside and a fresh journal started in its place
    for a writer, and read around its damage for a reader (appliance/journal/serving.py)."""
    return open_writer(store) if create else open_reader(store)


def journal_settings(store: str | None) -> Settings:
    """The settings `say` would use, without creating a journal: the journal's when there is
    one, else the defaults (as `say` would start with), with the language model in effect."""
    try:
        journal = open_journal(store, create=False)
    except NoJournal:
        return in_effect(Settings(), frozenset())
    return in_effect(journal.settings(), journal.chosen_settings())


def in_effect(settings: Settings, chosen: frozenset[str]) -> Settings:
    """`settings` with the language model the device has when a caregiver chose none."""
    if "llm" in chosen:
        return settings
    from appliance.intents.llm_default import installed_llm

    return settings.model_copy(update={"llm": installed_llm(settings)})


def journal_planner(journal: Journal, on_default: Callable[[str], None] | None = None) -> Any:
    """The planner for the journal's settings; when the model is the device's default rather
    than a caregiver's choice, `on_default` hears once which one it is."""
    settings = in_effect(journal.settings(), journal.chosen_settings())
    if on_default is not None and "llm" not in journal.chosen_settings():
        from appliance.intents.llm_default import default_notice

        on_default(default_notice(settings))
    return build_planner(settings)


@contextmanager
def opened_desktop(spec: str, write_back: bool = True) -> Iterator[Desktop]:
    """The desktop named by `spec`; a sim scene the turn changed is written back when it ends."""
    if spec.startswith("sim:"):
        path = Path(spec[4:])
        sim = SimDesktop.from_file(path)
        if write_back:  # before the turn: none is journaled whose screen could not be kept
            check_can_save(path)
        before = sim.scene.to_json() if write_back else None
        yield sim
        # Unchanged (a question, a refusal, a look at the names): there is nothing to keep, and
        # a changed scene means an action was performed and journaled, as the error says.
        if before is not None and sim.scene.to_json() != before:
            try:
                sim.save()
            except SceneError as e:
                raise SceneError(
                    f"the turn was done and journaled, but {e}; the file still shows the "
                    "screen from before the turn"
                ) from None
    elif spec == "atspi":
        # Lazy: AT-SPI is an optional extra (the desktop one), absent on a sim-only install.
        from appliance.desktop.atspi import open_desktop
        from appliance.desktop.seeing.desktop import seeing

        atspi = open_desktop()
        # Windows whose application tells little are also read from the screen (OCR).
        yield seeing(atspi, atspi.devices.click)
    else:
        raise DesktopError(f"unknown desktop {spec!r}; use atspi or sim:SCENE.json")


def build_planner(settings: Settings | None = None) -> Any:
    """The grammar first, then the language model the caregiver chose (see `settings`)."""
    # Lazy: the grammar loads hassil and its sentences, which `appliance --help` and `audit`
    # need not pay for at start-up (the import graph test still sees these edges).
    from appliance.intents.grammar import GrammarPlanner
    from appliance.intents.router import Router

    chosen = settings or Settings()
    llm: Any = None
    # Lazy: each language model is an optional extra (llm), loaded only when it is chosen.
    if chosen.llm == "ollama":
        from appliance.intents.ollama import OllamaPlanner

        llm = OllamaPlanner(host=chosen.ollama_host, model=chosen.ollama_model)
    elif chosen.llm == "llama-cpp":
        from appliance.intents.llama import LlamaCppPlanner
        from appliance.intents.llm_models import PACKAGED, model_path

        packaged = next(m for m in PACKAGED if m.key == chosen.llama_model)
        llm = LlamaCppPlanner(model_path(packaged))
    return Router(GrammarPlanner(), llm)


def grammar_planner() -> Planner:
    """The grammar alone, no language model: a caregiver's "undo that" from the web page."""
    from appliance.intents.grammar import GrammarPlanner

    return GrammarPlanner()


class JournalMemory:
    """What seeing keeps in the journal (desktop/seeing/desktop.py's `Memory`): the
    caregiver's "read it from the screen" applications and the taught targets."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def read_from_screen(self) -> frozenset[str]:
        return frozenset(self.journal.settings().screen_read_apps)

    def taught(self) -> list[TaughtTarget]:
        return self.journal.taught_targets()

    def teach(self, target: TaughtTarget) -> None:
        self.journal.teach_target(target)

    def used(self, target_id: str, hit: bool) -> None:
        self.journal.target_used(target_id, hit)


class SessionOptions(TypedDict, total=False):
    """`Session`'s optional settings: a test's clock, speech recorded by the voice layer, the
    device a switch turn came from."""

    clock: Callable[[], float]
    speaks_later: bool
    device: str


def new_session(
    journal: Journal, desktop: Desktop, planner: Planner, **options: Unpack[SessionOptions]
) -> Session:
    """A `Session` for one or more turns on `desktop`, recorded in `journal`."""
    # Lazy for the same start-up reason: the session loads the policy and the replies.
    from appliance.desktop.seeing.desktop import SeeingDesktop
    from appliance.session import Session

    if isinstance(desktop, SeeingDesktop) and desktop.memory is None:
        desktop.memory = JournalMemory(journal)  # taught targets and settings: the journal's
    return Session(journal, desktop, planner, **options)
