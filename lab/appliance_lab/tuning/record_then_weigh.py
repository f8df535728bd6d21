"""The command line of a tuning run in two steps: `record` hears TUNING clips into JSON rows,
one a line (slow: the recognizer decodes), then `weigh` reads rows back and weighs offline."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def record_then_weigh(
    doc: str | None,
    record: Callable[[argparse.Namespace], None],
    weigh: Callable[[list[Path]], None],
    *,
    per: int,
    record_options: Callable[[argparse.ArgumentParser], object] = lambda _parser: None,
    weigh_verb: str = "weigh",
) -> None:
    """Run the step the command line names: `record [--per N] [record_options]`, given the
    parsed options, or `<weigh_verb> ROWS...`, given the rows' files. `doc`: the script's own."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    steps = parser.add_subparsers(dest="step", required=True)
    recording = steps.add_parser("record")
    recording.add_argument("--per", type=int, default=per,
                           help="items per voice and condition (default %(default)s)")
    record_options(recording)
    steps.add_parser(weigh_verb).add_argument("rows", nargs="+", type=Path)
    args = parser.parse_args()
    if args.step == "record":
        record(args)
    else:
        weigh(args.rows)
