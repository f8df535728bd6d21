"""The AT-SPI desktop adapter (`--desktop atspi`): `open_desktop()` connects to the session."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from appliance.desktop.model import DesktopError

if TYPE_CHECKING:
    from appliance.desktop.atspi.adapter import AtspiDesktop

DEFAULT_APPS = Path("/etc/appliance/apps")
"""Where a caregiver puts the .desktop entries the appliance may open."""


def allowed_apps(apps: Sequence[Path] | None = None) -> list[Path]:
    if apps is not None:
        return list(apps)
    from_env = os.environ.get("APPLIANCE_APPS")
    if from_env:
        return [Path(p) for p in from_env.split(os.pathsep) if p]
    return [DEFAULT_APPS] if DEFAULT_APPS.is_dir() else []


def open_desktop(
    apps: Sequence[Path] | None = None, *, timeout: float = 1.0, open_timeout: float = 15.0,
    max_nodes: int = 20_000, max_depth: int = 60,
) -> AtspiDesktop:
    """Connect to the session's accessibility bus; `timeout` bounds every call to an app."""
    from appliance.desktop.atspi.adapter import AtspiDesktop
    from appliance.desktop.atspi.bus import A11yBus, BusError
    from appliance.desktop.atspi.launcher import Launcher

    try:
        bus = A11yBus(timeout=timeout)
    except BusError:
        raise DesktopError("I can't reach the screen's accessibility service.") from None
    return AtspiDesktop(bus, Launcher(allowed_apps(apps)), open_timeout=open_timeout,
                        max_nodes=max_nodes, max_depth=max_depth)
