"""`appliance bench voice-enrolled` (issue 44): the spoken commands of each voice before
enrolment (today's recognizer, no profile) and after (the same pipeline with the voice's
profile), per condition, with 95 % intervals; wake false rejects; end of speech -> action; and
false accepts over non-wake speech with each voice's profile in use.

Each arm runs in its own process (its peak RSS); the parent makes the audio and the profiles
first, so the children only hear. Alone:
`python -m appliance_lab.bench.spoken.personal_bench --arm after --per 4 --work DIR`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from appliance_lab import REPO
from appliance_lab.bench.spoken.accuracy import by_clip
from appliance_lab.bench.spoken.corpus import Part, load_part
from appliance_lab.bench.spoken.outcome import Turn, planned
from appliance_lab.bench.spoken.personal import (
    COMMAND_TAKES,
    CONDITIONS,
    ENROL,
    TEST,
    WAKE_TAKES,
    ConditionName,
    SpokenItem,
    Style,
    enrolled_phrases,
    item_audio,
    make_profile,
    room_kind,
    sample_items,
)
from appliance_lab.bench.spoken.personal_fa import enrolled_name, fa_summary
from appliance_lab.bench.spoken.runs import Progress, run_clips
from appliance_lab.bench.stats import peak_rss_mb, percentiles, share

Arm = Literal["before", "after"]
ARMS: tuple[Arm, ...] = ("before", "after")
RUN_SIZE = 10
"""Items per pipeline run: a progress line each, and a failure loses only these."""
ASKING = frozenset({"needs_confirmation", "clarify"})
ACTED = frozenset({"executed", "undone", "cancelled", "failed"})
"""Decisions that did, or tried to do, something (a refusal does nothing)."""
CONTEXTUAL = frozenset({"confirm", "deny", "undo", "cancel"})
"""Intents whose decision depends on the turns before (planned on a fresh session)."""
GOALS = {
    "right_at_once_clean": ">= 0.95",
    "right_at_once_snr10": ">= 0.90",
    "right_at_once_slow": ">= 0.90",
    "wrong_unasked": "<= 0",
    "wake_false_rejects": "<= 0.03",
    "wake_false_accepts_per_hour": "<= 0.5",
    "end_of_speech_to_action_p50_ms": "<= 150",
    "end_of_speech_to_action_p95_ms": "<= 250",
}


def default_workdir() -> Path:
    return REPO / ".cache" / "personal-templates"


def classify(turn: Turn | None, expected: dict[str, Any]) -> str:
    """right (the planned action, at once), asked (a question first: "did you mean ...?",
    "which one?"), wrong (another action, unasked), or missed (nothing, or nothing understood)."""
    return classify_outcome(turn.outcome if turn is not None else None, expected)


def classify_outcome(got: dict[str, Any] | None, expected: dict[str, Any]) -> str:
    """As `classify`, from the turn's outcome. A command whose decision depends on what came
    before it in the run (yes, no, undo, cancel: "undo that" undoes the item before, "no"
    declines a "click send" still waiting) is right when heard as that command, unasked."""
    if got is None:
        return "missed"
    if got == expected:
        return "right"
    if got["decision"] in ASKING:
        return "asked"
    intent = expected.get("intent") or {}
    if intent.get("intent") in CONTEXTUAL and got["intent"] == intent:
        return "right"
    if got["intent"] is not None:
        return "wrong"
    return "missed"


def prepare(part: Part, per: int, voices: int, workdir: Path, arms: list[Arm],
            progress: Progress, make_profiles: bool = False) -> list[SpokenItem]:
    """Every test clip and planned outcome, and (`make_profiles`, for "after") every voice's
    two profiles (else the children make them as they need them)."""
    chosen = sample_items(part, per, voices=voices)
    for n, item in enumerate(chosen, 1):
        item_audio(item)
        planned(item.scene, item.phrase)
        if n % 25 == 0:
            progress(f"audio: {n}/{len(chosen)} test takes made")
    if "after" in arms and make_profiles:
        labels: list[tuple[str, Style]] = sorted({(i.voice.label, i.style) for i in chosen})
        by_label = {v.label: v for v in load_part(part).voices}
        for n, (label, style) in enumerate(labels, 1):
            make_profile(workdir, part, by_label[label], style)
            progress(f"enrolment: {n}/{len(labels)} profiles ({label}, {style})")
    return chosen


def run_arm(arm: Arm, part: Part, per: int, voices: int, workdir: Path, progress: Progress,
            conditions: tuple[ConditionName, ...] = CONDITIONS,
            room: bool = False, speech: bool = False) -> dict[str, Any]:
    """In this process: each item through the real pipeline, paced in real time, on a fresh
    copy of its scene; "after" with the voice's profile (the slow condition: the slow person's)."""
    chosen = sample_items(part, per, conditions, voices)

    def profile_of(item: SpokenItem) -> Path | None:
        return (make_profile(workdir, part, item.voice, item.style, room, speech)
                if arm == "after" else None)

    rows = hear_items(chosen, item_audio, profile_of, arm, progress, room=room)
    return {"arm": arm, "room": room, "speech": speech, "rows": rows,
            "peak_rss_mb": peak_rss_mb()}


def hear_items(chosen: Sequence[SpokenItem], audio_of: Callable[[SpokenItem], bytes],
               profile_of: Callable[[SpokenItem], Path | None], label: str,
               progress: Progress, pace: float | None = 1.0,
               room: bool = False) -> list[dict[str, Any]]:
    """Each item's row: its clip (`audio_of`) through the real pipeline with its voice's
    profile (`profile_of`, asked once a voice and style; None: none), on a fresh copy of its
    scene, `pace` as in run_clips; `room`: the profiles hold the voice's room."""
    groups: dict[tuple[str, str, str], list[SpokenItem]] = defaultdict(list)
    profiles: dict[tuple[str, str], Path | None] = {}
    for item in chosen:
        # Without profiles, voices share a pipeline run (fewer start-ups); with them, each
        # voice's items are heard with its own profile.
        if (item.voice.label, item.style) not in profiles:
            profiles[(item.voice.label, item.style)] = profile_of(item)
        profile = profiles[(item.voice.label, item.style)]
        who = item.voice.label if profile is not None else ""
        groups[(who, item.style, item.scene)].append(item)
    rows: list[dict[str, Any]] = []
    done = 0
    started = time.monotonic()
    for (_label, _style, scene), group in sorted(groups.items()):
        profile = profiles[(group[0].voice.label, group[0].style)]
        for k in range(0, len(group), RUN_SIZE):
            chunk = group[k : k + RUN_SIZE]
            result = run_clips(scene, [audio_of(i) for i in chunk], "closed", pace=pace,
                               profile=profile)
            woke, first = by_clip(result)
            for i, item in enumerate(chunk):
                turn = first.get(i)
                expected = planned(item.scene, item.phrase)
                t = turn.timings if turn is not None else {}
                latency = (t["action_done"] - (t["speech_end"] - t["vad_ms"])
                           if "action_done" in t else None)
                rows.append({"id": item.item_id, "voice": item.voice.label,
                             "condition": item.condition, "scene": item.scene,
                             "phrase": item.phrase, "variant": item.variant,
                             "woke": i in woke, "outcome": classify(turn, expected),
                             "heard": turn.utterance.text if turn else None,
                             "engine": turn.utterance.engine if turn else None,
                             "got": turn.outcome if turn else None, "expected": expected,
                             "latency_ms": None if latency is None else round(latency, 1),
                             "vad_ms": t.get("vad_ms"), "stt_ms": t.get("stt_ms"),
                             "noise": item.noise,
                             "room": room_kind(item.voice) if room else None})
            done += len(chunk)
            right = sum(r["outcome"] == "right" for r in rows)
            progress(f"{label}: {done}/{len(chosen)} items, {right} right at once so far "
                     f"({(time.monotonic() - started) / 60:.1f} min)")
    return rows


def wrong_acted(row: dict[str, Any]) -> bool:
    """Wrong, unasked, and done or tried: not refused as making no sense there."""
    return row["outcome"] == "wrong" and (row["got"] or {}).get("decision") in ACTED


def outcomes(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Right at once, wrong unasked (and of those, acted on), asked, missed (each with its
    Wilson interval), and wake false rejects, over `rows`."""
    n = len(rows)
    out: dict[str, Any] = {"n": n}
    for kind in ("right", "wrong", "asked", "missed"):
        out[kind] = share(sum(r["outcome"] == kind for r in rows), n)
    out["wrong_acted"] = share(sum(wrong_acted(r) for r in rows), n)
    out["wake_false_rejects"] = share(sum(not r["woke"] for r in rows), n)
    return out


def latency(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """End of speech (the last voiced 20 ms frame) -> action done, over turns that acted right
    at once: all, and by the engine that heard them."""
    timed = [r for r in rows if r["outcome"] == "right" and r["latency_ms"] is not None]
    by_engine: dict[str, list[float]] = defaultdict(list)
    for r in timed:
        by_engine[r["engine"]].append(r["latency_ms"])
    return {"all": percentiles([r["latency_ms"] for r in timed]),
            "by_engine": {k: percentiles(v) for k, v in sorted(by_engine.items())},
            # Of it: the VAD's wait for the end of speech, and the hearing (templates, Whisper).
            "vad_wait_ms": percentiles([r["vad_ms"] for r in timed if r.get("vad_ms")]),
            "stt_ms": percentiles([r["stt_ms"] for r in timed if r.get("stt_ms")])}


def summarize_arm(result: dict[str, Any]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = [{**r, "outcome": classify_outcome(r["got"], r["expected"])}
                                  for r in result["rows"]]  # scored again: saved rows too
    by_condition = {c: [r for r in rows if r["condition"] == c] for c in CONDITIONS}
    by_voice: dict[str, dict[str, Any]] = defaultdict(dict)
    for voice in sorted({r["voice"] for r in rows}):
        for c in CONDITIONS:
            cell = [r for r in rows if r["voice"] == voice and r["condition"] == c]
            if cell:
                right = sum(r["outcome"] == "right" for r in cell)
                by_voice[voice][c] = f"{right}/{len(cell)}"
    engines: dict[str, int] = defaultdict(int)
    for r in rows:
        engines[str(r["engine"])] += 1
    return {
        "all": outcomes(rows),
        "by_condition": {c: outcomes(g) for c, g in by_condition.items() if g},
        "right_at_once_by_voice_and_condition": dict(by_voice),
        "end_of_speech_to_action_ms": {
            "clean": latency(by_condition["clean"]),
            "all_conditions": latency(rows),
            **{c: latency(g)["all"] for c, g in by_condition.items() if c != "clean"},
        },
        "turns_by_engine": dict(sorted(engines.items())),
        "not_right": [{k: r[k] for k in ("id", "variant", "outcome", "heard", "engine", "got",
                                         "expected")}
                      for r in rows if r["outcome"] != "right"],
        "peak_rss_mb": result.get("peak_rss_mb"),
    }


def _met(value: float | None, goal: str) -> bool | None:
    if value is None:
        return None
    op, bound = goal.split()[:2]
    return value >= float(bound) if op == ">=" else value <= float(bound)


def goals(after: dict[str, Any], fa: dict[str, Any] | None) -> dict[str, Any]:
    cond = after.get("by_condition", {})
    clean_latency = after.get("end_of_speech_to_action_ms", {}).get("clean", {}).get("all", {})
    figures: dict[str, float | None] = {
        "right_at_once_clean": cond.get("clean", {}).get("right", {}).get("share"),
        "right_at_once_snr10": cond.get("snr10", {}).get("right", {}).get("share"),
        "right_at_once_slow": cond.get("slow", {}).get("right", {}).get("share"),
        "wrong_unasked": after.get("all", {}).get("wrong", {}).get("count"),
        "wake_false_rejects": after.get("all", {}).get("wake_false_rejects", {}).get("share"),
        "wake_false_accepts_per_hour": (fa or {}).get("false_accepts_per_hour"),
        "end_of_speech_to_action_p50_ms": clean_latency.get("p50_ms") or None,
        "end_of_speech_to_action_p95_ms": clean_latency.get("p95_ms") or None,
    }
    return {name: {"goal": GOALS[name], "after": value, "met": _met(value, GOALS[name])}
            for name, value in figures.items()}


def protocol(part: Part, per: int, voices: int) -> dict[str, Any]:
    definition = load_part(part)
    chosen = definition.voices[:voices] if voices else definition.voices
    return {
        "part": f"{part} (lab/appliance_lab/bench/spoken/voice_{part}.yaml)",
        "voices": [v.label for v in chosen],
        "enrolment": {
            "wake_takes": WAKE_TAKES, "takes_per_command": COMMAND_TAKES,
            "commands": enrolled_phrases(),
            "takes": "sox tempo/pitch/tremolo of the voice's words, in a room or noise: "
                     f"{[str(v) for v in ENROL['normal']]}",
            "slow_person_takes": [str(v) for v in ENROL["slow"]],
        },
        "test": {
            "items": f"{per} per voice and condition (pooled over voices below), each 'hey "
                     "juniper, COMMAND' with an enrolled command on a scene that has it",
            "takes": [str(v) for v in TEST["normal"]],
            "slow_takes": [str(v) for v in TEST["slow"]],
            "conditions": "clean; pink/brown/babble at 10 and 5 dB SNR; sox reverb 70%; slow "
                          "(each word alone, 300-500 ms apart, tremolo; the slow person's "
                          "profile after enrolment)",
        },
        "paced": "real time (accuracy, latency); false accepts as fast as the VAD reads",
        "end_of_speech_is": "the last voiced 20 ms frame (the VAD decides vad_ms later)",
        "right_is": "the first turn of the item did what the written command plans on a fresh "
                    "copy of its scene (same decision, same intent)",
    }


def _command(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", f"appliance_lab.bench.spoken.{module}", *args]


def _run_children(commands: dict[str, list[str]], jobs: int, workdir: Path,
                  progress: Progress) -> dict[str, dict[str, Any]]:
    """Each command in its own process, at most `jobs` at once, its stdout to a file (a pipe
    would fill and stop it); each one's last stdout line (JSON), or its exit code when it
    failed (a stopped false-accept run keeps its JSONL)."""
    waiting = list(commands.items())
    running: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}
    results: dict[str, dict[str, Any]] = {}
    while waiting or running:
        while waiting and len(running) < max(1, jobs):
            name, cmd = waiting.pop(0)
            progress(f"{name}: starting")
            out = workdir / f"{name.replace(' ', '-')}.out"
            with out.open("wb") as sink:
                running[name] = (subprocess.Popen(cmd, stdout=sink), out)
        for name, (proc, out) in list(running.items()):
            if proc.poll() is None:
                continue
            lines = out.read_text(encoding="utf-8").strip().splitlines()
            del running[name]
            if proc.returncode != 0 or not lines:
                progress(f"{name}: ended with exit {proc.returncode}")
                results[name] = {"error": f"exit {proc.returncode}"}
            else:
                results[name] = json.loads(lines[-1])
        time.sleep(1.0)
    return results


def arm_path(workdir: Path, part: Part, arm: Arm, enrolled: str) -> Path:
    """Where an arm's rows are saved (`enrolled`: what the profiles hold beyond the phrases)."""
    return workdir / f"{part}-{arm}{'-' + enrolled if enrolled else ''}.json"


def saved_arm(workdir: Path, part: Part, arm: Arm, items: list[SpokenItem],
              enrolled: str = "") -> dict[str, Any] | None:
    """An arm's rows saved by an earlier run of the same items, else None."""
    path = arm_path(workdir, part, arm, enrolled)
    if not path.exists():
        return None
    saved: dict[str, Any] = json.loads(path.read_text())
    ids = [r["id"] for r in saved.get("rows", [])]
    return saved if sorted(ids) == sorted(i.item_id for i in items) else None


def bench_voice_enrolled(part: Part = "heldout", per: int = 4, voices: int = 0,
                         fa_hours: float = 0.5, workdir: Path | None = None,
                         arms: list[Arm] | None = None, jobs: int = 1,
                         fa_arms: list[Arm] | None = None, reuse: bool = False,
                         speech: bool = False, room: bool = False,
                         progress: Progress = lambda _line: None) -> dict[str, Any]:
    """The whole benchmark; `per` items per voice and condition (4 x 15 held-out voices = 60
    per condition), `fa_hours` of non-wake audio with the profiles in use (0: none; earlier
    hours in `workdir` count), `jobs` children at once (each arm, the false accepts);
    `reuse`: an arm whose rows an earlier run saved in `workdir` for the same items is not
    run again; `speech`, `room`: the enrolment ends with free speech, the room's sound."""
    workdir = workdir or default_workdir()
    workdir.mkdir(parents=True, exist_ok=True)
    chosen_arms = arms or list(ARMS)
    report: dict[str, Any] = {"protocol": {**protocol(part, per, voices),
                                           "enrolled_beyond_phrases": enrolled_name(room, speech)},
                              "arms": {}}
    common = ["--part", part, "--voices", str(voices), "--work", str(workdir),
              *(["--speech"] if speech else []), *(["--room"] if room else [])]
    commands: dict[str, list[str]] = {}
    saved: dict[str, dict[str, Any]] = {}
    if per > 0:
        items = prepare(part, per, voices, workdir, chosen_arms, progress)
        for arm in chosen_arms:
            earlier = (saved_arm(workdir, part, arm, items, enrolled_name(room, speech))
                       if reuse else None)
            if earlier is not None:
                progress(f"{arm}: the rows saved in {workdir}")
                saved[arm] = earlier
                continue
            commands[arm] = _command("personal_bench", "--arm", arm, "--per", str(per),
                                     *common)
    for fa_arm in fa_arms or ["after"]:
        if fa_hours > 0:
            commands[f"false accepts {fa_arm}"] = _command(
                "personal_fa", "--hours", str(fa_hours), "--arm", fa_arm, *common)
    results = {**saved, **_run_children(commands, jobs, workdir, progress)}
    for arm in chosen_arms:
        if arm in results:
            result = results[arm]
            if "rows" in result:
                arm_path(workdir, part, arm, enrolled_name(room, speech)).write_text(
                    json.dumps(result))
            report["arms"][arm] = summarize_arm(result) if "rows" in result else result
    fa: dict[str, Any] | None = None
    if fa_hours > 0:
        report["false_accepts"] = {}
        for fa_arm in fa_arms or ["after"]:
            summary = fa_summary(workdir, part, fa_arm, enrolled_name(room, speech))
            summary["peak_rss_mb"] = results.get(f"false accepts {fa_arm}", {}).get(
                "peak_rss_mb")
            report["false_accepts"][fa_arm] = summary
        fa = report["false_accepts"].get("after")
    after = report["arms"].get("after", {})
    report["goals"] = goals(after if "all" in after else {}, fa)
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--arm", choices=ARMS, required=True)
    parser.add_argument("--part", choices=("heldout", "tune"), default="heldout")
    parser.add_argument("--per", type=int, default=4)
    parser.add_argument("--voices", type=int, default=0)
    parser.add_argument("--work", type=Path, default=default_workdir())
    parser.add_argument("--room", action="store_true",
                        help="each profile also has its voice's room, recorded after enrolment")
    parser.add_argument("--speech", action="store_true",
                        help="each profile also has its voice talking freely")
    parser.add_argument("--conditions", default=",".join(CONDITIONS),
                        help="comma-separated, of " + ", ".join(CONDITIONS))
    args = parser.parse_args()
    conditions = tuple(c for c in CONDITIONS if c in args.conditions.split(","))

    def progress(line: str) -> None:
        print(f"bench voice-enrolled: {line}", file=sys.stderr, flush=True)

    part: Part = "tune" if args.part == "tune" else "heldout"
    print(json.dumps(run_arm(args.arm, part, args.per, args.voices, args.work, progress,
                             conditions, args.room, args.speech)))


if __name__ == "__main__":
    main()
