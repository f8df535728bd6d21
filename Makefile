# The two commands: `make demo` and `make test`. Each sets everything up first (scripts/setup.sh).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
VENV ?= .venv
# Extras installed with the package; setup.sh reinstalls when this or pyproject.toml changes.
EXTRAS ?= dev,desktop,voice,llm
export EXTRAS VENV

.PHONY: setup demo test lint clean

setup:
	bash scripts/setup.sh

demo: setup
	$(VENV)/bin/appliance demo

test: setup lint
	$(VENV)/bin/pytest -q

lint: setup
	$(VENV)/bin/ruff check appliance tests
	$(VENV)/bin/mypy

clean:
	-bash scripts/postgres.sh stop
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist *.egg-info
	find appliance tests -name __pycache__ -type d -prune -exec rm -rf {} +
