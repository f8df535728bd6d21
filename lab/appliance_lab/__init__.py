"""The appliance's lab: benchmarks (`bench`) and tuning (`tuning`), on the product's public API.

Never on the device: scripts/setup.sh installs it, editable, with the `dev` extra only.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The checkout the lab runs from (images/, tests/apps/, .cache/)."""
