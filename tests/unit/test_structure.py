"""The package's import structure: no cycles, and `cli.py` is a leaf nothing imports.

The graph counts every import in a module, function-level ones too, so a lazy import cannot
hide a cycle. Run alone: `python -m pytest -q tests/unit/test_structure.py`.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import appliance

PACKAGE = Path(appliance.__file__).parent


def module_name(path: Path) -> str:
    """`appliance/intents/grammar.py` -> `appliance.intents.grammar` (a package is its __init__)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that `name` imports anywhere in its file (`from a import b`
    counts as `a.b` when b is a module, else as `a`)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            if target in known:
                found.add(target)
    # A module does not import its own package by importing a sibling; keep only real edges.
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imported(name, path, known) for name, path in found.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that starts and ends at the same module, or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def test_the_graph_sees_function_level_imports() -> None:
    graph = import_graph()
    # cli.py builds the kiosk only inside its command, yet the edge is there.
    assert "appliance.kiosk" in graph["appliance.cli"]


def test_no_import_cycles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_cli_is_a_leaf() -> None:
    importers = sorted(name for name, deps in import_graph().items() if "appliance.cli" in deps)
    assert importers == [], f"these modules import appliance.cli: {importers}"


def test_voice_knows_nothing_of_the_session_or_the_journal() -> None:
    """voice/ sits below the session it serves: audio -> text, and no further."""
    above = ("appliance.session", "appliance.wiring", "appliance.journal", "appliance.kiosk")
    for name, imports in import_graph().items():
        if name.startswith("appliance.voice"):
            reaching = sorted(i for i in imports if i.startswith(above))
            assert not reaching, f"{name} imports {reaching}"


def test_no_cycles_between_subpackages() -> None:
    # desktop, intents, voice, ...: a part may use another only if that one never uses it back.
    packages: dict[str, set[str]] = {}
    for name, deps in import_graph().items():
        part = ".".join(name.split(".")[:2])
        packages.setdefault(part, set()).update(".".join(d.split(".")[:2]) for d in deps)
    for part, deps in packages.items():
        deps.discard(part)
        deps &= set(packages)
    cycle = find_cycle(packages)
    assert cycle is None, "subpackages in a cycle: " + " -> ".join(cycle or [])


def test_the_lab_imports_only_what_the_package_has() -> None:
    """A name moved in the package (COMMAND_WORDS left session_sink) once broke a tuning run
    silently, when they were scripts outside mypy's paths; this names what went missing."""
    import importlib.util

    missing = []
    for module_path in lab_modules():
        for node in ast.walk(ast.parse(module_path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("appliance"):
                module = importlib.import_module(node.module or "")
                missing += [f"{module_path.name}: {node.module}.{alias.name}"
                            for alias in node.names
                            if not hasattr(module, alias.name) and not (
                                hasattr(module, "__path__")  # a package's submodule
                                and importlib.util.find_spec(f"{node.module}.{alias.name}"))]
    assert missing == []


LAB = PACKAGE.parent / "lab" / "appliance_lab"
# namedtuple's own methods: public, underscored so as not to clash with field names
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make"}


def lab_modules() -> list[Path]:
    return sorted(LAB.rglob("*.py"))


def test_the_product_has_no_bench_and_never_imports_the_lab() -> None:
    """The benchmarks and tuning runs live in the lab (lab/, never on the device). `appliance
    bench` reaches it by name, lazily, in cli.py alone."""
    assert lab_modules(), "the lab is missing"
    benches = [name for name in modules() if any(
        part.startswith("bench") for part in name.split("."))]
    assert benches == []
    importers, naming = [], []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = [node.module or ""]
            else:
                targets = []
            if any(t == "appliance_lab" or t.startswith("appliance_lab.") for t in targets):
                importers.append(name)
            if isinstance(node, ast.Constant) and node.value == "appliance_lab":
                naming.append(name)
    assert importers == []
    assert naming == ["appliance.cli"]


def test_the_lab_uses_the_product_s_public_api_only() -> None:
    """No private name imported from the product, no `obj._name` on anything but self."""
    private = []
    for path in lab_modules():
        where = path.relative_to(LAB.parent)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                names = []
            private += [f"{where}: import {name}" for name in names
                        if name.startswith("appliance.")
                        and any(part.startswith("_") for part in name.split("."))]
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__") and node.attr not in NAMEDTUPLE_API
                    and not (isinstance(node.value, ast.Name)
                             and node.value.id in ("self", "cls"))):
                private.append(f"{where}:{node.lineno}: .{node.attr}")
    assert private == []


def test_the_caregiver_page_loads_no_numpy() -> None:
    """The web unit denies @resources system calls, and numpy's OpenBLAS calls mbind as it loads:
    the page must not import numpy (or what loads it) to serve."""
    shown = subprocess.run(
        [sys.executable, "-c", "import sys, appliance.web.serve, appliance.web.app; print("
         "sorted(m for m in ('numpy', 'soxr', 'onnxruntime', 'PIL') if m in sys.modules))"],
        capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]"
