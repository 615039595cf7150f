"""Answer normalisation and scoring on literal replies."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eviseek.answers import (
    match_option,
    normalize_answer,
    parse_integer,
    parse_sequence,
    parse_yes_no,
    score_answer,
)
from eviseek.types import AnswerContract, Question

OPTIONS = ["red cube", "blue cylinder", "light blue cube"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("red cube", "red cube"),
        ("Red_Cube.", "red cube"),
        ("B", "blue cylinder"),
        ("(B)", "blue cylinder"),
        ("b) blue cylinder", "blue cylinder"),
        ("Answer: C", "light blue cube"),
        ("<answer>A</answer>", "red cube"),
        ("I think the blue cylinder is taller.", "blue cylinder"),
        ("the light blue cube", "light blue cube"),
        ("B) red cube", None),  # the letter and the text disagree
        ("red cube or blue cylinder", None),
        ("D", None),
        ("", None),
    ],
)
def test_match_option(reply: str, expected: str | None) -> None:
    assert match_option(reply, OPTIONS) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("Yes.", "yes"), ("no", "no"), ("No, it is not visible", "no"), ("maybe", None), ("True", "yes")],
)
def test_yes_no(reply: str, expected: str | None) -> None:
    assert parse_yes_no(reply) == expected


def test_integer_and_sequence() -> None:
    assert parse_integer("There are 4 apples") == 4
    assert parse_integer("three") == 3
    assert parse_integer("unclear") is None
    assert parse_sequence("red | blue | green") == ["red", "blue", "green"]
    assert parse_sequence("red, blue, green") == ["red", "blue", "green"]
    assert parse_sequence("red_cube -> Blue Cube", ["red_cube", "blue_cube"]) == ["red_cube", "blue_cube"]
    assert parse_sequence("red, purple", ["red_cube", "blue_cube"]) is None


def test_score_counts_get_soft_credit() -> None:
    q = Question(id="c", text="How many?", contract=AnswerContract(kind="integer"), ground_truth="5")
    assert score_answer(q, "5").correct
    off_by_one = score_answer(q, "4")
    assert not off_by_one.correct and off_by_one.score == pytest.approx(2 / 3)
    assert score_answer(q, "nothing").score == 0.0


def test_sequence_accepts_any_listed_order_and_comma_form() -> None:
    q = Question(
        id="s",
        text="Order bottom to top",
        contract=AnswerContract(kind="sequence", options=["red_cube", "blue_cube", "green_cube"]),
        ground_truth=["red_cube|blue_cube|green_cube", "blue_cube|red_cube|green_cube"],
    )
    assert score_answer(q, "blue cube, red cube, green cube").correct
    assert score_answer(q, "red_cube|blue_cube|green_cube").correct
    assert not score_answer(q, "green_cube, blue_cube, red_cube").correct


def test_missing_answer_is_incorrect() -> None:
    q = Question(id="o", text="?", contract=AnswerContract(options=OPTIONS), ground_truth="red cube")
    assert score_answer(q, None) == score_answer(q, "zzz")
    assert not score_answer(q, None).correct


@given(st.text(max_size=200))
def test_normalizers_never_raise(text: str) -> None:
    for contract in (
        AnswerContract(kind="option", options=OPTIONS),
        AnswerContract(kind="yes_no"),
        AnswerContract(kind="integer"),
        AnswerContract(kind="sequence", options=OPTIONS),
        AnswerContract(kind="text"),
    ):
        normalize_answer(text, contract)
