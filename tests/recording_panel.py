"""A stand-in for the status panel's window that keeps every state it is shown."""

from __future__ import annotations

from appliance.panel.state import PanelState


class RecordingPanel:
    def __init__(self) -> None:
        self.states: list[PanelState] = []

    def show(self, state: PanelState) -> None:
        self.states.append(state)

    def close(self) -> None:
        pass
