"""Dictation as people say it, with no language model: "write ...", "reply ...", "add ... to
the list", "search for ...", through `appliance say` on sim scenes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.cli_runner import Kiosk
from tests.scenes import messages


def _window(app: str, *children: dict[str, Any]) -> dict[str, Any]:
    return {"applications": [{"name": app, "windows": [{"title": app,
                                                        "children": list(children)}]}]}


SHOPPING = _window(
    "Shopping",
    {"role": "list", "name": "Shopping list", "children": [
        {"role": "list item", "name": "Bread"}, {"role": "list item", "name": "Eggs"}]},
    {"role": "text", "name": "New item", "value": ""},
    {"role": "push button", "name": "Add"},
)
COMPOSE = _window(
    "Mail",
    {"role": "text", "name": "To", "value": ""},
    {"role": "text", "name": "Subject", "value": ""},
    {"role": "text", "name": "Message", "value": ""},
    {"role": "push button", "name": "Send"},
)
LIBRARY = _window(
    "Library",
    {"role": "link", "name": "Opening hours"},
    {"role": "entry", "name": "Title, author or subject", "value": ""},
    {"role": "push button", "name": "Search"},
)


def test_write_types_into_the_only_message_field(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    out = kiosk.say("write thank you for the flowers")
    assert out["decision"] == "executed", out
    assert kiosk.element("Message")["value"] == "thank you for the flowers"
    assert kiosk.element("Send").get("activations", 0) == 0  # written, not sent


def test_reply_with_the_words_types_them_and_asks_before_sending(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, messages())
    out = kiosk.say("reply see you soon")
    assert out["decision"] == "needs_confirmation", out
    assert "see you soon" in out["spoken"]
    assert kiosk.say("yes")["decision"] == "executed"
    assert kiosk.element("Message")["value"] == "see you soon"
    assert kiosk.element("Send")["activations"] == 1


def test_add_to_the_list_types_into_its_entry_and_presses_add(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, SHOPPING)
    out = kiosk.say("add milk to the list")
    assert out["decision"] == "executed", out
    assert kiosk.element("New item")["value"] == "milk"
    assert kiosk.element("Add")["activations"] == 1


def test_a_list_is_never_added_to_through_a_message_field(tmp_path: Path) -> None:
    """Messages' only field sends: "add milk to the list" is not words for grandma."""
    kiosk = Kiosk(tmp_path, messages())
    assert kiosk.say("add milk to the list")["decision"] == "rejected"
    assert kiosk.element("Message")["value"] == ""


def test_several_fields_and_none_focused_asks_which(tmp_path: Path) -> None:
    kiosk = Kiosk(tmp_path, COMPOSE)
    out = kiosk.say("write see you on Sunday")
    assert out["decision"] == "clarify", out
    assert out["spoken"] == "Which field should I write in: To or Subject or Message?"
    assert kiosk.say("the message")["decision"] == "executed"
    assert kiosk.element("Message")["value"] == "see you on Sunday"
    assert kiosk.element("Subject")["value"] == ""


def test_a_focused_field_is_written_in_without_asking(tmp_path: Path) -> None:
    scene = copy.deepcopy(COMPOSE)
    fields = scene["applications"][0]["windows"][0]["children"]
    scene["applications"][0]["windows"][0]["children"] = [
        f | {"states": ["focused"]} if f["name"] == "Subject" else f for f in fields]
    kiosk = Kiosk(tmp_path, scene)
    assert kiosk.say("write lunch on Sunday")["decision"] == "executed"
    assert kiosk.element("Subject")["value"] == "lunch on Sunday"


def test_search_fills_the_only_field_and_presses_search(tmp_path: Path) -> None:
    """The field's name does not say search, but it is the page's only one."""
    kiosk = Kiosk(tmp_path, LIBRARY)
    assert kiosk.say("search for jane austen")["decision"] == "executed"
    assert kiosk.element("Title, author or subject")["value"] == "jane austen"
    assert kiosk.element("Search")["activations"] == 1
