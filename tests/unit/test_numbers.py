"""Spoken numbers (appliance.words.numbers): words -> digits, digits -> words (unicode-rbnf)."""

from __future__ import annotations

import pytest

from appliance.words.numbers import digits_in, parse_number, spoken_digits


@pytest.mark.parametrize(
    ("said", "number"),
    [
        ("seventy", 70), ("twenty five", 25), ("twenty-five", 25), ("one hundred", 100),
        ("a hundred", 100), ("one hundred and five", 105), ("four", 4), ("zero", 0),
        ("nineteen", 19), ("fifty percent", 50), ("fifty per cent", 50), ("50%", 50),
        ("three point five", 3.5), ("point five", 0.5), ("two point two five", 2.25),
        ("two thousand and twenty four", 2024), ("minus five", -5), ("70", 70), ("3.5", 3.5),
        ("Seventy", 70), ("half", 0.5),
    ],
)
def test_parse_number(said: str, number: float) -> None:
    assert parse_number(said) == pytest.approx(number)


@pytest.mark.parametrize(
    "said", ["", "hello", "twenty twenty", "five hundred hundred", "a", "point", "percent",
             "three point", "seventy cats"],
)
def test_not_a_number(said: str) -> None:
    assert parse_number(said) is None


@pytest.mark.parametrize(
    ("phrase", "normalised"),
    [
        ("radio four", "radio 4"),
        ("channel twenty one", "channel 21"),
        ("one hundred and five dalmatians", "105 dalmatians"),
        ("version two point five", "version 2.5"),
        ("click a button", "click a button"),
        ("four five six", "4 5 6"),  # digits said one by one stay apart
        ("nothing here", "nothing here"),
    ],
)
def test_digits_in(phrase: str, normalised: str) -> None:
    assert digits_in(phrase) == normalised


def test_spoken_digits_uses_rbnf_words() -> None:
    assert spoken_digits("Radio 4") == "Radio four"
    assert spoken_digits("Channel 21") == "Channel twenty one"
    assert spoken_digits("F4") == "F four"
    assert spoken_digits("No digits") == "No digits"


def test_round_trip_for_names() -> None:
    for n in (0, 7, 13, 40, 99, 100, 101, 250, 999, 1000, 2024):
        assert digits_in(spoken_digits(f"Item {n}")) == f"Item {n}"


def test_digits_rbnf_cannot_say_stay_digits() -> None:
    # A browser's tab shows "127.0.0.1:41423": a reading of it must not stop the turn.
    assert "41423" not in spoken_digits("127.0.0.1:41423")
