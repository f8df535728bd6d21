"""Sentence templates for the grammar planner (hassil YAML), shipped as package data."""
