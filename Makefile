# The two commands: `make demo` and `make test`. Each sets everything up first (scripts/setup.sh).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
VENV ?= .venv
# The package's extras each command needs; `make test EXTRAS=dev,voice` overrides both. setup.sh
# only adds: extras installed for one command stay for the other, so switching never reinstalls.
DEMO_EXTRAS := voice
TEST_EXTRAS := dev,desktop,voice,llm,web
export VENV

.PHONY: setup demo test check lint clean image image-pi

setup:
	EXTRAS='$(or $(EXTRAS),$(TEST_EXTRAS))' bash scripts/setup.sh

demo:
	EXTRAS='$(or $(EXTRAS),$(DEMO_EXTRAS))' bash scripts/setup.sh
	$(VENV)/bin/appliance demo

# tests/vm (QEMU guests) runs beside the rest: scripts/test.sh.
test: setup lint
	bash scripts/test.sh

# The quick loop: lint, then tests/unit (no Xvfb, no QEMU, no servers, no models).
check: lint
	$(VENV)/bin/pytest -q tests/unit

# Device images (docs/device.md): an amd64 image for a PC or QEMU, and the Raspberry Pi's.
image: setup
	bash images/build.sh amd64 build/image-amd64

image-pi: setup
	bash images/setup-pi.sh
	bash images/build.sh pi build/image-pi

# The lab (lab/: benchmarks and tuning) is linted and type-checked with the product; mypy's
# paths are in pyproject.toml.
lint: setup
	$(VENV)/bin/ruff check appliance lab tests scripts
	$(VENV)/bin/mypy

clean:
	-bash scripts/postgres.sh stop
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist *.egg-info \
		lab/*.egg-info
	find appliance lab tests -name __pycache__ -type d -prune -exec rm -rf {} +
