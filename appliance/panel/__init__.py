"""The status panel: a small always-on-top GTK window a caregiver can read across the room."""
