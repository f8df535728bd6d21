"""Reading what the screen says: a page's text in order, the text being written, and the text an
action changed (a calculator's display), over snapshots shaped like Chromium's and GTK's trees."""

from __future__ import annotations

import pytest

from appliance.desktop.content import changed_text, document_text, writing_text
from appliance.desktop.model import Node, Snapshot
from appliance.intents.grammar import GrammarPlanner
from appliance.intents.model import Read
from appliance.policy.validator import validate
from appliance.replies import answer_text
from appliance.settings import Settings


def _tree(*nodes: Node) -> Snapshot:
    return Snapshot(nodes=nodes, active_app="A", active_window="W")


def _n(id: str, role: str, name: str = "", parent: str | None = "w", kids: tuple[str, ...] = (),
       **kw: object) -> Node:
    return Node(id=id, role=role, name=name, app="A", window="W", parent_id=parent,
                child_ids=kids, **kw)  # type: ignore[arg-type]


PAGE = _tree(
    _n("w", "frame", "W", parent=None, kids=("tb", "doc")),
    _n("tb", "entry", "Address and search bar", value="file:///letter.html"),
    _n("doc", "document web", "Letter", kids=("h", "p1", "p2", "btn", "pw")),
    _n("h", "heading", "Dear Ann", parent="doc"),
    _n("p1", "paragraph", "", parent="doc", kids=("s1",)),
    _n("s1", "static", "The garden is in bloom", parent="p1"),
    _n("p2", "paragraph", "", parent="doc", kids=("s2", "s3")),
    _n("s2", "static", "Come on Sunday!", parent="p2"),
    _n("s3", "static", "Hidden", parent="p2", states=frozenset({"invisible"})),
    _n("btn", "push button", "Reply", parent="doc"),
    _n("pw", "password text", "PIN", parent="doc", value="8c1f0d3b99e1"),
)


def test_a_page_is_read_in_order_without_the_browser_or_its_controls() -> None:
    assert document_text(PAGE) == "Dear Ann. The garden is in bloom. Come on Sunday!"


def test_no_document_no_reading() -> None:
    assert document_text(_tree(_n("w", "frame", "W", parent=None))) is None


def test_the_focused_field_is_read_and_a_secret_never() -> None:
    field = _n("m", "text", "Message", value="see you soon", states=frozenset({"focused"}))
    assert writing_text(_tree(_n("w", "frame", "W", parent=None, kids=("m",)), field)) == (
        "see you soon")
    pin = _n("m", "password text", "PIN", value="8c1f0d3b99e1", states=frozenset({"focused"}))
    said = writing_text(_tree(_n("w", "frame", "W", parent=None, kids=("m",)), pin))
    assert said == "PIN is filled in." and "8c1f" not in said
    long = _n("m", "text", "Message", value="word " * 200 + "the end",
              states=frozenset({"focused"}))
    tail = writing_text(_tree(_n("w", "frame", "W", parent=None, kids=("m",)), long))
    assert tail is not None and tail.endswith("the end") and len(tail) <= 600


def test_what_an_action_changed_is_the_result() -> None:
    def calc(display: str, status: str) -> Snapshot:
        return _tree(
            _n("w", "frame", "W", parent=None, kids=("d", "s", "b")),
            _n("d", "label", display),
            _n("s", "label", status),
            _n("b", "push button", "="),
        )
    assert changed_text(calc("12+30", "Ready"), calc("42", "Ready")) == "42."
    assert changed_text(calc("42", "Ready"), calc("42", "Ready")) is None


@pytest.mark.parametrize(("said", "what"), [
    ("what does it say", "content"), ("read it to me", "content"), ("read the page", "content"),
    ("read me the letter", "content"), ("what did i write", "content"),
    ("what is the result", "result"), ("what's the answer", "result"),
    ("what does the display say", "result"), ("what is selected", "selection"),
])
def test_reading_phrasings_ask_for_the_content_or_the_result(said: str, what: str) -> None:
    plan = GrammarPlanner().plan(said, PAGE)
    assert isinstance(plan.intent, Read) and plan.intent.what == what, plan.intent


def test_the_answer_reads_the_page_and_never_a_secret() -> None:
    verdict = validate(Read(what="content", words="read the page"), PAGE, Settings())
    said = answer_text(verdict, PAGE)
    assert said == "Dear Ann. The garden is in bloom. Come on Sunday!" and "8c1f" not in said
