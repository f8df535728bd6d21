"""A small Tk form with no accessibility tree (Tk has no AT-SPI bridge): what it was sent is
written to a file on Submit, so a test judges a press by the application's own word.

    python tk_form.py OUT.json [LAYOUT [WIDTHxHEIGHT]]

LAYOUT picks where things are: "tuned" (used while tuning the seeing thresholds), "moved"
(tuned's widgets with Submit elsewhere) and "heldout" (another layout, never tuned on).
"""

from __future__ import annotations

import json
import sys
import tkinter as tk
from pathlib import Path

LAYOUTS: dict[str, dict[str, tuple[int, int]]] = {
    # widget -> (row, column) of a grid
    "tuned": {"name": (0, 0), "town": (1, 0), "submit": (2, 1), "clear": (2, 0)},
    "moved": {"name": (1, 0), "town": (2, 0), "submit": (0, 0), "clear": (3, 1)},
    "heldout": {"name": (0, 1), "town": (1, 1), "submit": (3, 0), "clear": (3, 2)},
}
TITLES = {"tuned": "Clinic form", "moved": "Clinic form", "heldout": "Library card"}
BUTTONS = {
    "tuned": ("Submit", "Clear"),
    "moved": ("Submit", "Clear"),
    "heldout": ("Apply", "Reset"),
}


def main(out: Path, layout: str, size: str = "520x300") -> None:
    where = LAYOUTS[layout]
    root = tk.Tk(className="TkForm")
    root.title(TITLES[layout])
    root.geometry(f"{size}+40+40")
    frame = tk.Frame(root, padx=20, pady=20)
    frame.pack(fill="both", expand=True)
    sent = tk.StringVar(value="Nothing sent yet")
    count = [0]
    fields: dict[str, tk.Entry] = {}
    for key, label in (("name", "Name"), ("town", "Town")):
        row, col = where[key]
        tk.Label(frame, text=label, font=("DejaVu Sans", 13)).grid(
            row=row, column=col * 2, sticky="e", padx=6, pady=8)
        entry = tk.Entry(frame, font=("DejaVu Sans", 13), width=14)
        entry.grid(row=row, column=col * 2 + 1, sticky="w", pady=8)
        fields[key] = entry
    fields["name"].insert(0, "Ann")
    fields["town"].insert(0, "Leeds")

    def submit() -> None:
        count[0] += 1
        values = {k: e.get() for k, e in fields.items()} | {"submitted": count[0]}
        out.write_text(json.dumps(values))
        sent.set(f"Sent {count[0]} time{'s' if count[0] > 1 else ''}")

    def clear() -> None:
        for e in fields.values():
            e.delete(0, "end")
        sent.set("Cleared")

    go, wipe = BUTTONS[layout]
    for key, text, command in (("submit", go, submit), ("clear", wipe, clear)):
        row, col = where[key]
        tk.Button(frame, text=text, command=command, font=("DejaVu Sans", 13),
                  padx=10).grid(row=row, column=col * 2, columnspan=2, pady=8)
    tk.Label(frame, textvariable=sent, font=("DejaVu Sans", 13)).grid(
        row=5, column=0, columnspan=6, pady=12)
    root.mainloop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), *sys.argv[2:4])
