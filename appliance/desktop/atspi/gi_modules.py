"""Debian's PyGObject modules (pyatspi's stack), or a clear error when they are not installed."""

from __future__ import annotations

from typing import Any

from appliance.desktop.model import DesktopError

try:
    import gi  # type: ignore[import-untyped,import-not-found,unused-ignore]

    gi.require_version("Atspi", "2.0")
    from gi.repository import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        Atspi as _Atspi,
    )
    from gi.repository import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        Gio as _Gio,
    )
    from gi.repository import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        GLib as _GLib,
    )
except (ImportError, ValueError) as exc:  # pragma: no cover - depends on the machine
    raise DesktopError(
        "The accessibility libraries are not installed; run scripts/setup-atspi.sh."
    ) from exc

Atspi: Any = _Atspi
Gio: Any = _Gio
GLib: Any = _GLib
