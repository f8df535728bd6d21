"""The template matcher's arithmetic on made-up embeddings: warping, bounds, rivals, the screen."""

from __future__ import annotations

import numpy as np

from appliance.voice.hearing.templates import (
    MIN_SPREAD,
    RIVAL_RATIO,
    SPREAD_FACTOR,
    Template,
    TemplateSet,
    distance,
    fit,
    fits,
    spread,
    warp,
    warps,
)

RNG = np.random.default_rng(7)


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def phrase(frames: int = 12) -> np.ndarray:
    """A made-up utterance: a smooth walk through the embedding space."""
    steps = RNG.normal(size=(frames, 96)).cumsum(axis=0)
    return unit(steps + 3 * RNG.normal(size=96))


def stretched(said: np.ndarray, factor: float, jitter: float = 0.02) -> np.ndarray:
    """The same utterance said `factor` times as long, a little unsteadily."""
    index = np.minimum((np.arange(round(len(said) * factor)) / factor).astype(int), len(said) - 1)
    return unit(said[index] + jitter * RNG.normal(size=(len(index), 96)))


def test_warping_forgives_speed_but_not_words() -> None:
    said = phrase()
    assert distance(said, said) < 1e-6
    slow = distance(said, stretched(said, 1.6))
    other = distance(said, phrase())
    assert slow < 0.05 < other
    # Entry j of the warp is the template against the utterance's first j + 1 frames.
    prefixes = warp(said, np.concatenate([said, phrase(6)]))
    assert int(np.argmin(prefixes)) == len(said) - 1


def test_templates_warped_together_cost_what_each_costs_alone() -> None:
    """Stepped through together, a shorter template's cost is its own, to the last bit; an
    empty template or utterance fits nowhere."""
    said = phrase(15)
    takes = [stretched(said, 0.6), said, phrase(4), stretched(said, 1.7), phrase(1)]
    together = warps(takes, said)
    for take, (whole, begun) in zip(takes, together, strict=True):
        assert np.array_equal(whole, warp(take, said)) and len(begun) == len(take)
        assert np.array_equal(warps([take], said)[0][1], begun)
    assert fits([*takes, np.zeros((0, 96), np.float32)], said) == [
        *(fit(t, said) for t in takes), (np.inf, np.inf)]
    assert fits(takes, np.zeros((0, 96), np.float32)) == [(np.inf, np.inf)] * len(takes)
    # The answers themselves, against the recurrence written out cell by cell: each take's,
    # shorter and longer than the others, both ways round.
    for take, (whole, begun) in zip(takes, together, strict=True):
        cost = 1.0 - (take @ said.T).astype(np.float64)
        acc = np.full((len(take) + 1, len(said) + 1), np.inf)
        acc[0, 0] = 0.0
        for i in range(1, len(take) + 1):
            for j in range(1, len(said) + 1):
                acc[i, j] = cost[i - 1, j - 1] + min(acc[i - 1, j], acc[i, j - 1],
                                                     acc[i - 1, j - 1])
        assert np.allclose(whole, acc[-1, 1:] / (len(take) + np.arange(1, len(said) + 1)),
                           atol=1e-6)
        assert np.allclose(begun, acc[1:, -1] / (len(said) + np.arange(1, len(take) + 1)),
                           atol=1e-6)


def test_an_utterance_is_taken_only_within_its_bounds_and_on_the_screen() -> None:
    send, undo = phrase(), phrase()
    takes = [Template("click send", stretched(send, f)) for f in (0.9, 1.0, 1.2)] + [
        Template("undo that", stretched(undo, f)) for f in (0.9, 1.0, 1.2)]
    templates = TemplateSet.of(takes)
    assert templates.phrases == ["click send", "undo that"]
    found = templates.match(stretched(send, 1.1), lambda _: True)
    assert found is not None and found.phrase == "click send" and not found.wake
    assert found.bound == SPREAD_FACTOR * max(templates.spreads["click send"], MIN_SPREAD)
    assert 0 < found.sureness <= 1
    assert templates.match(stretched(send, 1.1), lambda p: p != "click send") is None
    assert templates.match(phrase(), lambda _: True) is None, "nothing enrolled is near"


def test_between_two_phrases_it_decides_neither() -> None:
    send = phrase()
    save = unit(send + 0.15 * RNG.normal(size=send.shape))
    takes = [Template("click send", stretched(send, f)) for f in (0.9, 1.1)] + [
        Template("click save", stretched(save, f)) for f in (0.9, 1.1)]
    templates = TemplateSet.of(takes)
    found = templates.match(stretched(send, 1.0), lambda _: True)
    assert found is not None and found.decided and found.close == ()
    between = templates.match(unit(send + save), lambda _: True)
    assert between is not None and not between.decided
    assert {between.phrase, *between.close} == {"click send", "click save"}
    assert between.distance > RIVAL_RATIO * between.rival
    assert templates.match(unit(send - save), lambda _: True) is None, "beyond both bounds"


def test_what_was_said_so_far_is_measured_against_how_each_other_phrase_begins() -> None:
    scroll, down = phrase(6), phrase(6)
    whole, begun = fit(np.concatenate([scroll, down]), scroll)
    assert begun < 1e-6 < whole, "all of it is the template's first half"
    assert fit(scroll, scroll) == (distance(scroll, scroll), distance(scroll, scroll))
    stop = unit(scroll + 0.05 * RNG.normal(size=scroll.shape))  # "scroll" sounds like it
    takes = [Template("stop", stretched(stop, f)) for f in (0.9, 1.1)] + [
        Template("scroll down", stretched(np.concatenate([scroll, down]), f)) for f in (0.9, 1.1)]
    templates = TemplateSet.of(takes)
    said = templates.match(stretched(stop, 1.0), lambda _: True)
    assert said is not None and said.phrase == "stop" and said.distance < said.start
    partial = templates.match(stretched(scroll, 1.0), lambda _: True)
    assert partial is not None and partial.phrase == "stop", "nearest of the whole phrases"
    assert partial.start < partial.distance, "but nearer still to how 'scroll down' begins"


def test_one_take_is_not_enough_and_noisy_copies_set_no_bound() -> None:
    said = phrase()
    templates = TemplateSet.of([Template("yes", said), Template("yes", stretched(said, 1.3),
                                                                 noisy=True)])
    assert templates.phrases == []
    assert templates.match(said, lambda _: True) is None
    assert spread([said]) == 0.0


def test_takes_learned_in_use_are_matched_but_never_widen_a_bound() -> None:
    """A take learned in a noisy room keeps the noise in its "clean" copy: the phrase's bound,
    and the wake verifier's, stay as enrolment set them; a phrase learned from use alone is
    bounded no looser than the loosest enrolled one."""
    stop, wake, hello = phrase(), phrase(), phrase()
    enrolled = [Template("stop", stretched(stop, f)) for f in (0.9, 1.0, 1.2)]
    noisy_stop = Template("stop", unit(stop + 0.6 * RNG.normal(size=stop.shape)),
                              learned=True)
    wake_takes = [Template("hey juniper", stretched(wake, f)) for f in (0.9, 1.1)]
    noisy_wake = Template("hey juniper", unit(wake + 0.6 * RNG.normal(size=wake.shape)),
                          learned=True)
    learned_hello = [Template("hello", stretched(hello, 1.0), learned=True),
                     Template("hello", unit(hello + 0.6 * RNG.normal(size=hello.shape)),
                              learned=True)]
    before = TemplateSet.of(enrolled, wake_takes)
    after = TemplateSet.of([*enrolled, noisy_stop, *learned_hello],
                           [*wake_takes, noisy_wake])
    assert spread([t.embeddings for t in [*enrolled, noisy_stop]]) > 2 * before.spreads["stop"]
    assert after.spreads["stop"] == before.spreads["stop"]
    assert after.wake_spread == before.wake_spread
    assert spread([t.embeddings for t in learned_hello]) > before.spreads["stop"]
    assert after.spreads["hello"] == before.spreads["stop"], "capped at the loosest enrolled"
    # Learned takes alone, with nothing enrolled to go by, bound their phrase themselves.
    alone = TemplateSet.of(learned_hello, [noisy_wake])
    assert alone.phrases == ["hello"] and alone.wake_spread is None
    assert alone.spreads["hello"] == spread([t.embeddings for t in learned_hello])


def test_a_take_learned_in_use_makes_a_match_surer_but_never_makes_one() -> None:
    """A learned take counts only where the phrase's enrolled takes are within its bound too:
    noise kept in a learned take is not heard as the phrase however near the take it is."""
    stop = phrase()
    enrolled = [Template("stop", stretched(stop, f), take=1) for f in (0.9, 1.0, 1.2)]
    noisy = Template("stop", unit(stop + 0.6 * RNG.normal(size=stop.shape)), take=2,
                     learned=True)
    true = Template("stop", unit(stop + 0.04 * RNG.normal(size=stop.shape)), take=3,
                    learned=True)  # said the way it was in use
    templates = TemplateSet.of([*enrolled, noisy, true])
    assert templates.match(noisy.embeddings, lambda _: True) is None
    counted = TemplateSet(templates.commands, spreads=templates.spreads)  # no phrase enrolled
    found = counted.match(noisy.embeddings, lambda _: True)
    assert found is not None and found.take == 2, "counted freely, it would make the match"
    said = stretched(true.embeddings, 1.0)
    surer = templates.match(said, lambda _: True)
    alone = TemplateSet.of(enrolled).match(said, lambda _: True)
    assert surer is not None and alone is not None and surer.take == 3
    assert surer.distance < alone.distance
