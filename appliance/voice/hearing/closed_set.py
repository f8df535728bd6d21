"""The sentences that can be said now: the grammar's templates x the live screen's names.

Like Home Assistant's Speech-to-Phrase, the recognizer is constrained to what the grammar can
act on. The full expansion of the templates is astronomically large ("<click> <named>" alone has
every verb x article x role), so each alternative keeps its first `CHOICES` wordings (the
templates list the commonest first) and optional words are tried both ways; templates with free
text ({text}, {value}) are left out, and what they cover goes to open transcription; but a
number said to a slider ("volume to 80", `NUMBER_INTENTS`) is listed, 0 to 100, for the screen's
sliders, spin buttons and dials only, and a template whose free text is {text} is kept as a
frame, the words around it, filled with the words Whisper heard (`SentenceSet.framed`). Keys
are listed tersely as well (`TERSE_INTENTS`): every key and shortcut once, in its first wording
("press control s"), a letter only with a modifier. A wording kept for one value of a list is
kept for its others ("... to the minimum" as "... to the maximum").
Skeletons (templates with the screen's slots unfilled) are built once per process; the names are
filled in once per screen (`closed_set`, cached on the names).

Each sentence keeps its meaning (the intent and the slot values its words carry), so that the
pipeline can tell a sentence said in full ("tick urgent", which only "... box" or "... button"
can follow) from one that may go on to mean more ("scroll down" -> "scroll down in contacts").
A sentence that another template says with another meaning, in a wording listed or not, has
none ("read message": the element named Message, or the content).
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache

import jellyfish
from hassil import Intents
from hassil.expression import (
    Alternative,
    Expression,
    Group,
    ListReference,
    Permutation,
    RuleReference,
    TextChunk,
)
from hassil.intents import TextSlotList
from hassil.sample import sample_expression
from rapidfuzz import fuzz, process

from appliance.intents.grammar.screen_lists import fixed_lists
from appliance.intents.grammar.templates import load_intents
from appliance.intents.grammar.wording import words

CHOICES = 3
"""Wordings kept per alternative: "(click|press|tap|hit|...)" is said as one of the first few."""
OPTIONAL_CHOICES = 1
"""Optional words are left out or said as their first wording ("[the|a|my]": "", "the")."""
SKELETONS_PER_TEMPLATE = 150
LIST_WORDINGS = 2
"""Wordings kept per value of a fixed list ("up" as "up" or "higher")."""
LIST_VALUES = {"key": 12}
"""Wordings kept of the long lists: the first keys (Return, Escape, Tab, ...)."""
ROLES_SAID = ("button", "box", "check box", "tab", "field")
"""The role words people add to a name ("the send button"), of the grammar's many."""
SCREEN_SLOTS = ("target", "app", "number")
FRAME_SLOT = "text"
"""The free text a frame leaves open ("send {target} a message saying {text}")."""
FRAME_MATCH = 80
"""How closely (rapidfuzz ratio) the words around the free text must spell a frame's: 80 takes
"send grandma message settings" for "send grandma a message saying", not "send" for "tell"."""
NUMBER_INTENTS = ("set_number",)
"""Intents whose free {value} is a number the closed set lists ("volume to 80"), said to the
screen's sliders, spin buttons and dials only."""
TERSE_INTENTS = ("press_key",)
"""Intents also listed tersely, every list value in its first wording ("control s", "press f5"):
the capped product above reaches only the first dozen keys."""
TERSE_PER_TEMPLATE = 5000
NUMBERS = tuple(str(n) for n in range(101)) + tuple(f"{n} percent" for n in range(101))
"""The numbers listed, in digits as Whisper writes them ("80", "80%": `written`)."""
TICKED_INTENTS = ("set_value",)
"""Intents said of what can be ticked ("tick urgent", "turn wifi off"): their {target} is only
the screen's toggles (the planner acts on nothing else), when the screen's roles are known."""
PICKED_INTENTS = ("select", "select_by_verb", "bare_name")
"""Intents that select a list item or tab by its name, and press a button (as the planner reads
them): there "pick send" means what "click send" means."""
PRESSED_INTENT = "activate"
"""What "click" means: the grammar's intent that presses a named element."""
EXTRA = ("yes", "no")
"""Answers to a question, said in its listening window."""
NEAREST_KEPT = 256
"""`nearest` answers kept per screen, for the next time the same words are heard there."""
SCROLLED_INTENT = "scroll"
"""The grammar's intent whose {target} only picks the pane it scrolls."""

Slots = tuple[tuple[str, str], ...]
Meaning = tuple[str, Slots]
"""An intent's name and the slot values a sentence's words carry, sorted (a bare "yes" or "no":
the answer itself, no slots)."""
Said = tuple[str, Slots]
"""Words, and the slot values they carry."""
Frame = tuple[str, str]
"""The words before and after a template's free text ("send grandma a message saying", "")."""


class _FreeText(Exception):
    """The template holds a wildcard: its sentences cannot be listed."""


def _join(parts: Iterable[str]) -> str:
    return " ".join(" ".join(parts).split())


def _commonest_first(parts: list[list[Said]]) -> Iterator[tuple[Said, ...]]:
    """The product of `parts` (each listed commonest first), the fewest departures from the
    commonest wording first: a capped product then keeps "turn the volume up" rather than every
    "turn volume up a bit more" variant."""
    sizes = [len(p) for p in parts]
    if not all(sizes):
        return

    def picks(total: int, i: int) -> Iterator[tuple[int, ...]]:
        if i == len(sizes) - 1:
            if total < sizes[i]:
                yield (total,)
            return
        for k in range(min(total, sizes[i] - 1) + 1):
            for rest in picks(total - k, i + 1):
                yield (k, *rest)

    for total in range(sum(sizes) - len(sizes) + 1):
        for chosen in picks(total, 0):
            yield tuple(p[k] for p, k in zip(parts, chosen, strict=True))


class _Expander:
    def __init__(self, intents: Intents, numbers: bool = False, terse: bool = False,
                 frames: bool = False, wide: bool = False) -> None:
        self.rules = intents.expansion_rules
        # {role}, {key}, {modifier} are given at parse time with the screen's names.
        self.lists = {**intents.slot_lists, **fixed_lists()}
        self.numbers = numbers  # {value} is a number, filled per screen as {number}
        # Every value of every list, each in its first wording, and nothing optional but a
        # verb: the shortest way to say each meaning (`TERSE_INTENTS`).
        self.terse = terse
        # Every wording of every alternative: not listed, only to find what else a listed
        # sentence may mean (`_unlisted_meanings`).
        self.choices: int | None = None if wide else CHOICES
        self.optional_choices: int | None = None if wide else OPTIONAL_CHOICES
        self.frames = frames  # {text} kept as a slot, filled with what Whisper heard

    def expand(self, exp: Expression, limit: int) -> list[Said]:
        if isinstance(exp, TextChunk):
            return [(exp.text, ())]
        if isinstance(exp, RuleReference):
            return self.expand(self.rules[exp.rule_name].expression, limit)
        if isinstance(exp, ListReference):
            return self._list(exp, limit)
        if isinstance(exp, Alternative):
            items = exp.items[:self.choices]
            if self.terse:
                verbs = [i for i in exp.items if _is_rule(i)][:1]
                items = [TextChunk.empty(), *verbs] if exp.is_optional else exp.items[:1]
            elif exp.is_optional:
                # Leaving the optional words out is the commonest way to say it: first, so that
                # a capped product still holds it.
                said = [i for i in exp.items if not (isinstance(i, TextChunk) and i.is_empty)]
                items = [TextChunk.empty(), *said[:self.optional_choices]]
            out: dict[str, Slots] = {}
            for item in items:
                for text, slots in self.expand(item, limit):
                    out.setdefault(text, slots)
            return list(out.items())[:limit]
        if isinstance(exp, Permutation):
            # Said in the order written: the other orders add little but size.
            return self._sequence(exp.items, limit)
        if isinstance(exp, Group):
            return self._sequence(exp.items, limit)
        raise TypeError(exp)

    def _sequence(self, items: Sequence[Expression], limit: int) -> list[Said]:
        parts = [self.expand(item, limit) for item in items]
        ranks = [_wording_ranks(part) for part in parts]
        out: dict[str, Slots] = {}
        for chosen in itertools.islice(_commonest_first(parts), limit):
            for said in _each_meaning(parts, ranks, chosen):
                out.setdefault(_join(t for t, _ in said), tuple(x for _, s in said for x in s))
        return list(out.items())

    def _list(self, ref: ListReference, limit: int) -> list[Said]:
        if ref.list_name in SCREEN_SLOTS:
            return [("{" + ref.list_name + "}", ())]
        if ref.list_name == "value" and self.numbers:
            return [("{number}", ())]
        if ref.list_name == FRAME_SLOT and self.frames:
            return [("{" + FRAME_SLOT + "}", ())]
        slot_list = self.lists.get(ref.list_name)
        if not isinstance(slot_list, TextSlotList):
            raise _FreeText(ref.list_name)
        if ref.list_name == "role":
            # A role word only narrows which element a name means ("send button"): no meaning
            # of its own (a name on screen in two roles is asked about, never guessed). None
            # of ROLES_SAID is a slider's.
            return [] if self.numbers or self.frames else [(r, ()) for r in ROLES_SAID]
        out: list[Said] = []
        seen: set[str] = set()
        for value in slot_list.values:
            carried = ((ref.slot_name, str(value.value_out)),)
            if self.terse and str(value.value_out) in seen:
                continue
            seen.add(str(value.value_out))
            wordings = self.expand(value.text_in, limit)[: 1 if self.terse else LIST_WORDINGS]
            out.extend((text, slots + carried) for text, slots in wordings)
        return out if self.terse else out[: LIST_VALUES.get(ref.list_name, len(out))]


def _each_meaning(parts: list[list[Said]], ranks: list[dict[Said, int]],
                  chosen: tuple[Said, ...]) -> Iterator[tuple[Said, ...]]:
    """`chosen`, and it with each part's value swapped for every other value of the part in the
    same rank of wording: a capped product reaches a list's later values in fewer ways ("set
    the volume to the maximum" kept, "... minimum" not), though people say them alike."""
    yield chosen
    for i, (part, rank, said) in enumerate(zip(parts, ranks, chosen, strict=True)):
        if not said[1] or said[1][-1][0] in LIST_VALUES:  # keys: listed tersely (TERSE_INTENTS)
            continue
        for other in part:
            if other[1] != said[1] and rank[other] == rank[said]:
                yield (*chosen[:i], other, *chosen[i + 1:])


def _wording_ranks(part: list[Said]) -> dict[Said, int]:
    """Each of a part's words' rank among the wordings of its meaning ("max" 0, "maximum" 1)."""
    seen: dict[Slots, int] = {}
    ranks: dict[Said, int] = {}
    for said in part:
        ranks[said] = seen.get(said[1], 0)
        seen[said[1]] = ranks[said] + 1
    return ranks


def _is_rule(exp: Expression) -> bool:
    """A rule said alone ("<press>"), as in an optional verb "[<press>]"."""
    if isinstance(exp, Group) and len(exp.items) == 1:
        return _is_rule(exp.items[0])
    return isinstance(exp, RuleReference)


def _add(out: dict[str, Meaning | None], text: str, meaning: Meaning | None) -> None:
    """`text` with its meaning, or None once it is said alike with two."""
    out[text] = meaning if out.get(text, meaning) == meaning else None


def _expanded(wide: bool = False, only: tuple[str, ...] = ()) -> Iterator[tuple[str, Meaning]]:
    """Every template's listed sentences (`wide`: in every wording) with what each means
    (`only`: these intents' templates)."""
    intents = load_intents()
    terse = _Expander(intents, terse=True)
    for intent in intents.intents.values():
        if only and intent.name not in only:
            continue
        expander = _Expander(intents, numbers=intent.name in NUMBER_INTENTS, wide=wide)
        for block in intent.data:
            fixed = tuple((k, str(v)) for k, v in block.slots.items())
            for sentence in block.sentences:
                try:
                    found = expander.expand(sentence.expression, SKELETONS_PER_TEMPLATE)
                except _FreeText:
                    continue
                if intent.name in TERSE_INTENTS and not wide:
                    found = _distinct([*found, *_no_lone_letters(
                        terse.expand(sentence.expression, TERSE_PER_TEMPLATE))])
                for text, slots in found:
                    if text:
                        yield text, (intent.name, tuple(sorted({*fixed, *slots})))


@cache
def skeletons() -> dict[str, Meaning | None]:
    """Every template's sentences with {target} / {app} / {number} left as slots, and what
    each means (None when two templates say it with different meanings); once per process."""
    out: dict[str, Meaning | None] = {}
    for text, meaning in _expanded():
        _add(out, text, meaning)
    for answer in EXTRA:
        out.setdefault(answer, (answer, ()))
    return out


@cache
def _ticking_skeletons() -> dict[str, Meaning]:
    """The tick templates' sentences in every wording, {target} left a slot ("pick {target}"):
    said of a toggle, the planner ticks it (they prefer toggles) whatever else they could mean."""
    return {text: meaning for text, meaning in _expanded(wide=True, only=TICKED_INTENTS)
            if "{target}" in text}


@cache
def _unlisted_meanings() -> dict[str, Meaning | None]:
    """What sentences without a screen's name mean in every alternative's wordings, listed or
    not ("read message" also reads the content, as the planner takes it); once per process."""
    out: dict[str, Meaning | None] = {}
    for text, meaning in _expanded(wide=True):
        if "{" not in text:
            _add(out, text, meaning)
    return out


@cache
def frame_skeletons() -> tuple[str, ...]:
    """The templates whose only free text is {text}, with it left as a slot ("send {target} a
    message saying {text}"): the words around dictation, which Whisper drops or mishears
    ("send grandma message settings see you soon"); once per process."""
    intents = load_intents()
    expander = _Expander(intents, frames=True)
    out: dict[str, None] = {}
    for intent in intents.intents.values():
        for block in intent.data:
            for sentence in block.sentences:
                try:
                    found = expander.expand(sentence.expression, SKELETONS_PER_TEMPLATE)
                except _FreeText:
                    continue
                out.update((text, None) for text, _slots in found
                           if text.count("{" + FRAME_SLOT + "}") == 1)
    return tuple(out)


def _no_lone_letters(found: list[Said]) -> list[Said]:
    """Without a letter or digit pressed alone ("press s"): scored near "press send", a short
    sentence can win on its likelier tokens, and nobody presses one key of a word by voice."""
    return [(text, slots) for text, slots in found
            if len(dict(slots).get("key", "--")) > 1 or "mod1" in dict(slots)]


def _distinct(found: list[Said]) -> list[Said]:
    """Without sentences naming one value twice ("control control s": two modifiers that are
    one key, which the planner reads as one)."""
    return [(text, slots) for text, slots in found if len({v for _k, v in slots}) == len(slots)]


@lru_cache(maxsize=65536)
def _sound(word: str) -> str:
    return str(jellyfish.metaphone(word)) or word


def sounds(text: str) -> str:
    """How `text` sounds, roughly (metaphone per word): "take urgent" and "tick urgent" agree."""
    return " ".join(_sound(w) for w in words(text))


Named = tuple[str, str]
"""A value of one of the grammar's fixed lists, with the list's name: ("extreme", "min")."""


@cache
def _value_wordings() -> dict[str, frozenset[Named]]:
    """Every wording of the grammar's fixed lists' values ("minimum", "all the way down",
    "control"), and the values it names."""
    intents = load_intents()
    found: dict[str, set[Named]] = {}
    for name, slot_list in {**intents.slot_lists, **fixed_lists()}.items():
        if name in SCREEN_SLOTS or name == "role" or not isinstance(slot_list, TextSlotList):
            continue
        for value in slot_list.values:
            if str(value.value_out):  # "" ("message" of "the first message"): no meaning
                for wording in sample_expression(value.text_in):
                    found.setdefault(" ".join(words(wording)), set()).add(
                        (name, str(value.value_out)))
    return {w: frozenset(v) for w, v in found.items()}


@cache
def _longest_wording() -> int:
    return max(len(w.split()) for w in _value_wordings())


def values_named(said: Sequence[str]) -> set[Named]:
    """The fixed lists' values that words name, wherever they stand (("extreme", "min") of "to
    the minimum"; ("modifier", "ctrl") and ("key", "s") of Whisper's "Ctrl+S")."""
    wordings = _value_wordings()
    longest = _longest_wording()
    spans = (" ".join(said[i:i + n]) for i in range(len(said)) for n in range(1, longest + 1))
    return {v for span in spans for v in wordings.get(span, ())}


@dataclass(frozen=True)
class SentenceSet:
    """The sentences of one screen (and how each sounds), and how long they took to build."""

    sentences: tuple[str, ...]
    sounds: tuple[str, ...]
    build_ms: float
    meanings: tuple[Meaning | None, ...]
    """Each sentence's, in the same order (None: said alike with two meanings)."""
    frames: tuple[Frame, ...] = ()
    """The words before and after the free text of each dictation template, names filled."""

    def nearest(self, text: str, limit: int) -> list[str]:
        """About `limit` sentences near `text`, half by spelling and half by sound (a cheap
        first pass: Whisper misspells what it half heard, and mishears alike-sounding words)."""
        query = " ".join(words(text))
        kept = self._nearest.get((query, limit))
        if kept is not None:
            return list(kept)
        half = max(1, limit // 2)
        by_text = process.extract(query, self.sentences, scorer=fuzz.ratio, limit=half)
        by_sound = process.extract(sounds(query), self.sounds, scorer=fuzz.ratio, limit=limit)
        found = [i for _s, _score, i in by_text]
        for _s, _score, i in by_sound:
            if len(found) >= limit:
                break
            if i not in found:
                found.append(i)
        if len(self._nearest) >= NEAREST_KEPT:
            self._nearest.clear()
        near = [self.sentences[i] for i in found]
        self._nearest[(query, limit)] = tuple(near)
        return near

    def framed(self, text: str, limit: int) -> list[str]:
        """At most `limit` dictation sentences near `text`, its middle words as the free text:
        "send grandma a message saying see you soon" of "send grandma message settings see you
        soon". The words around the text are matched where they would stand (a frame's word
        counts, give or take two before and one after)."""
        said = words(text)
        n = len(said)
        found: list[tuple[float, str]] = []
        for (before_n, after_n), group in self._frame_groups.items():
            for i in range(max(1, before_n - 2), min(n - 1, before_n + 2) + 1):
                ends = [n] if not after_n else range(max(i + 1, n - after_n - 1),
                                                     min(n - 1, n - after_n + 1) + 1)
                for j in ends:
                    query = " ".join(said[:i]) + " | " + " ".join(said[j:])
                    for _s, score, k in process.extract(
                            query, group, scorer=fuzz.ratio, limit=limit, score_cutoff=FRAME_MATCH):
                        before, after = group[k].split(" | ")
                        found.append((score, _join((before, *said[i:j], after))))
        found.sort(key=lambda f: -f[0])
        return list(dict.fromkeys(sentence for _score, sentence in found))[:limit]

    @cached_property
    def _frame_groups(self) -> dict[tuple[int, int], list[str]]:
        """The frames, "before | after", by how many words stand before and after the text."""
        groups: dict[tuple[int, int], list[str]] = {}
        for before, after in self.frames:
            key = (len(before.split()), len(after.split()))
            groups.setdefault(key, []).append(f"{before} | {after}")
        return groups

    def __contains__(self, text: str) -> bool:
        return " ".join(words(text)) in self._index

    def said_in_full(self, text: str) -> bool:
        """A sentence of the set that no other can go on from with another meaning: the
        person need not be waited for ("tick urgent" may go on only as "... box"; "scroll
        down" may go on as "scroll down in contacts")."""
        said = " ".join(words(text))
        meaning = self._meaning.get(said)
        if meaning is None:
            return False
        order = self._order
        start = bisect.bisect_left(order, (said + " ", -1))
        followers = itertools.takewhile(lambda o: o[0].startswith(said + " "), order[start:])
        return all(self.meanings[i] == meaning for _text, i in followers)

    def runs_on(self, text: str) -> bool:
        """Whether a sentence of the set begins with these letters, goes on within the last
        word and means something else ("seven" in "seventeen", not "down" in "scroll
        downwards"): a pause there may be inside that word."""
        said = " ".join(words(text))
        meaning = self._meaning.get(said)
        order = self._order
        # After the sentence itself and those going on with a space come those going on in-word.
        start = bisect.bisect_left(order, (said + chr(ord(" ") + 1), -1))
        in_word = itertools.takewhile(lambda o: o[0].startswith(said), order[start:])
        # What matters is the word finished: "scroll downwards in contacts" is a follower of
        # "scroll downwards", which `said_in_full` weighs as it weighs "scroll down"'s.
        finished = {said + text[len(said):].split(" ")[0] for text, _i in in_word}
        return meaning is None or any(self._meaning.get(word) != meaning for word in finished)

    def intent_of(self, text: str) -> str | None:
        """The grammar's intent a sentence of the set asks for (None: not one, or two)."""
        meaning = self._meaning.get(" ".join(words(text)))
        return meaning[0] if meaning is not None else None

    def means_alike(self, one: str, other: str) -> bool:
        """Two sentences of the set that ask for the same thing ("select doctor", "select the
        doctor")."""
        meaning = self._meaning.get(" ".join(words(one)))
        return meaning is not None and meaning == self._meaning.get(" ".join(words(other)))

    def number(self, text: str) -> str | None:
        """The number a sentence says to a slider ("80" of "volume to 80"), else None."""
        meaning = self._meaning.get(" ".join(words(text)))
        if meaning is None or meaning[0] not in NUMBER_INTENTS:
            return None
        return dict(meaning[1]).get("value")

    def values(self, text: str) -> set[Named]:
        """The values of the grammar's fixed lists a sentence's words name and mean (ctrl and s
        of "press control s", min of "volume to the minimum"; none of "copy that")."""
        meaning = self._meaning.get(" ".join(words(text)))
        if meaning is None:
            return set()
        meant = {v for _slot, v in meaning[1]}
        return {(name, v) for name, v in values_named(words(text)) if v in meant}

    def keys_said(self, text: str) -> set[str]:
        """The words naming a key by a letter or digit ("c" of "press control c", "f5" of
        "press f5"): alike-sounding ("c", "z", "t"), so never taken through the quick window."""
        meaning = self._meaning.get(" ".join(words(text)))
        if meaning is None or meaning[0] != "press_key":
            return set()
        return {w for w in words(text) if len(w) == 1 or any(c.isdigit() for c in w)}

    def prepare(self) -> None:
        """Build now what `said_in_full` and `framed` read (about 50 ms on a big screen)."""
        _ = self._meaning, self._order, self._frame_groups

    @cached_property
    def _meaning(self) -> dict[str, Meaning | None]:
        return dict(zip(self.sentences, self.meanings, strict=True))

    @cached_property
    def _order(self) -> list[tuple[str, int]]:
        """The sentences sorted, with their places: a sentence's followers are one run."""
        return sorted((s, i) for i, s in enumerate(self.sentences))

    @cached_property
    def _index(self) -> frozenset[str]:
        return frozenset(self.sentences)

    @cached_property
    def _nearest(self) -> dict[tuple[str, int], tuple[str, ...]]:
        """`nearest`'s answers so far: the person says the same few commands on one screen."""
        return {}


def _spoken(name: str) -> str:
    return " ".join(words(name))


def _said_names(names: Iterable[str]) -> list[str]:
    """The names as they are said, each once, in order."""
    return list(dict.fromkeys(n for n in map(_spoken, names) if n))


@lru_cache(maxsize=4)
def closed_set(
    targets: tuple[str, ...], apps: tuple[str, ...], numbered: tuple[str, ...] = (),
    percent_alike: tuple[str, ...] = (), toggles: tuple[str, ...] | None = None,
    selectable: tuple[str, ...] | None = None, panes: int | None = None,
) -> SentenceSet:
    """The sentences that can be said on a screen with these names (`numbered`: the elements
    a number may be said to; `percent_alike`: those of them where "80 percent" is 80;
    `toggles`, `selectable`: those that can be ticked, or selected, None if not known; `panes`:
    how many scroll panes, None if not known): rebuilt only when they change (the cache is
    keyed on them)."""
    start = time.monotonic()
    fills = {"target": _said_names(targets), "app": _said_names(apps), "number": list(NUMBERS)}
    # A number is said only to what takes one.
    number_fills = {**fills, "target": _said_names(numbered)}
    # "tick send" of a button is never acted on, and would sit near "click send".
    tick_fills = fills if toggles is None else {**fills, "target": _said_names(toggles)}
    alike = {_spoken(n) for n in percent_alike}
    # Neither selected nor ticked ("select urgent" ticks a check box: the grammar's tick words).
    pressed = None if selectable is None or toggles is None else (
        set(fills["target"]) - set(map(_spoken, (*selectable, *toggles))))
    ticked = set(tick_fills["target"]) if toggles is not None else set()
    ticking = _ticking_skeletons()
    one_pane = panes is not None and panes <= 1
    out: dict[str, Meaning | None] = {}
    for skeleton, meaning in skeletons().items():
        slots = _slots_in(skeleton)
        if not slots:
            _add(out, skeleton, meaning)
            continue
        filling = (number_fills if "number" in slots
                   else tick_fills if meaning is not None and meaning[0] in TICKED_INTENTS
                   else fills)
        for values in itertools.product(*(filling[s] for s in slots)):
            sentence = _fill(skeleton, slots, values)
            carried = (("value" if s == "number" else s, v)
                       for s, v in zip(slots, values, strict=True))
            if "number" in slots and dict(zip(slots, values, strict=True))["target"] in alike:
                # "volume to 80" means "volume to 80 percent" there, so it is said in full.
                carried = ((k, v.removesuffix(" percent")) for k, v in carried)
            filled = None if meaning is None else (
                meaning[0], tuple(sorted({*meaning[1], *carried})))
            if (filled is not None and pressed is not None and filled[0] in PICKED_INTENTS
                    and dict(filled[1]).get("target") in pressed):
                filled = (PRESSED_INTENT, filled[1])
            elif (filled is not None and filled[0] in PICKED_INTENTS and skeleton in ticking
                    and dict(filled[1]).get("target") in ticked):
                # "pick high contrast" ticks the check box, as "tick high contrast" does.
                tick = ticking[skeleton]
                filled = (tick[0], tuple(sorted({*tick[1], *dict(filled[1]).items()})))
            elif filled is not None and filled[0] == SCROLLED_INTENT and one_pane:
                # "scroll down in contacts" scrolls the only pane there is, as "scroll down" does.
                filled = (filled[0], tuple(kv for kv in filled[1] if kv[0] != "target"))
            _add(out, sentence, filled)
    # A name filled in can make a sentence another template says with another meaning.
    unlisted = _unlisted_meanings()
    for text, meaning in out.items():
        if text in unlisted and unlisted[text] != meaning:
            out[text] = None
    frames: dict[Frame, None] = {}
    for skeleton in frame_skeletons():
        slots = _slots_in(skeleton)
        for values in itertools.product(*(fills[s] for s in slots)):
            before, _, after = _fill(skeleton, slots, values).partition("{" + FRAME_SLOT + "}")
            frames[before.strip(), after.strip()] = None
    said = tuple(out)
    return SentenceSet(said, tuple(map(sounds, said)), (time.monotonic() - start) * 1000,
                       tuple(out.values()), tuple(frames))


def _slots_in(skeleton: str) -> list[str]:
    return [s for s in SCREEN_SLOTS if "{" + s + "}" in skeleton]


def _fill(skeleton: str, slots: Sequence[str], values: Sequence[str]) -> str:
    for slot, value in zip(slots, values, strict=True):
        skeleton = skeleton.replace("{" + slot + "}", value, 1)
    return skeleton
