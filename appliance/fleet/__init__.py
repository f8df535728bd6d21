"""Many kiosks, one central journal: the kiosk's uplink and the central server (docs/fleet.md)."""
