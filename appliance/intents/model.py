"""Intents: what a planner proposes. Untrusted until the policy validator has looked at them.

One JSON schema, generated from these models (`intent_json_schema()`), serves the grammar
planner, the Ollama `format` parameter and the validator.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from appliance.desktop.model import REDACTED


class _Intent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    words: str = Field(default="", description="the words this intent came from")

    def redacted(self, hidden: Collection[int], names: Mapping[int, str] | None = None) -> Self:
        """This intent as it may leave a turn: the person's words hidden in every step whose
        index is in `hidden` (a one-step intent is step 0), and in the whole if any is. A hidden
        step's target becomes the on-screen name it was tied to (`names`, by step), else is
        hidden too: a slot the person filled may hold more than a name."""
        if 0 not in hidden:
            return self
        update = self._carried()
        if getattr(self, "target", None) is not None:
            update["target"] = (names or {}).get(0, REDACTED)
        return self.model_copy(update=update)

    def lost_steps(self) -> frozenset[int]:
        """The steps that `redacted` took something from that they need to run (typed text, a
        value, a target), so they cannot be carried out from this copy."""
        return frozenset({0}) if self._lost() else frozenset()

    def _lost(self) -> bool:
        return any(getattr(self, f) == REDACTED for f in type(self).model_fields if f != "words")

    def _carried(self) -> dict[str, Any]:
        """Every field that holds the person's words, blanked; subclasses add theirs."""
        return {"words": REDACTED}


class Activate(_Intent):
    """Click or press an element by its name."""

    intent: Literal["activate"] = "activate"
    target: str = Field(min_length=1)


class TypeText(_Intent):
    """Type text, into a named field or else into the focused one."""

    intent: Literal["type_text"] = "type_text"
    text: str
    target: str | None = None

    def _carried(self) -> dict[str, Any]:
        return {"words": REDACTED, "text": REDACTED}


Modifier = Literal["ctrl", "alt", "shift", "super"]


class PressKey(_Intent):
    intent: Literal["press_key"] = "press_key"
    key: str = Field(min_length=1, description="X keysym name, e.g. Return, Escape, c, F5")
    modifiers: tuple[Modifier, ...] = ()

    def chord(self) -> str:
        return "+".join([*self.modifiers, self.key])


class OpenApp(_Intent):
    intent: Literal["open_app"] = "open_app"
    app: str = Field(min_length=1)


class Focus(_Intent):
    intent: Literal["focus"] = "focus"
    target: str = Field(min_length=1)


class Scroll(_Intent):
    intent: Literal["scroll"] = "scroll"
    direction: Literal["up", "down", "left", "right"]
    target: str | None = None


class SetValue(_Intent):
    """Toggle a check box (true/false), move a slider (a number) or pick in a combo box (text)."""

    intent: Literal["set_value"] = "set_value"
    target: str = Field(min_length=1)
    value: bool | float | str

    def _carried(self) -> dict[str, Any]:
        if isinstance(self.value, bool):  # a tick carries no words
            return {"words": REDACTED}
        return {"words": REDACTED, "value": REDACTED}


class Select(_Intent):
    """Select an item (list item, page tab, menu item) by name."""

    intent: Literal["select"] = "select"
    target: str = Field(min_length=1)


class Read(_Intent):
    """Say what is on screen, what is selected, what one element says, the content (the text
    being written, else the document), or the result (what the last action changed)."""

    intent: Literal["read"] = "read"
    what: Literal["screen", "selection", "element", "content", "result"] = "screen"
    target: str | None = None


class Undo(_Intent):
    intent: Literal["undo"] = "undo"


class Cancel(_Intent):
    intent: Literal["cancel"] = "cancel"


class Confirm(_Intent):
    intent: Literal["confirm"] = "confirm"


class Deny(_Intent):
    intent: Literal["deny"] = "deny"


class ShowMarks(_Intent):
    """Show numbers beside the controls, show the pointer grid, or hide either ("none")."""

    intent: Literal["show_marks"] = "show_marks"
    kind: Literal["numbers", "grid", "none"]


class PickMark(_Intent):
    """A number said while numbers or the grid are shown: press that control, narrow the grid
    to that cell, or click there (`click`; no number: the middle of the grid as it is)."""

    intent: Literal["pick_mark"] = "pick_mark"
    number: int | None = Field(default=None, ge=1, le=99)
    click: bool = True
    # "call 7 Save", "call this Save": name the spot instead of using it (desktop/seeing/).
    teach: str | None = Field(default=None, min_length=1, max_length=40)


class NameElement(_Intent):
    """"call Doctor Patel my doctor": from now on `name` means the element called `target`, in
    its application (appliance/intents/aliases.py)."""

    intent: Literal["name_element"] = "name_element"
    target: str = Field(min_length=1)
    name: str = Field(min_length=1, max_length=40)


class ForgetName(_Intent):
    """"forget my doctor": the name a person gave an element is dropped."""

    intent: Literal["forget_name"] = "forget_name"
    name: str = Field(min_length=1, max_length=200)


class Clarify(_Intent):
    """A question back to the user when the request is ambiguous."""

    intent: Literal["clarify"] = "clarify"
    question: str = Field(min_length=1)
    options: tuple[str, ...] = ()


Step = Annotated[
    Activate | TypeText | PressKey | OpenApp | Focus | Scroll | SetValue | Select | Read,
    Field(discriminator="intent"),
]


class Sequence(_Intent):
    """Ordered steps, each validated on its own before it runs."""

    intent: Literal["sequence"] = "sequence"
    steps: tuple[Step, ...] = Field(min_length=1, max_length=8)

    def redacted(self, hidden: Collection[int], names: Mapping[int, str] | None = None) -> Self:
        if not any(0 <= i < len(self.steps) for i in hidden):
            return self
        names = names or {}
        steps = tuple(
            s.redacted((0,), {0: names[i]} if i in names else None) if i in hidden else s
            for i, s in enumerate(self.steps)
        )
        return self.model_copy(update={"words": REDACTED, "steps": steps})

    def lost_steps(self) -> frozenset[int]:
        return frozenset(i for i, s in enumerate(self.steps) if s._lost())


Intent = Annotated[
    Activate
    | TypeText
    | PressKey
    | OpenApp
    | Focus
    | Scroll
    | SetValue
    | Select
    | Read
    | Undo
    | Cancel
    | Confirm
    | Deny
    | Clarify
    | ShowMarks
    | PickMark
    | NameElement
    | ForgetName
    | Sequence,
    Field(discriminator="intent"),
]

MARK_INTENTS = frozenset({"show_marks", "pick_mark"})
"""Said by the person to the overlay; never proposed by a language model (a number means
what it meant on the screen the person looked at, which a model never saw)."""

ALIAS_INTENTS = frozenset({"name_element", "forget_name"})
PERSON_ONLY_INTENTS = MARK_INTENTS | ALIAS_INTENTS
"""Only ever from the person's own words, never proposed by a language model: what the numbers
mean, and which names stand for which element."""

CONTROL_INTENTS = frozenset({"confirm", "deny", "cancel", "clarify"})
"""Answers to the appliance rather than things to do; saying one again is no repeat."""

SCREEN_CHANGING = frozenset({"activate", "open_app", "select", "press_key"})
"""Steps after which what is on screen may differ from the snapshot they were planned on."""

UNDOABLE_KINDS = frozenset({"type_text", "set_value", "select", "focus", "open_app"})
"""Action kinds that 'undo' can take back."""

_adapter: TypeAdapter[Intent] = TypeAdapter(Intent)


def parse_intent(data: str | bytes | dict[str, Any]) -> Intent:
    """Validate untrusted planner output; raises pydantic.ValidationError."""
    if isinstance(data, str | bytes):
        return _adapter.validate_json(data)
    return _adapter.validate_python(data)


def dump_intent(intent: Intent) -> dict[str, Any]:
    data: dict[str, Any] = _adapter.dump_python(intent, mode="json")
    return data


def intent_json_schema() -> dict[str, Any]:
    schema: dict[str, Any] = _adapter.json_schema()
    return schema


if __name__ == "__main__":  # pragma: no cover - handy for prompt authors
    print(json.dumps(intent_json_schema(), indent=2))
