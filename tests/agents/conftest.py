"""Fixtures for agent tests: questions and the grid world."""

from __future__ import annotations

import pytest

from eviseek.types import AnswerContract, Question
from tests.agents.gridworld import GridWorld


@pytest.fixture
def question() -> Question:
    return Question(
        id="grid-1",
        text="Is the red cube to the left of the blue box?",
        contract=AnswerContract(kind="option", options=["yes", "no"]),
        guidance="Look at both objects from above.",
        ground_truth="yes",
    )


@pytest.fixture
def grid() -> GridWorld:
    return GridWorld()
