"""Each role family and intent grouping is written out once: roles in desktop/roles.py, intents in
intents/model.py, so the grammar, the validator and the desktops cannot disagree on one."""

from __future__ import annotations

import ast
from pathlib import Path

import appliance
from appliance.desktop import roles

ROOT = Path(appliance.__file__).parent
ROLE_NAMES = frozenset().union(
    *(v for v in vars(roles).values() if isinstance(v, frozenset))
)
INTENT_NAMES = frozenset(
    {"activate", "type_text", "press_key", "open_app", "focus", "scroll", "set_value", "select",
     "read", "undo", "cancel", "confirm", "deny", "clarify", "sequence"}
)


def _set_literals() -> list[tuple[str, int, frozenset[str]]]:
    """Module-level frozenset/set literals of strings, with where they are written."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            # A family is the assigned value itself (a set, frozenset(set) or a union of them),
            # not sets inside other data (spoken words to roles, worked examples).
            direct = [node.value]
            while direct and not isinstance(direct[-1], ast.Set):
                v = direct.pop()
                if isinstance(v, ast.Call) and v.args and isinstance(v.func, ast.Name) \
                        and v.func.id == "frozenset":
                    direct.append(v.args[0])
                elif isinstance(v, ast.BinOp):
                    direct += [v.left, v.right]
            for inner in direct:
                if isinstance(inner, ast.Set):
                    words = {e.value for e in inner.elts if isinstance(e, ast.Constant)}
                    found.append((str(path.relative_to(ROOT)), node.lineno,
                                  frozenset(w for w in words if isinstance(w, str))))
    return found


def test_role_families_are_written_only_in_roles() -> None:
    elsewhere = [(f, n) for f, n, words in _set_literals()
                 if words & ROLE_NAMES and f != "desktop/roles.py"]
    assert elsewhere == []


def test_intent_groupings_are_written_only_in_the_model() -> None:
    elsewhere = [(f, n) for f, n, words in _set_literals()
                 if words and words <= INTENT_NAMES and f != "intents/model.py"]
    assert elsewhere == []
