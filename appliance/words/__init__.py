"""Spoken words shared by the grammar and the desktop's name matching (numbers said aloud)."""
