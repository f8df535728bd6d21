"""Role families (libatspi's role names): which elements take which kind of action.

The validator decides with these, the desktops act with them and the scan menu offers by them,
so what can be offered, allowed and done is one vocabulary.
"""

from __future__ import annotations

TEXT_ROLES = frozenset({"text", "password text", "entry", "terminal", "document text", "paragraph"})
"""Take typed text."""

WRITTEN_ROLES = frozenset({"text", "entry"})
"""Fields a person writes a message or a form's answers in: what a press of Send sends."""

SECRET_ROLES = frozenset({"password text"})
"""Hold a secret: never read, journaled or shown."""

READABLE_TEXT_ROLES = TEXT_ROLES - SECRET_ROLES
"""Text whose content the desktop reads as the element's value."""

TOGGLE_ROLES = frozenset(
    {"check box", "toggle button", "radio button", "check menu item", "switch"}
)
"""On or off: set_value with true or false."""

NUMBER_ROLES = frozenset({"slider", "spin button", "scroll bar"})
"""A number between a minimum and a maximum."""

SCROLL_PANE = "scroll pane"
"""What "scroll" moves: the pane holding the element named, else the window's first."""

SCROLL_BAR = "scroll bar"
"""What a scroll pane (or, outside one, the window) is scrolled by."""

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

BUTTON_ROLES = frozenset({"push button", "toggle button", "radio button", "button"})
"""What a person calls a button (a link or a menu item is pressable but not 'a button')."""

TEXT_FIELD_ROLES = frozenset(
    {"text", "password text", "entry", "terminal", "spin button", "document text"}
)
"""What a person calls a text field by voice: typed into, so a spin button yes, a paragraph no."""

DICTATION_ROLES = frozenset({"text", "password text", "entry"})
"""Where dictation goes when no field is named: the one of these with the focus."""

SPOKEN_NUMBER_ROLES = NUMBER_ROLES | {"dial"}
"""What 'set X to 5' may target by voice: the number roles, and dials."""

SPOKEN_CHOICE_ROLES = frozenset({"combo box", "list box", "list"})
"""What 'set X to Y' may pick Y inside by voice: combo boxes, and lists."""

LIST_ROLES = frozenset({"list", "list item", "table", "tree", "tree item"})
"""What a list's entry adds to: "add milk to the list" types into a field beside one."""

SCAN_TOGGLE_ROLES = TOGGLE_ROLES - {"radio button"}
"""Offered on/off in the scan menu; a radio button is picked, not toggled."""

SCAN_ITEM_ROLES = ITEM_ROLES - {"menu item"}
"""Offered 'select' in the scan menu; a menu item is pressed instead."""

SCAN_TEXT_ROLES = TEXT_ROLES - {"paragraph"}
"""Offered typing in the scan menu; a paragraph is read, not typed into."""

SEEN_ROLES = frozenset({"seen text"})
"""Text read from the screen where the application tells nothing (desktop/seeing/): pressed by a
click at its middle."""

SCAN_ROLES = (
    PRESSABLE_ROLES | SCAN_TOGGLE_ROLES | SCAN_ITEM_ROLES | NUMBER_ROLES | SCAN_TEXT_ROLES
    | CHOICE_ROLES | SEEN_ROLES
)
"""What a person can act on by switch or by number: the controls scanning and numbers offer."""

DOCUMENT_ROLES = frozenset(
    {"document web", "document text", "document frame", "document email", "article"}
)
"""Whose text, read in order, is what a page or a letter says."""

PROSE_ROLES = frozenset(
    {"paragraph", "heading", "static", "label", "text", "document text", "caption",
     "block quote", "list item", "section", "entry", "link"}
)
"""Elements whose name or value is text to read out, inside a document or a display."""

NAMED_BY_CONTENT_ROLES = frozenset(
    {"list item", "page tab", "table cell", "menu item", "push button", "toggle button",
     "tree item", "link", "check box", "radio button"}
)
"""Unnamed ones take their name from the text inside them."""

LABEL_TEXT_ROLES = frozenset({"label", "static", "text", "section", "table cell", "paragraph"})
"""Whose name is text shown on screen: what may label an unnamed control beside it."""

LABELLED_ROLES = frozenset(
    {"text", "password text", "entry", "combo box", "slider", "spin button", "list", "table",
     "tree", "scroll pane", "check box", "radio button", "push button", "toggle button"}
)
"""Unnamed ones take their name from a label beside them."""

REPAIR_PRESSABLE_ROLES = frozenset(
    {"push button", "link", "menu button", "button", "toggle button"}
)
"""What a language model's 'select' of an element is turned into 'activate' on."""

WINDOW_ROLES = frozenset({"frame", "dialog", "window", "alert", "file chooser"})
"""A top-level window: its extents are where the window is on screen."""

NAMED_LEAF_ROLES = frozenset({"push button", "link", "toggle button", "check box", "radio button"})
"""Controls whose inside, once they have a name, is only that name again (a web page's link or
button holds its text as a child): not walked, which halves a cold read of a web page."""
