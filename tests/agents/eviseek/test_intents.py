"""Intent compilation (paper Table 8), the offer derived from legal actions, and budget clamps."""

from __future__ import annotations

import pytest

from eviseek.agents.eviseek.intents import IntentLibrary
from tests.agents.gridworld import GridWorld


def names(actions: list) -> list[str]:
    return [a.name for a in actions]


@pytest.fixture
def full() -> IntentLibrary:
    return IntentLibrary(GridWorld().legal_actions())


@pytest.fixture
def nav() -> IntentLibrary:
    return IntentLibrary(GridWorld(navigation_only=True).legal_actions())


def test_full_interface_offers_every_viewpoint_intent_and_manipulations(full: IntentLibrary) -> None:
    assert full.names() == [
        "FACE",
        "APPROACH",
        "GOTO",
        "SWEEP",
        "ORBIT",
        "RISE_TOPDOWN",
        "RETREAT_WIDE",
        "pick_up",
        "put_on",
    ]


def test_navigation_only_interface_drops_intents_whose_primitives_are_missing(nav: IntentLibrary) -> None:
    assert nav.names() == ["FACE", "APPROACH", "GOTO", "SWEEP"]
    compiled, why = nav.compile("ORBIT", {"target": "sofa"}, remaining=30)
    assert compiled is None and "unknown intent 'ORBIT'" in (why or "")
    # SWEEP has no tilt prefix on offer and drops it if asked.
    sweep = next(s for s in nav.offered() if s.name == "SWEEP")
    assert "turn_down" not in sweep.compiles_to
    compiled, _ = nav.compile("SWEEP", {"direction": "right", "turns": 2, "tilt_down": True}, remaining=30)
    assert compiled is not None and names(compiled.actions) == ["turn_right", "turn_right"]
    assert any("tilt_down dropped" in n for n in compiled.notes)


def test_turn_counts_adapt_to_the_turn_quantum(full: IntentLibrary, nav: IntentLibrary) -> None:
    fifteen, _ = full.compile("FACE", {"direction": "right", "degrees": 90}, remaining=30)
    thirty, _ = nav.compile("FACE", {"direction": "right", "degrees": 90}, remaining=30)
    assert fifteen is not None and thirty is not None
    assert names(fifteen.actions) == ["turn_right"] * 6
    assert names(thirty.actions) == ["turn_right"] * 3


def test_goto_caps_are_longer_on_navigation_only_interfaces(full: IntentLibrary, nav: IntentLibrary) -> None:
    short, _ = full.compile("GOTO", {"direction": "left", "degrees": 30, "steps": 20}, remaining=30)
    long, _ = nav.compile("GOTO", {"direction": "left", "degrees": 30, "steps": 20}, remaining=30)
    assert short is not None and long is not None
    assert names(short.actions) == ["turn_left"] * 2 + ["move_forward"] * 6
    assert names(long.actions) == ["turn_left"] + ["move_forward"] * 12
    assert any("clamped" in n for n in short.notes)


@pytest.mark.parametrize(
    ("intent", "args", "expected"),
    [
        ("RISE_TOPDOWN", {}, ["move_up"] * 3 + ["turn_down"] * 3),
        ("rise-topdown", {"degrees": 90}, ["move_up"] * 3 + ["turn_down"] * 6),
        ("APPROACH", {"steps": 3}, ["move_forward"] * 3),
        ("RETREAT_WIDE", {"steps": 9}, ["move_backward"] * 4),
        ("ORBIT", {"direction": "right", "steps": 2}, ["move_right", "turn_left"] * 2),
        ("ORBIT", {"direction": "left", "steps": 1}, ["move_left", "turn_right"]),
        (
            "SWEEP",
            {"direction": "left", "turns": 2, "tilt_down": "true"},
            ["turn_down", "turn_left", "turn_left"],
        ),
        ("GOTO", {"steps": 2}, ["move_forward"] * 2),
        ("pick_up", {"object": "red cube"}, ["pick_up"]),
    ],
)
def test_table8_compilations(full: IntentLibrary, intent: str, args: dict, expected: list[str]) -> None:
    compiled, why = full.compile(intent, args, remaining=30)
    assert why is None and compiled is not None
    assert names(compiled.actions) == expected


def test_tracking_intents_need_a_target(full: IntentLibrary) -> None:
    with_target, _ = full.compile("APPROACH", {"steps": 2}, target="red cube", remaining=30)
    without, _ = full.compile("APPROACH", {"steps": 2}, remaining=30)
    sweep, _ = full.compile("SWEEP", {}, target="red cube", remaining=30)
    assert with_target is not None and with_target.tracking
    assert without is not None and not without.tracking
    assert sweep is not None and not sweep.tracking


def test_sequences_are_clamped_to_the_remaining_budget(full: IntentLibrary) -> None:
    compiled, _ = full.compile("RISE_TOPDOWN", {}, remaining=4)
    assert compiled is not None
    assert names(compiled.actions) == ["move_up"] * 3 + ["turn_down"]
    assert compiled.requested == 6 and compiled.budget_clamped


@pytest.mark.parametrize(
    ("intent", "args", "message"),
    [
        ("TELEPORT", {}, "unknown intent"),
        ("FACE", {"direction": "north"}, "direction"),
        ("pick_up", {}, "needs 'object'"),
        ("put_on", {"object": "red_cube", "target": "moon"}, "not legal"),
    ],
)
def test_model_mistakes_are_reported_not_raised(
    full: IntentLibrary, intent: str, args: dict, message: str
) -> None:
    compiled, why = full.compile(intent, args, remaining=30)
    assert compiled is None and message in (why or "")


def test_atomic_only_library_offers_primitives(full: IntentLibrary) -> None:
    atomic = IntentLibrary(GridWorld().legal_actions(), atomic_only=True)
    assert "SWEEP" not in atomic.names() and "move_forward" in atomic.names()
    compiled, _ = atomic.compile("turn_left", {}, remaining=30)
    assert compiled is not None and names(compiled.actions) == ["turn_left"]
