"""A browser's User-Agent in a few words ("Chrome on an Android phone"), so a caregiver can
tell their sessions apart. Read simply, from well-known tokens: a wrong guess only names a
session less well, and nothing is decided by it."""

from __future__ import annotations

# In order: the first token found wins (Edge and Opera also say "Chrome", Chrome "Safari").
BROWSERS = (("Edg", "Edge"), ("OPR/", "Opera"), ("SamsungBrowser", "Samsung Internet"),
            ("Firefox/", "Firefox"), ("FxiOS", "Firefox"), ("CriOS", "Chrome"),
            ("Chrome/", "Chrome"), ("Chromium/", "Chromium"), ("Safari/", "Safari"))
DEVICES = (("iPhone", "an iPhone"), ("iPad", "an iPad"), ("CrOS", "a Chromebook"),
           ("Windows", "a Windows computer"), ("Macintosh", "a Mac"),
           ("Linux", "a Linux computer"))


def described(agent: str) -> str:
    """"Firefox on a Windows computer"; "An unknown browser" when nothing is recognised."""
    browser = next((name for token, name in BROWSERS if token in agent), "")
    if "Android" in agent:
        device = "an Android phone" if "Mobile" in agent else "an Android tablet"
    else:
        device = next((name for token, name in DEVICES if token in agent), "")
    if browser and device:
        return f"{browser} on {device}"
    if browser or device:
        return f"{browser or 'A browser'}{' on ' + device if device else ''}"
    return "An unknown browser"
