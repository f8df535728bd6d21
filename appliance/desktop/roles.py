"""Role families (libatspi's role names): which elements take which kind of action.

The validator decides with these, the desktops act with them and the scan menu offers by them,
so what can be offered, allowed and done is one vocabulary.
"""

from __future__ import annotations

TEXT_ROLES = frozenset({"text", "password text", "entry", "terminal", "document text", "paragraph"})
"""Take typed text."""

TOGGLE_ROLES = frozenset(
    {"check box", "toggle button", "radio button", "check menu item", "switch"}
)
"""On or off: set_value with true or false."""

NUMBER_ROLES = frozenset({"slider", "spin button", "scroll bar"})
"""A number between a minimum and a maximum."""

CHOICE_ROLES = frozenset({"combo box"})
"""One of the items inside them."""

SELECTABLE_ROLES = frozenset({"list item", "page tab", "menu item", "table cell", "tree item"})
"""Items that are selected within their container (a list, a tab list, a menu)."""

ITEM_ROLES = SELECTABLE_ROLES | {"radio button", "combo box item"}
"""What `select` may target: selectable items, and radio buttons and combo box items."""

PRESSABLE_ROLES = frozenset(
    {"push button", "toggle button", "radio button", "button", "link", "menu item"}
)
"""Pressed by name: what `activate` targets."""
