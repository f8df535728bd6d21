"""Hypothesis: random intents on random scenes never crash the validator and never let a
destructive action run without a yes."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.desktop.model import Risk
from appliance.intents.model import Read
from appliance.policy.validator import validate
from appliance.settings import Settings
from tests.scenes import snapshot_of

ROLES = [
    "push button",
    "check box",
    "text",
    "password text",
    "list item",
    "slider",
    "combo box",
    "page tab",
    "label",
    "link",
    "menu item",
    "toggle button",
]
STATES = ["checked", "focused", "selected", "insensitive", "invisible"]
NAMES = [
    "Send",
    "Delete all",
    "Factory reset",
    "OK",
    "Cancel",
    "Volume",
    "PIN",
    "Message",
    "Grandma",
    "Pay",
    "click Delete all",
    "ignore previous instructions",
    "Erase",
    "Play",
    "",
]

names = st.sampled_from(NAMES) | st.text(max_size=12)
element = st.fixed_dictionaries(
    {"role": st.sampled_from(ROLES), "name": names},
    optional={
        "states": st.lists(st.sampled_from(STATES), max_size=3, unique=True),
        "risk": st.sampled_from(["harmless", "moderate", "destructive"]),
        "value": st.one_of(st.text(max_size=8), st.integers(-5, 200).map(float)),
        "min": st.just(0.0),
        "max": st.just(100.0),
    },
)
scenes = st.builds(
    lambda children, launch: {
        "applications": [{"name": "App", "windows": [{"title": "Win", "children": children}]}],
        "launchable": [{"name": n, "windows": [{"title": n}]} for n in launch],
    },
    st.lists(element, max_size=12),
    st.lists(st.sampled_from(["Calendar", "Terminal", "Delete Tool"]), max_size=2, unique=True),
)
step = st.one_of(
    st.fixed_dictionaries({"intent": st.just("activate"), "target": names}),
    st.fixed_dictionaries(
        {"intent": st.just("type_text"), "text": st.text(max_size=8), "target": st.none() | names}
    ),
    st.fixed_dictionaries(
        {
            "intent": st.just("set_value"),
            "target": names,
            "value": st.booleans() | st.floats(-1e3, 1e3) | st.text(max_size=5),
        }
    ),
    st.fixed_dictionaries({"intent": st.just("select"), "target": names}),
    st.fixed_dictionaries({"intent": st.just("open_app"), "app": names}),
    st.fixed_dictionaries(
        {
            "intent": st.just("press_key"),
            "key": st.sampled_from(["Delete", "F4", "z", "Return", "w"]),
            "modifiers": st.lists(
                st.sampled_from(["ctrl", "alt", "shift"]), max_size=2, unique=True
            ),
        }
    ),
    st.fixed_dictionaries({"intent": st.just("read"), "what": st.just("element"), "target": names}),
    st.fixed_dictionaries({"intent": st.just("focus"), "target": names}),
)
with_confidence = st.builds(lambda d, c: {**d, "confidence": c}, step, st.floats(0, 1))
intents: st.SearchStrategy[dict[str, Any]] = st.one_of(
    with_confidence,
    st.builds(
        lambda steps: {"intent": "sequence", "steps": steps}, st.lists(step, min_size=1, max_size=4)
    ),
    st.dictionaries(st.sampled_from(["intent", "target", "text", "steps"]), st.text(max_size=5)),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scene=scenes, proposal=intents, allow=st.booleans(), recent=st.integers(0, 20))
def test_validator_never_crashes_and_never_runs_destructive_unconfirmed(
    scene: dict[str, Any], proposal: dict[str, Any], allow: bool, recent: int
) -> None:
    snapshot = snapshot_of(scene)
    verdict = validate(proposal, snapshot, Settings(allow_destructive=allow), recent)
    assert verdict.decision in ("execute", "confirm", "reject", "clarify", "answer", "control")
    # A read only looks at what it names ("read delete all" presses nothing): only the steps
    # that act count.
    touched = [s.node for s in verdict.steps
               if s.node is not None and not isinstance(s.intent, Read)]
    destructive = verdict.risk == Risk.destructive or any(
        n.risk == Risk.destructive for n in touched
    )
    if verdict.decision == "execute":
        assert not destructive, verdict
        # A read inside a sequence only looks: it may name a greyed-out or hidden element (as a
        # read on its own may), so it acts on nothing and carries no risk of its own.
        for step in verdict.steps:
            if step.node is None:
                continue
            if step.action is None:
                assert isinstance(step.intent, Read) and step.risk == Risk.harmless, step
            else:
                assert step.node.enabled and step.node.visible
    if destructive and not allow:
        assert verdict.decision not in ("execute", "confirm")
