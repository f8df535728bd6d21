"""`appliance bench desktop`'s seeing part: how much of a window tesseract reads, and what a
capture and a reading cost, on windows with no accessibility tree (a Tk form, xcalc).

The Tk layouts "tuned" and "moved" were looked at while setting the thresholds in
appliance/desktop/seeing/ (SCALE, MIN_WORD_CONF, GAP_FACTOR); "heldout" and its 1280x800 copy
never were, and are reported apart.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from appliance.desktop.model import DesktopError
from appliance_lab import REPO
from appliance_lab.bench.stats import peak_rss_mb

TK_FORM = REPO / "tests" / "apps" / "tk_form.py"
FORM_WORDS = ["Name", "Ann", "Town", "Leeds", "Nothing", "sent", "yet"]
EXPECTED = {
    "tuned": [*FORM_WORDS, "Submit", "Clear"],
    "moved": [*FORM_WORDS, "Submit", "Clear"],
    "heldout": [*FORM_WORDS, "Apply", "Reset"],
}
XCALC = ["AC", "INV", "sin", "cos", "tan", "DRG", "EE", "log", "ln", "not", "and", "or",
         "xor", "trunc", "base", "shl", "shr", "mod", "STO", "RCL", "SUM", "EXC",
         "7", "8", "9", "4", "5", "6", "1", "2", "3", "0"]
"""The labels of xcalc's TI layout that are words or digits (its symbols are left out)."""
BIG = (1280, 800)
ROUNDS = 20


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _case(eyes: Any, box: tuple[int, int, int, int], expected: list[str],
          rounds: int) -> dict[str, Any]:
    from appliance.desktop.seeing.ocr import read_image

    took, reading = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        reading = read_image(eyes.grab(box))
        took.append(time.perf_counter() - start)
    assert reading is not None
    read = [w.text for w in reading.words]
    found = [w for w in expected if w in read]
    return {
        "window": f"{box[2]}x{box[3]}", "expected": len(expected), "found": len(found),
        "missed": [w for w in expected if w not in read],
        "extra": [w for w in read if w not in expected],
        "capture_ocr_ms": {"p50": _ms(statistics.median(took)), "p95": _ms(_p95(took)),
                           "rounds": rounds},
    }


def _wait_window(eyes: Any, title: str, timeout: float = 20.0) -> tuple[int, int, int, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        window = eyes.active_window()
        if window is not None and window.title == title:
            time.sleep(0.3)  # drawn, not just mapped
            return window.bounds  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise DesktopError(f"{title} never showed.")


def bench_seen(rounds: int = ROUNDS) -> dict[str, Any]:
    """Each layout read `rounds` times in a private Xvfb + openbox session."""
    if not TK_FORM.exists():
        raise DesktopError("The seeing benchmark needs the repository's tests/apps folder.")
    from appliance.desktop.atspi.headless import HeadlessSession
    from appliance.desktop.seeing.capture import X11Capture

    saved = dict(os.environ)
    session = HeadlessSession.start(screen="1400x900")
    session.apply()
    wm = subprocess.Popen(["openbox"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tuned: dict[str, Any] = {}
    heldout: dict[str, Any] = {}
    try:
        time.sleep(0.5)
        eyes = X11Capture()
        with tempfile.TemporaryDirectory() as tmp:
            runs = [("tuned", "520x300", tuned), ("moved", "520x300", tuned),
                    ("heldout", "520x300", heldout), ("heldout", f"{BIG[0]}x{BIG[1]}", heldout)]
            for layout, size, into in runs:
                app = subprocess.Popen([sys.executable, str(TK_FORM), str(Path(tmp) / "o.json"),
                                        layout, size], stderr=subprocess.DEVNULL)
                try:
                    title = "Library card" if layout == "heldout" else "Clinic form"
                    box = _wait_window(eyes, title)
                    into[f"tk {layout} {size}"] = _case(eyes, box, EXPECTED[layout], rounds)
                finally:
                    app.terminate()
                    app.wait(timeout=5)
                    time.sleep(0.3)
            calc = subprocess.Popen(["xcalc"], stderr=subprocess.DEVNULL)
            try:
                tuned["xcalc"] = _case(eyes, _wait_window(eyes, "Calculator"), XCALC, rounds)
            finally:
                calc.terminate()
                calc.wait(timeout=5)
        eyes.close()
    finally:
        wm.terminate()
        wm.wait()
        session.stop()
        os.environ.clear()
        os.environ.update(saved)
    # tesseract runs as a child process per read: its peak is the children's.
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"tuned": tuned, "heldout": heldout, "tesseract": _tesseract_version(),
            "peak_rss_mb": {"bench": peak_rss_mb(), "tesseract": round(children, 1)}}


def _tesseract_version() -> str:
    try:
        out = subprocess.run(["tesseract", "--version"], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else ""


if __name__ == "__main__":
    import json

    print(json.dumps(bench_seen(), indent=2))
