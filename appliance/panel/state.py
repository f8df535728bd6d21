"""What the status panel shows; the kiosk sends one of these whenever something changes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PANEL_APP_NAME = "appliance-status"
"""The panel's program name; the AT-SPI adapter leaves an application of this name out."""

Mode = Literal["idle", "listening", "thinking", "speaking", "confirming", "scanning"]

MODE_TEXT: dict[str, str] = {
    "idle": "Ready",
    "listening": "Listening",
    "thinking": "Thinking",
    "speaking": "Speaking",
    "confirming": "Waiting for yes or no",
    "scanning": "Scanning",
}


class Bounds(BaseModel):
    """A rectangle in screen pixels (what AT-SPI's Component.GetExtents reports)."""

    model_config = ConfigDict(frozen=True)

    x: int
    y: int
    width: int = Field(ge=0)
    height: int = Field(ge=0)


class Badge(BaseModel):
    """A number drawn beside a control ("show numbers") or in a grid cell ("show grid")."""

    model_config = ConfigDict(frozen=True)

    number: int = Field(ge=1)
    bounds: Bounds


class PanelState(BaseModel):
    """One full picture of the panel: never a diff, so a restarted panel is right at once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode = "idle"
    transcript: str = ""
    reply: str = ""
    offer: str = Field(default="", description="the scan item being offered, as spoken")
    highlight: Bounds | None = None
    journal: str = Field(
        default="", description="the journal's head (count:link) a caregiver can note as a witness"
    )
    badges: tuple[Badge, ...] = Field(
        default=(), description="numbers beside the controls, or in the grid's cells"
    )
    grid: Bounds | None = Field(default=None, description="the area the pointer grid divides")

