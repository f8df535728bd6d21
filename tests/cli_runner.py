"""Run the `appliance` command in-process (fast) or as a real subprocess (for crash tests)."""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.cli import main

APPLIANCE = Path(sys.executable).with_name("appliance")


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run(*args: str) -> Result:
    """`appliance ARGS...` through the real entry point, without a new interpreter."""
    out, err = io.StringIO(), io.StringIO()
    old_argv = sys.argv
    sys.argv = ["appliance", *args]
    code = 0
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main()
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = old_argv
    return Result(code, out.getvalue(), err.getvalue())


class Kiosk:
    """One scene file and one store, as consecutive `appliance say` calls see them."""

    def __init__(self, tmp: Path, scene: dict[str, Any], store: str | None = None) -> None:
        self.scene = tmp / "scene.json"
        self.scene.write_text(json.dumps(scene))
        self.store = store or str(tmp / "journal.sqlite")

    def say(self, text: str) -> dict[str, Any]:
        r = run("say", text, "--desktop", f"sim:{self.scene}", "--store", self.store, "--json")
        assert r.code == 0, r.err
        assert r.err == "" or "interrupted" in r.err.lower(), r.err
        data: dict[str, Any] = r.json()
        return data

    def element(self, name: str) -> dict[str, Any]:
        return find_element(json.loads(self.scene.read_text()), name)

    def raw_scene(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.scene.read_text())
        return data


def find_element(scene: dict[str, Any], name: str) -> dict[str, Any]:
    """The first element called `name` in a scene (open or launchable applications)."""

    def walk(elements: list[dict[str, Any]]) -> dict[str, Any] | None:
        for el in elements:
            if el.get("name") == name:
                return el
            found = walk(el.get("children", []))
            if found:
                return found
        return None

    for group in ("applications", "launchable"):
        for app in scene.get(group, []):
            for window in app["windows"]:
                found = walk(window.get("children", []))
                if found:
                    return found
    raise KeyError(name)
