"""Intent accuracy, wake false rejects and end of speech -> action, per voice and condition."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from appliance_lab.bench.spoken.corpus import CorpusItem, audio
from appliance_lab.bench.spoken.outcome import Turn, planned
from appliance_lab.bench.spoken.runs import Progress, owner, run_clips
from appliance_lab.bench.stats import percentiles

if TYPE_CHECKING:
    from appliance.voice.hearing.vad import VadSettings

RUN_SIZE = 12
"""Items per pipeline run: a progress line each, and a failure loses only these."""
MISSES_KEPT = 25
"""Misses listed in the report (a sample: the count is reported whole)."""


def by_clip(result: Any) -> tuple[set[int], dict[int, Turn]]:
    """Of one run of clips: which clips woke the gate, and each clip's first turn."""
    woke: set[int] = set()
    for seg in result.heard:
        i = owner(result.spans, seg["timings"]["audio_start_s"])
        if i is not None and seg.get("via") == "wake":
            woke.add(i)
    first: dict[int, Turn] = {}
    for heard in result.turns:
        i = owner(result.spans, heard.utterance.timings["audio_start_s"])
        if i is not None and i not in first:
            first[i] = heard
    return woke, first


def _rate(hits: int, n: int) -> float | None:
    return round(hits / n, 3) if n else None


def bench_items(items: list[CorpusItem], recognizer: str, progress: Progress,
                vad: VadSettings | None = None,
                misses_kept: int | None = MISSES_KEPT) -> dict[str, Any]:
    """Each item, wake phrase and command, through the real pipeline paced in real time, on a
    fresh copy of its scene; its action compared with the one planned from its written text.
    `vad`: the VAD's settings, when not the default; `misses_kept`: None lists every miss."""
    by_scene: dict[str, list[CorpusItem]] = defaultdict(list)
    for item in items:
        by_scene[item.scene].append(item)
    rows: list[dict[str, Any]] = []
    latency: dict[str, list[float]] = defaultdict(list)
    done = 0
    for scene, scene_items in sorted(by_scene.items()):
        for k in range(0, len(scene_items), RUN_SIZE):
            chunk = scene_items[k : k + RUN_SIZE]
            result = run_clips(scene, [audio(i) for i in chunk], recognizer, pace=1.0, vad=vad)
            woke, first = by_clip(result)
            for i, item in enumerate(chunk):
                turn = first.get(i)
                expected = planned(item.scene, item.sentence)
                ok = turn is not None and turn.outcome == expected
                # Asked first ("Did you mean ...?") about the very action: right after a yes.
                asked = (turn is not None and not ok and expected["decision"] == "executed"
                         and turn.outcome["decision"] == "needs_confirmation"
                         and turn.outcome["intent"] == expected["intent"])
                rows.append({"item": item, "woke": i in woke, "ok": ok, "asked": asked,
                             "acts": expected["intent"] is not None,
                             "heard": turn.utterance.text if turn else None,
                             "got": turn.outcome if turn else None, "expected": expected})
                if turn is not None and "action_done" in turn.timings:
                    t = turn.timings
                    ms = t["action_done"] - (t["speech_end"] - t["vad_ms"])
                    latency["all"].append(ms)
                    latency[f"engine:{turn.utterance.engine}"].append(ms)
            done += len(chunk)
            ok_so_far = sum(r["ok"] for r in rows if r["acts"])
            progress(f"{recognizer}: {done}/{len(items)} items, {ok_so_far} acted right so far")
    return _summary(rows, latency, misses_kept)


def _group(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        item: CorpusItem = row["item"]
        name = item.voice.label if key == "voice" else item.condition.name
        groups[name].append(row)
    return {name: {"n": len(g), **_accuracy(g),
                   "wake_false_rejects": _rate(sum(not r["woke"] for r in g), len(g))}
            for name, g in sorted(groups.items())}


def _accuracy(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Over items whose text plans an action; items whose text plans none (the grammar rejects
    it on that screen) agree with almost any mishearing, so they are counted apart."""
    acting = [r for r in rows if r["acts"]]
    rest = [r for r in rows if not r["acts"]]
    return {"intent_accuracy": _rate(sum(r["ok"] for r in acting), len(acting)),
            "right_after_a_yes": _rate(sum(r["asked"] for r in acting), len(acting)),
            "acting_items": len(acting),
            "no_action_items_agreeing": _rate(sum(r["ok"] for r in rest), len(rest))}


def _summary(rows: list[dict[str, Any]], latency: dict[str, list[float]],
             misses_kept: int | None) -> dict[str, Any]:
    per_voice_condition: dict[str, dict[str, float | None]] = defaultdict(dict)
    cells: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for row in rows:
        item: CorpusItem = row["item"]
        if row["acts"]:
            cells[(item.voice.label, item.condition.name)].append(row["ok"])
    for (voice, cond), oks in sorted(cells.items()):
        per_voice_condition[voice][cond] = _rate(sum(oks), len(oks))
    misses = [{"id": r["item"].item_id, "heard": r["heard"], "got": r["got"],
               "expected": r["expected"]} for r in rows if r["acts"] and not r["ok"]]
    n = len(rows)
    return {
        "items": n,
        **_accuracy(rows),
        "wake_false_rejects": _rate(sum(not r["woke"] for r in rows), n),
        "by_condition": _group(rows, "condition"),
        "by_voice": _group(rows, "voice"),
        "intent_accuracy_by_voice_and_condition": dict(per_voice_condition),
        "end_of_speech_to_action_done_ms": {k: percentiles(v) for k, v in sorted(latency.items())},
        "mean_end_of_speech_to_action_done_ms": (
            round(statistics.fmean(latency["all"]), 1) if latency["all"] else None),
        "misses_sample": misses[:misses_kept],
        "misses": len(misses),
    }
