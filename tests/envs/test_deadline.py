"""The per-call deadline: work that checks it stops once the call's time is up."""

from __future__ import annotations

import threading
import time

import pytest

from eviseek.envs import deadline
from eviseek.envs.deadline import DeadlineExceeded


def test_no_deadline_outside_a_call() -> None:
    deadline.check()  # nothing raised


def test_check_raises_past_the_deadline_and_only_on_its_thread() -> None:
    seen: list[bool] = []
    with deadline.running(0.05):
        deadline.check()
        other = threading.Thread(target=lambda: seen.append(_raises()))
        time.sleep(0.08)
        other.start()
        other.join()
        with pytest.raises(DeadlineExceeded):
            deadline.check()
    deadline.check()  # cleared on the way out
    assert seen == [False]


def test_a_nested_deadline_cannot_extend_the_outer_one() -> None:
    with deadline.running(0.05), deadline.running(60):
        time.sleep(0.08)
        with pytest.raises(DeadlineExceeded):
            deadline.check()


def _raises() -> bool:
    try:
        deadline.check()
    except DeadlineExceeded:
        return True
    return False
