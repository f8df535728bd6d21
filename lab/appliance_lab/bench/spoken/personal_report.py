"""The tables of docs/measurements/personal-templates.md from a `bench voice-enrolled` report:
`python -m appliance_lab.bench.spoken.personal_report report.json`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

KINDS = (("right", "right at once"), ("wrong", "wrong, unasked"), ("asked", "asked"),
         ("missed", "missed"))


def _cell(figure: dict[str, Any]) -> str:
    ci = figure.get("ci95")
    if figure.get("share") is None or ci is None:
        return "-"
    return f"{figure['share']:.2f} ({figure['count']}) [{ci[0]:.2f}, {ci[1]:.2f}]"


def outcome_table(report: dict[str, Any]) -> list[str]:
    arms = report.get("arms", {})
    lines = ["| condition | n | arm | " + " | ".join(label for _, label in KINDS)
             + " | wake missed |", "|---|---|---|" + "---|" * (len(KINDS) + 1)]
    conditions = next((list(a["by_condition"]) for a in arms.values() if "by_condition" in a), [])
    for condition in [*conditions, "all"]:
        for arm in ("before", "after"):
            summary = arms.get(arm, {})
            figures = (summary.get("all") if condition == "all"
                       else summary.get("by_condition", {}).get(condition))
            if not figures:
                continue
            cells = [_cell(figures[k]) for k, _ in KINDS] + [_cell(figures["wake_false_rejects"])]
            lines.append(f"| {condition} | {figures['n']} | {arm} | " + " | ".join(cells) + " |")
    return lines


def latency_table(report: dict[str, Any]) -> list[str]:
    lines = ["| arm | condition | turns | p50 ms | p95 ms | of it: VAD wait p50 | hearing p50 |"
             " by engine (p50 / p95 / n) |", "|---|---|---|---|---|---|---|---|"]
    for arm in ("before", "after"):
        ms = report.get("arms", {}).get(arm, {}).get("end_of_speech_to_action_ms", {})
        for condition in ("clean", "all_conditions"):
            figures = ms.get(condition)
            if not figures:
                continue
            top = figures["all"]
            engines = "; ".join(f"{e}: {f['p50_ms']:.0f} / {f['p95_ms']:.0f} / {f['n']}"
                                for e, f in figures["by_engine"].items())
            lines.append(f"| {arm} | {condition} | {top['n']} | {top['p50_ms']:.0f} | "
                         f"{top['p95_ms']:.0f} | {figures['vad_wait_ms']['p50_ms']:.0f} | "
                         f"{figures['stt_ms']['p50_ms']:.0f} | {engines} |")
    return lines


def fa_table(report: dict[str, Any]) -> list[str]:
    lines = ["| arm | hours | segments | false accepts | per hour [95 %] | by engine |",
             "|---|---|---|---|---|---|"]
    for arm, fa in report.get("false_accepts", {}).items():
        ci = fa.get("per_hour_ci95") or [None, None]
        lines.append(f"| {arm} | {fa['hours']:.3f} | {fa['segments']} | {fa['false_accepts']} | "
                     f"{fa['false_accepts_per_hour']} [{ci[0]}, {ci[1]}] | {fa['by_engine']} |")
    lines += ["", "| arm | kind of speech | hours | false accepts | per hour [95 %] |",
              "|---|---|---|---|---|"]
    for arm, fa in report.get("false_accepts", {}).items():
        for kind, f in fa.get("by_kind", {}).items():
            per = round(f["false_accepts"] / f["hours"], 1) if f["hours"] else None
            ci = f.get("per_hour_ci95") or [None, None]
            lines.append(f"| {arm} | {kind} | {f['hours']:.3f} | {f['false_accepts']} | "
                         f"{per} [{ci[0]}, {ci[1]}] |")
    return lines


def voice_table(report: dict[str, Any]) -> list[str]:
    arms = report.get("arms", {})
    before = arms.get("before", {}).get("right_at_once_by_voice_and_condition", {})
    after = arms.get("after", {}).get("right_at_once_by_voice_and_condition", {})
    conditions = ("clean", "snr10", "snr5", "reverb", "slow")
    lines = ["| voice | " + " | ".join(conditions) + " |", "|---|" + "---|" * len(conditions)]
    for voice in sorted(set(before) | set(after)):
        cells = [f"{before.get(voice, {}).get(c, '-')} -> {after.get(voice, {}).get(c, '-')}"
                 for c in conditions]
        lines.append(f"| {voice} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    report = json.loads(Path(sys.argv[1]).read_text())
    for title, table in (("outcomes", outcome_table), ("latency", latency_table),
                         ("false accepts", fa_table), ("right at once by voice", voice_table)):
        print(f"\n## {title}\n")
        print("\n".join(table(report)))


if __name__ == "__main__":
    main()
