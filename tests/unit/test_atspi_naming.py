"""How the AT-SPI tree names what it reads: trimmed, GTK4 type names dropped, labels by place."""

from __future__ import annotations

import pytest

from appliance.desktop.atspi.tree import AppTree, RawNode, _name_from_neighbours, clean_name
from appliance.desktop.atspi.vocabulary import has_state, state_names, with_state

VISIBLE = with_state((0, 0), "visible")


def _node(path: str, role: str, name: str, bounds: tuple[int, int, int, int] | None,
          children: tuple[str, ...] = ()) -> RawNode:
    return RawNode(ref=(":1.1", path), parent=None, index=0, child_count=len(children),
                   interfaces=frozenset({"Component"}), name=name, role=role, states=VISIBLE,
                   children=[(":1.1", c) for c in children], bounds=bounds)


def _tree(*nodes: RawNode) -> AppTree:
    return AppTree(bus_name=":1.1", name="App", nodes={n.ref: n for n in nodes}, windows=[])


@pytest.mark.parametrize(("raw", "clean"), [
    ("Convert      ", "Convert"), ("  Two\n lines ", "Two lines"), ("GtkTextView", ""),
    ("Gtk settings", "Gtk settings"),
])
def test_names_are_trimmed_and_type_names_are_no_names(raw: str, clean: str) -> None:
    assert clean_name(raw) == clean


def test_label_on_the_left_beats_the_one_before_in_document_order() -> None:
    # The dialog lists fields first, labels after (yad does): siblings would name them wrongly.
    name_field = _node("/n", "text", "", (100, 10, 150, 30))
    phone_field = _node("/p", "text", "", (100, 50, 150, 30))
    tree = _tree(
        _node("/panel", "panel", "", (0, 0, 300, 100), ("/n", "/p", "/ln", "/lp")),
        name_field, phone_field,
        _node("/ln", "label", "Name", (10, 10, 80, 30)),
        _node("/lp", "label", "Phone", (10, 50, 80, 30)),
    )
    _name_from_neighbours(tree)
    assert (name_field.name, phone_field.name) == ("Name", "Phone")


def test_a_menus_own_text_names_no_field_below_it() -> None:
    # GTK4's print editor: the File menu's label sits just above the unnamed text view.
    label = _node("/ml", "label", "File", (4, 0, 30, 20))
    label.parent = (":1.1", "/m")
    view = _node("/v", "text", "", (0, 24, 600, 400))
    tree = _tree(
        _node("/w", "panel", "", (0, 0, 600, 424), ("/m", "/v")),
        _node("/m", "menu item", "File", (0, 0, 40, 20), ("/ml",)), label, view,
    )
    _name_from_neighbours(tree)
    assert view.name == ""


def test_label_just_right_beats_a_farther_one_above() -> None:
    email = _node("/e", "text", "Email", (12, 288, 180, 22))
    phone = _node("/p", "text", "", (12, 328, 179, 22))
    tree = _tree(
        _node("/form", "form", "", (0, 0, 900, 600), ("/le", "/e", "/p", "/lp")),
        _node("/le", "static", "Email", (14, 262, 86, 24)), email, phone,
        _node("/lp", "static", "Phone", (196, 328, 50, 20)),
    )
    _name_from_neighbours(tree)
    assert phone.name == "Phone"


def test_combo_named_by_its_choice_takes_its_label() -> None:
    combo = _node("/c", "combo box", "Checkup", (100, 10, 150, 30), ("/menu",))
    combo.value = "Checkup"
    tree = _tree(
        _node("/panel", "panel", "", (0, 0, 300, 100), ("/l", "/c")),
        _node("/l", "label", "Visit", (10, 10, 80, 30)), combo,
        _node("/menu", "menu", "", None, ("/i",)), _node("/i", "menu item", "Checkup", None),
    )
    _name_from_neighbours(tree)
    assert combo.name == "Visit" and combo.inferred_name


def test_a_link_and_its_own_text_are_one_thing() -> None:
    text = _node("/t", "static", "Help with this form", (12, 473, 153, 20))
    tree = _tree(_node("/a", "link", "Help with this form", (12, 473, 153, 20), ("/t",)), text)
    _name_from_neighbours(tree)
    assert text.name == ""


def test_visible_counts_as_showing_where_a_toolkit_never_says_showing() -> None:
    tree = _tree()
    assert tree.shown(VISIBLE) == VISIBLE
    tree.visible_means_showing = True
    assert has_state(tree.shown(VISIBLE), "showing")
    assert "invisible" not in state_names(tree.shown(VISIBLE))


def test_a_gtk4_name_that_is_its_own_label_twice_is_read_once() -> None:
    """GNOME Calculator on GTK 4.8: "= =", labelled by its own child label. A name that only
    looks doubled ("Bora Bora") but is labelled by another element stays as it is."""
    from appliance.desktop.atspi.tree import LABELLED_BY, apply_reply, said_once

    key = _node("/eq", "push button", "= =", None)
    key.inner = ((":1.1", "/eq/label"),)
    island = _node("/bb", "push button", "Bora Bora", None)
    tree = _tree(key, island)
    apply_reply(tree, key, "repeated", ([(LABELLED_BY, [(":1.1", "/eq/label")])],))
    apply_reply(tree, island, "repeated", ([(LABELLED_BY, [(":1.1", "/elsewhere")])],))
    assert (key.name, key.label_repeated) == ("=", True)
    assert (island.name, island.label_repeated) == ("Bora Bora", False)
    assert said_once("7 7") == "7" and said_once("Send") is None and said_once("a b a") is None


def test_an_icon_button_is_named_by_its_tooltip_without_the_key_hint() -> None:
    from appliance.desktop.atspi.tree import apply_reply

    icon = _node("/clear", "push button", "", None)
    apply_reply(_tree(icon), icon, "description", ("Clear Display [Escape]",))
    assert icon.description == "Clear Display"
