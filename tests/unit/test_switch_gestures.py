"""The gesture recogniser on a virtual clock: edges in, accepted edges and presses out."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from appliance.settings import Settings
from appliance.switch.gestures import Event, Gestures
from appliance.switch.model import Edge, Press

DEFAULTS = Settings()  # debounce 40 ms, ignore repeat 250 ms, hold 0.8 s, long hold 2.5 s


def run(edges: list[tuple[int, bool, float]], until: float | None = None,
        settings: Settings = DEFAULTS, tick_every: float | None = None) -> list[Event]:
    """Feed (switch, down, t) edges in order, ticking every `tick_every` s, then tick `until`."""
    g = Gestures(settings)
    out: list[Event] = []
    now = 0.0
    for switch, down, t in edges:
        if tick_every:
            while now + tick_every < t:
                now += tick_every
                out += g.tick(now)
        out += g.feed(Edge(switch, down, t))
        now = t
    if until is not None:
        out += g.tick(until)
    return out


def presses(events: list[Event]) -> list[tuple[int, str, float]]:
    return [(e.switch, e.gesture, round(e.t, 6)) for e in events if isinstance(e, Press)]


def edges(events: list[Event]) -> list[tuple[int, bool, float]]:
    return [(e.switch, e.down, round(e.t, 6)) for e in events if isinstance(e, Edge)]


def test_a_short_press_is_a_tap_reported_at_release() -> None:
    out = run([(1, True, 1.0), (1, False, 1.3)], until=5.0)
    assert edges(out) == [(1, True, 1.0), (1, False, 1.3)]
    assert presses(out) == [(1, "tap", 1.3)]
    tap = out[-1]
    assert isinstance(tap, Press) and abs(tap.held_s - 0.3) < 1e-9


def test_a_hold_is_reported_when_the_hold_time_passes_not_at_release() -> None:
    g = Gestures(DEFAULTS)
    assert g.feed(Edge(1, True, 10.0)) == [Edge(1, True, 10.0)]
    assert g.tick(10.79) == []
    assert g.next_due() == 10.8
    assert g.tick(10.8) == [Press(1, "hold", 10.8, 0.8)]
    assert g.tick(11.0) == []
    assert g.is_down(1)
    assert g.feed(Edge(1, False, 11.2)) == [Edge(1, False, 11.2)]  # no tap after a hold
    assert not g.is_down(1) and g.next_due() is None


def test_a_hold_is_known_at_release_even_without_ticks() -> None:
    out = run([(1, True, 0.0), (1, False, 1.0)])
    assert presses(out) == [(1, "hold", 0.8)]
    assert out.index(Press(1, "hold", 0.8, 0.8)) < out.index(Edge(1, False, 1.0))


def test_long_hold_comes_after_the_hold_and_no_tap_follows() -> None:
    out = run([(1, True, 0.0), (1, False, 4.0)], tick_every=0.05)
    assert presses(out) == [(1, "hold", 0.8), (1, "long_hold", 2.5)]
    assert edges(out)[-1] == (1, False, 4.0)


def test_long_hold_not_after_hold_time_is_a_long_hold_alone() -> None:
    same = Settings(switch_hold_s=1.0, switch_long_hold_s=0.5)
    out = run([(1, True, 0.0), (1, False, 3.0)], settings=same, tick_every=0.1)
    assert presses(out) == [(1, "long_hold", 1.0)]


def test_bounces_at_press_and_release_are_dropped() -> None:
    # Contacts chatter for 10 ms on the way down and on the way up (debounce is 40 ms).
    chatter = [(1, True, 1.000), (1, False, 1.004), (1, True, 1.009), (1, False, 1.012),
               (1, True, 1.015), (1, False, 1.300), (1, True, 1.305), (1, False, 1.310)]
    out = run(chatter, until=3.0)
    assert edges(out) == [(1, True, 1.0), (1, False, 1.3)]
    assert presses(out) == [(1, "tap", 1.3)]


def test_a_release_inside_the_debounce_window_is_accepted_when_the_window_closes() -> None:
    # A very quick real tap: the up comes 20 ms after the down. Dropping it outright would leave
    # the switch stuck down and turn the tap into a hold.
    g = Gestures(DEFAULTS)
    g.feed(Edge(1, True, 5.0))
    assert g.feed(Edge(1, False, 5.02)) == []
    assert g.next_due() == 5.04
    out = g.tick(6.0)
    assert edges(out) == [(1, False, 5.04)]
    assert presses(out) == [(1, "tap", 5.04)]


def test_ignore_repeat_drops_a_whole_press_that_starts_too_soon() -> None:
    out = run([(1, True, 0.0), (1, False, 0.2),   # tap
               (1, True, 0.35), (1, False, 1.5),  # 150 ms after the release: ignored, held or not
               (1, True, 2.0), (1, False, 2.1)],  # a new tap
              until=5.0, tick_every=0.05)
    assert presses(out) == [(1, "tap", 0.2), (1, "tap", 2.1)]
    assert edges(out) == [(1, True, 0.0), (1, False, 0.2), (1, True, 2.0), (1, False, 2.1)]


def test_ignore_repeat_is_measured_from_the_last_release() -> None:
    out = run([(1, True, 0.0), (1, False, 0.2), (1, True, 0.45), (1, False, 0.6)], until=2.0)
    assert presses(out) == [(1, "tap", 0.2), (1, "tap", 0.6)]  # 250 ms exactly is not too soon


def test_no_windows_when_both_are_zero() -> None:
    raw = Settings(switch_debounce_ms=0, switch_ignore_repeat_ms=0)
    out = run([(1, True, 0.0), (1, False, 0.001), (1, True, 0.002), (1, False, 0.003)],
              settings=raw, until=1.0)
    assert presses(out) == [(1, "tap", 0.001), (1, "tap", 0.003)]


def test_two_switches_are_independent() -> None:
    out = run([(1, True, 0.0), (2, True, 0.1), (2, False, 0.3), (1, False, 1.0)],
              tick_every=0.05)
    assert presses(out) == [(2, "tap", 0.3), (1, "hold", 0.8)]
    # Switch 2's release 0.2 s after its own down is not debounced against switch 1's edges.
    assert (2, False, 0.3) in edges(out)


def test_a_hold_on_one_switch_is_reported_before_a_later_edge_of_the_other() -> None:
    out = run([(1, True, 0.0), (2, True, 1.0), (2, False, 1.2), (1, False, 1.5)])
    assert presses(out) == [(1, "hold", 0.8), (2, "tap", 1.2)]
    assert out.index(Press(1, "hold", 0.8, 0.8)) < out.index(Edge(2, True, 1.0))


def test_stray_ups_and_repeated_downs_are_not_edges() -> None:
    out = run([(1, False, 0.0), (1, True, 1.0), (1, True, 1.1), (1, False, 1.2)], until=3.0)
    assert edges(out) == [(1, True, 1.0), (1, False, 1.2)]
    assert presses(out) == [(1, "tap", 1.2)]


def test_abandon_releases_without_a_press() -> None:
    g = Gestures(DEFAULTS)
    g.feed(Edge(1, True, 0.0))
    g.feed(Edge(2, True, 0.1))
    assert g.tick(0.85) == [Press(1, "hold", 0.8, 0.8)]
    assert g.abandon(0.88) == [Edge(1, False, 0.88), Edge(2, False, 0.88)]  # 2: no hold
    assert g.tick(5.0) == [] and g.next_due() is None  # no long hold, no tap
    assert not g.is_down(1) and not g.is_down(2)
    # After the device comes back, a press is a press again (once ignore-repeat has passed).
    out = run_on(g, [(1, True, 6.0), (1, False, 6.2)])
    assert presses(out) == [(1, "tap", 6.2)]


def test_abandon_forgets_a_release_still_settling_and_an_ignored_press() -> None:
    g = Gestures(DEFAULTS)
    g.feed(Edge(1, True, 0.0))
    g.feed(Edge(1, False, 0.01))  # inside the debounce window: would settle at 0.04
    assert g.abandon(0.02) == [Edge(1, False, 0.02)]
    assert g.tick(1.0) == []


def run_on(g: Gestures, seq: list[tuple[int, bool, float]]) -> list[Event]:
    out: list[Event] = []
    for switch, down, t in seq:
        out += g.feed(Edge(switch, down, t))
    return out


# -- properties ------------------------------------------------------------------------------

# A clean press: (gap before it, how long it is held). Gaps clear both windows; lengths stay
# away from the hold thresholds by more than a bounce lasts.
press = st.tuples(st.floats(0.3, 3.0), st.one_of(st.floats(0.05, 0.7), st.floats(0.9, 2.3),
                                                   st.floats(2.7, 5.0)))


def clean(seq: list[tuple[float, float]], switch: int = 1) -> list[tuple[int, bool, float]]:
    t, out = 0.0, []
    for gap, length in seq:
        t += gap
        out += [(switch, True, t), (switch, False, t + length)]
        t += length
    return out


def expected(seq: list[tuple[float, float]]) -> list[str]:
    kinds: list[str] = []
    for _, length in seq:
        kinds += ["tap"] if length < 0.8 else ["hold"] if length < 2.5 else ["hold", "long_hold"]
    return kinds


@settings(max_examples=200, deadline=None)
@given(st.lists(press, max_size=12), st.sampled_from([None, 0.01, 0.1, 0.5]))
def test_every_clean_press_is_one_gesture(seq: list[tuple[float, float]],
                                          tick: float | None) -> None:
    out = run(clean(seq), until=1000.0, tick_every=tick)
    assert [p[1] for p in presses(out)] == expected(seq)
    downs = [e for e in edges(out) if e[1]]
    assert len(downs) == len(seq)
    times = [e.t for e in out]
    assert times == sorted(times)  # reported in the order they happened


@settings(max_examples=200, deadline=None)
@given(st.lists(press, max_size=10), st.data())
def test_bounces_never_change_the_gestures(seq: list[tuple[float, float]],
                                           data: st.DataObject) -> None:
    bouncy: list[tuple[int, bool, float]] = []
    for switch, down, t in clean(seq):
        bouncy.append((switch, down, t))
        # Up to three chatter pairs in the 35 ms after each real edge (debounce is 40 ms).
        offsets = sorted(data.draw(st.lists(st.floats(0.001, 0.035), max_size=6, unique=True)))
        for i, dt in enumerate(offsets):
            bouncy.append((switch, down if i % 2 else not down, t + dt))
        if len(offsets) % 2:
            bouncy.append((switch, down, t + 0.0355))  # chatter ends at the real level
    out = run(bouncy, until=1000.0, tick_every=0.02)
    assert [p[1] for p in presses(out)] == expected(seq)
    assert edges(out) == edges(run(clean(seq), until=1000.0))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([1, 2]), st.booleans(), st.floats(0.0, 0.5)),
                max_size=60))
def test_accepted_edges_alternate_whatever_comes_in(raw: list[tuple[int, bool, float]]) -> None:
    t, seq = 0.0, []
    for switch, down, gap in raw:
        t += gap
        seq.append((switch, down, t))
    out = run(seq, until=t + 10.0)
    for switch in (1, 2):
        levels = [e[1] for e in edges(out) if e[0] == switch]
        assert levels == [i % 2 == 0 for i in range(len(levels))]  # down, up, down, ...
        taps_and_holds = [p for p in presses(out) if p[0] == switch and p[1] != "long_hold"]
        assert len(taps_and_holds) == levels.count(True)
