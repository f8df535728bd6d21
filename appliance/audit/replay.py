"""Replay: re-run recorded actions on a sim built from their recorded before-states.

A divergence means the recorded after-state is not what the action does to the recorded
before-state: the application did something unexpected, or the journal is inconsistent.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from appliance.audit.words import taught_words
from appliance.desktop.model import REDACTED, Action, DesktopError
from appliance.desktop.scene import Scene, SceneApp, SceneElement, SceneWindow
from appliance.desktop.sim import SimDesktop
from appliance.journal.alias_log import Alias, fold_aliases
from appliance.journal.application import Journal

COMPARED = ("value", "states", "activations", "running")


def _sim_for(before: dict[str, Any], kind: str) -> tuple[SimDesktop, dict[str, str]]:
    """A one-window scene holding the touched elements; returns it and old id -> new id."""
    elements = {k: v for k, v in before.items() if not k.startswith("app:")}
    children = [
        SceneElement(
            role=v["role"] or "push button",
            name=v["name"] or k,
            value=v["value"],
            states=list(v["states"]),
            activations=v["activations"],
        )
        for k, v in elements.items()
    ]
    if kind == "select":  # siblings share a parent, as they did on screen
        window = SceneWindow(
            title="Replay",
            states=["active"],
            children=[SceneElement(role="list", name="Replay", children=children)],
        )
        ids = {k: f"0.0.0.{i}" for i, k in enumerate(elements)}
    else:
        window = SceneWindow(title="Replay", states=["active"], children=children)
        ids = {k: f"0.0.{i}" for i, k in enumerate(elements)}
    scene = Scene(applications=[SceneApp(name="Replay", windows=[window])])
    for key, v in before.items():
        if key.startswith("app:"):
            name = key[4:]
            group = scene.applications if v["running"] else scene.launchable
            group.append(SceneApp(name=name, windows=[SceneWindow(title=name)]))
            ids[key] = key
    return SimDesktop(scene), ids


def _remap(action: dict[str, Any], ids: dict[str, str]) -> Action:
    data = dict(action)
    if data.get("kind") != "open_app" and data.get("target") in ids:
        data["target"] = ids[data["target"]]
    if data.get("restore"):
        data["restore"] = {ids.get(k, k): v for k, v in data["restore"].items()}
    return Action.model_validate(data)


def _differences(expected: dict[str, Any], got: dict[str, Any], name: str) -> list[str]:
    out = []
    for field in COMPARED:
        want, have = expected.get(field), got.get(field)
        if field == "value" and REDACTED in (want, have):
            continue
        if field == "states":
            want, have = sorted(want or []), sorted(have or [])
        if want != have:
            out.append(f"{name}: recorded {field} {want!r}, replay gives {have!r}")
    return out


def replay_step(action: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    kind = action["kind"]
    sim, ids = _sim_for(before, kind)
    try:
        result = sim.perform(_remap(action, ids))
    except DesktopError as e:
        return [f"replay could not {kind}: {e}"]
    keys = [action["target"]] if kind == "activate" else list(after)
    problems = []
    for key in keys:
        got = result.after.get(ids.get(key, key))
        if got is None:
            continue
        got_json = got.model_dump(mode="json")
        problems += _differences(after[key], got_json, after[key].get("name") or key)
    return problems


def replay_journal(journal: Journal, since: datetime | None = None) -> dict[str, Any]:
    """Every recorded action re-run on a sim of its before-state, and every name given to an
    element folded again from its events: `names`, one line each, as the audit tells them."""
    started: dict[str, dict[str, Any]] = {}
    turns: set[str] = set()
    actions = 0
    divergences: list[dict[str, Any]] = []
    named: list[tuple[int, Any]] = []
    names: list[str] = []
    for nid, e in journal.domain_events():
        name = type(e).__name__
        if name in ("AliasTaught", "AliasForgotten"):
            named.append((nid, e))  # folded whole: an alias taught before `since` still counts
            if not since or e.timestamp >= since:
                names.append(taught_words(name, vars(e)))
        if since and e.timestamp < since:
            continue
        turn = e.originator_id.hex
        if name == "ActionStarted":
            started[turn] = {"step": e.step, "action": e.action}
        elif name == "ActionSucceeded" and turn in started:
            step = started.pop(turn)
            actions += 1
            turns.add(turn)
            for detail in replay_step(step["action"], e.before, e.after):
                divergences.append({"turn": turn[:8], "step": step["step"], "detail": detail})
    divergences += _names_unvouched(journal, named)
    return {"turns": len(turns), "actions": actions, "divergences": divergences,
            "names": names}


def _names_unvouched(journal: Journal, named: list[tuple[int, Any]]) -> list[dict[str, Any]]:
    """Names the events give that the journal does not use: their events are not the ones its
    keyed chain vouches for (edited, or added behind its back)."""
    used = {_said(a) for a in journal.aliases()}
    return [{"turn": a.turn[:8] or "-", "step": 0,
             "detail": f"the name \u201c{a.name}\u201d for {a.element} in {a.app} is not vouched "
                       "for by the journal's chain, so it is not used"}
            for a in fold_aliases(named) if _said(a) not in used]


def _said(alias: Alias) -> tuple[str, str, str, str]:
    return alias.id, alias.app, alias.element, alias.name
