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

# Text editors judged by the file they save: Qt 5 (FeatherPad) and GTK4 (print editor).
EDITOR_TUNED = (
    Case("dictate then save", ("type shopping list", "press control s"),
         {"contains": "shopping list"}),
)
EDITOR_HELD_OUT = (
    Case("dictate with a verb then save", ("dictate call the dentist", "press control s"),
         {"contains": "call the dentist"}),
)
