"""Spoken cases against real applications: the tuned set and the held-out set.

The held-out cases were written before any tuning and are only run, never tuned on; the
tuned cases are what the adapter was worked against. Each case: commands, and the change the
application itself must report (field -> value).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    name: str
    commands: tuple[str, ...]
    wanted: dict[str, object] = field(default_factory=dict)


# Chromium on tests/apps/clinic_form.html; fields are the page's element ids.
BROWSER_TUNED = (
    Case("label before (label element)", ("type Ada into first name",), {"first": "Ada"}),
    Case("label in another column", ("type Lovelace into last name",), {"last": "Lovelace"}),
    Case("label after the field", ("type 5551234 into phone",), {"phone": "5551234"}),
    Case("label above the field", ("type 1815 into date of birth",), {"dob": "1815"}),
    Case("choose an option of a select", ("choose Shelbyville for city",),
         {"city": "Shelbyville"}),
    Case("check a check box", ("check send me the newsletter",), {"news": True}),
    Case("follow a link", ("click help with this form",), {"helped": "yes"}),
    Case("page search field", ("type flu shots into search the site",), {"q": "flu shots"}),
)
BROWSER_HELD_OUT = (
    Case("email in the table column", ("type ada@example.org into email",),
         {"email": "ada@example.org"}),
    Case("tick the terms box", ("tick i accept the terms",), {"terms": True}),
    Case("select by its label after it", ("choose Evening for preferred time",),
         {"time": "Evening"}),
    Case("press the form's button", ("press sign up",), {"sent": "yes"}),
    Case("city by a different option", ("use Capital City for city",),
         {"city": "Capital City"}),
)

# The second held-out set, written on 2026-11-24 after the first had been run once (and so
# could no longer be called unseen). Phrasings a person might use, not the tuned set's.
BROWSER_HELD_OUT_2 = (
    Case("put into", ("put Ada in the first name field",), {"first": "Ada"}),
    Case("enter into a table column", ("enter Babbage in last name",), {"last": "Babbage"}),
    Case("fill in with", ("fill in email with ada@example.org",), {"email": "ada@example.org"}),
    Case("set a select to", ("set city to Capital City",), {"city": "Capital City"}),
    Case("an option said alone", ("select Afternoon",), {"time": "Afternoon"}),
    Case("check by the label's words", ("check i accept the terms",), {"terms": True}),
    Case("write in", ("write 1815 in date of birth",), {"dob": "1815"}),
    Case("click the button", ("click sign up",), {"sent": "yes"}),
    Case("open a link", ("open help with this form",), {"helped": "yes"}),
    Case("two steps", ("type Ada into first name and then type 5550101 into phone",),
         {"first": "Ada", "phone": "5550101"}),
)

# The third held-out set, written on 2026-11-24 after the second had been run and its misses
# read (combo boxes' options inside their menu, "fill in X with Y", "write ...", "save").
BROWSER_HELD_OUT_3 = (
    Case("enter into a box", ("enter Grace in the first name box",), {"first": "Grace"}),
    Case("fill out with", ("fill out last name with Hopper",), {"last": "Hopper"}),
    Case("choose an option for", ("choose Afternoon for preferred time",), {"time": "Afternoon"}),
    Case("pick as the", ("pick Shelbyville as the city",), {"city": "Shelbyville"}),
    Case("digits with a space", ("type 555 0199 into phone",), {"phone": "555 0199"}),
    Case("tick the newsletter", ("tick send me the newsletter",), {"news": True}),
    Case("press the named button", ("press the sign up button",), {"sent": "yes"}),
    Case("the search box", ("type vaccines into the search box",), {"q": "vaccines"}),
)

# yad's form dialog (GTK3): fields are what it prints after OK.
YAD_TUNED = (
    Case("type a name then OK", ("type Grace into name", "press ok"), {"Name": "Grace"}),
    Case("choose a visit", ("choose Dentist for visit", "press ok"), {"Visit": "Dentist"}),
)
YAD_HELD_OUT = (
    Case("phone and reminder", ("type 5550000 into phone", "turn reminder on", "click ok"),
         {"Phone": "5550000", "Reminder": "TRUE"}),
    Case("notes", ("type bring glasses into notes", "press ok"), {"Notes": "bring glasses"}),
)

YAD_HELD_OUT_2 = (
    Case("enter then OK in one breath", ("enter Grace in name and then press ok",),
         {"Name": "Grace"}),
    Case("an option of two words", ("choose Eye test for visit", "click ok"),
         {"Visit": "Eye test"}),
    Case("tick a box", ("tick reminder", "press ok"), {"Reminder": "TRUE"}),
)

YAD_HELD_OUT_3 = (
    Case("a name and an option", ("type Ada into name", "choose Dentist for visit", "press ok"),
         {"Name": "Ada", "Visit": "Dentist"}),
    Case("put into notes", ("put call back in notes", "click ok"), {"Notes": "call back"}),
)

# Text editors judged by the file they save: Qt 5 (FeatherPad) and GTK4 (print editor).
EDITOR_TUNED = (
    Case("dictate then save", ("type shopping list", "press control s"),
         {"contains": "shopping list"}),
)
EDITOR_HELD_OUT = (
    Case("dictate with a verb then save", ("dictate call the dentist", "press control s"),
         {"contains": "call the dentist"}),
)
EDITOR_HELD_OUT_2 = (
    Case("write then save by name", ("write dear grandma", "save"), {"contains": "dear grandma"}),
)
EDITOR_HELD_OUT_3 = (
    Case("type then save it", ("type meeting at noon", "save it"), {"contains": "meeting at noon"}),
)
