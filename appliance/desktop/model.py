"""The snapshot model every desktop adapter (sim, AT-SPI, uinput) speaks.

A `Snapshot` is a flat, read-only view of what is on screen; planners and the validator only
ever see snapshots, so a scene file and a real GTK window look the same to them.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from appliance.desktop.roles import SECRET_ROLES
from appliance.limits import MAX_NAME_CHARS, MAX_VALUE_CHARS, clip

REDACTED = "[redacted]"
"""What the journal, the voice and every printout show instead of a secret."""


V = TypeVar("V")


def shown_value(role: str | None, value: V) -> V | str:
    """An element's value as it may leave the device's screen: a secret one is the marker."""
    if role in SECRET_ROLES and value:
        return REDACTED
    return value


class Risk(StrEnum):
    harmless = "harmless"
    moderate = "moderate"
    destructive = "destructive"

    @property
    def rank(self) -> int:
        return list(Risk).index(self)


class Node(BaseModel):
    """One element on screen, addressed by `id` (a path that is stable for one snapshot)."""

    model_config = ConfigDict(frozen=True)

    id: str
    role: str
    name: str
    app: str
    window: str
    parent_id: str | None = None
    value: str | float | None = None
    states: frozenset[str] = frozenset()
    risk: Risk | None = None
    minimum: float | None = None
    maximum: float | None = None
    actions: tuple[str, ...] = ()
    child_ids: tuple[str, ...] = ()
    bounds: tuple[int, int, int, int] | None = None  # x, y, width, height on screen, if known
    # Who says the element is there: the application (its accessibility tree), the screen as
    # read by OCR ("seen": the application says nothing of it), or a person who named a spot
    # ("taught"). Seen and taught elements are acted on by a click at their middle.
    source: Literal["tree", "seen", "taught"] = "tree"
    confidence: float | None = None  # how sure the reading is, 0..1, for seen and taught ones

    @property
    def secret(self) -> bool:
        return self.role in SECRET_ROLES

    @property
    def enabled(self) -> bool:
        return "insensitive" not in self.states

    @property
    def visible(self) -> bool:
        return "invisible" not in self.states

    def shown_value(self) -> str | float | None:
        """The value as it may be spoken, journaled or printed."""
        return shown_value(self.role, self.value)


class Snapshot(BaseModel):
    """What is on screen now: running applications, their windows' elements, what can be opened."""

    model_config = ConfigDict(frozen=True)

    nodes: tuple[Node, ...] = ()
    applications: tuple[str, ...] = ()
    launchable: tuple[str, ...] = ()
    active_app: str | None = None
    active_window: str | None = None
    keystrokes: tuple[str, ...] = ()

    @field_validator("nodes")
    @classmethod
    def _cap_text(cls, nodes: tuple[Node, ...]) -> tuple[Node, ...]:
        """Names and values over the limits are cut here, so no adapter hands on megabytes."""
        return tuple(_capped(n) for n in nodes)

    @field_validator("applications", "launchable")
    @classmethod
    def _cap_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(clip(n, MAX_NAME_CHARS) for n in names)

    @field_validator("active_app", "active_window")
    @classmethod
    def _cap_name(cls, name: str | None) -> str | None:
        return None if name is None else clip(name, MAX_NAME_CHARS)

    @cached_property
    def _by_id(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    def node(self, node_id: str) -> Node | None:
        return self._by_id.get(node_id)

    def descendants(self, node: Node) -> list[Node]:
        """Everything inside `node`, in document order."""
        out: list[Node] = []
        stack = list(reversed(node.child_ids))
        while stack:
            child = self._by_id.get(stack.pop())
            if child is not None:
                out.append(child)
                stack.extend(reversed(child.child_ids))
        return out

    def in_active_window(self) -> list[Node]:
        return [
            n for n in self.nodes if n.app == self.active_app and n.window == self.active_window
        ]

    def names(self) -> list[str]:
        """Every distinct element name, for grammar slot lists and STT vocabulary."""
        return sorted({n.name for n in self.nodes if n.name})


def _capped(node: Node) -> Node:
    """The node with its name, value, application and window cut to the limits (if over)."""
    value = node.value
    if not (
        len(node.name) > MAX_NAME_CHARS
        or len(node.app) > MAX_NAME_CHARS
        or len(node.window) > MAX_NAME_CHARS
        or (isinstance(value, str) and len(value) > MAX_VALUE_CHARS)
    ):
        return node
    return node.model_copy(
        update={
            "name": clip(node.name, MAX_NAME_CHARS),
            "app": clip(node.app, MAX_NAME_CHARS),
            "window": clip(node.window, MAX_NAME_CHARS),
            "value": clip(value, MAX_VALUE_CHARS) if isinstance(value, str) else value,
        }
    )


class ElementState(BaseModel):
    """The mutable part of one element, before or after an action (for verification and undo)."""

    model_config = ConfigDict(frozen=True)

    value: str | float | None = None
    states: frozenset[str] = frozenset()
    activations: int = 0
    running: bool | None = None  # for an application node: is it open


ActionKind = Literal[
    "activate",
    "type_text",
    "press_key",
    "open_app",
    "focus",
    "scroll",
    "set_value",
    "select",
    "restore",
    "click_at",  # the pointer grid: a click at a point, whatever is there
]


class Action(BaseModel):
    """A concrete thing to do to the desktop, already resolved to a node id."""

    model_config = ConfigDict(frozen=True)

    kind: ActionKind
    target: str | None = None  # node id; for open_app the application name
    text: str | None = None
    key: str | None = None  # e.g. "Return", "ctrl+z"
    value: str | float | bool | None = None
    direction: Literal["up", "down", "left", "right"] | None = None
    restore: dict[str, ElementState] | None = None  # for "restore": node id -> state to put back
    point: tuple[int, int] | None = None  # for "click_at": where on screen

    def redacted(self) -> Action:
        """The same action with the words it carries hidden (typed text, a value that is not a
        tick): what is journaled for an action on a secret field."""
        update: dict[str, str] = {}
        if self.text:
            update["text"] = REDACTED
        if self.value is not None and not isinstance(self.value, bool):
            update["value"] = REDACTED
        return self.model_copy(update=update)


class ActionResult(BaseModel):
    """Before and after state of every node an action touched."""

    before: dict[str, ElementState] = Field(default_factory=dict)
    after: dict[str, ElementState] = Field(default_factory=dict)
    verified: bool = True
    via: str = "sim"  # which adapter carried it out: sim, atspi, uinput
    detail: str = ""


class DesktopError(Exception):
    """An action could not be carried out; the message is short and can be spoken."""


class Desktop(Protocol):
    """What every desktop adapter provides."""

    def snapshot(self) -> Snapshot: ...

    def perform(self, action: Action) -> ActionResult: ...

    def problems(self) -> list[str]:
        """Spoken notes on what cannot be reached right now (an application not answering)."""
        ...
