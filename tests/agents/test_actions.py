"""Reading model-written atomic actions against the legal action list."""

from __future__ import annotations

import pytest

from eviseek.agents.actions import describe_action, parse_action
from eviseek.types import Action, ActionSpec

LEGAL = [
    ActionSpec(name="move_forward", magnitude=0.25),
    ActionSpec(name="turn_left", magnitude=15),
    ActionSpec(
        name="pick_up", kind="manipulation", params=["object"], choices={"object": ["red_cube", "blue_box"]}
    ),
    ActionSpec(
        name="put_on",
        kind="manipulation",
        params=["object", "target"],
        choices={"object": ["red_cube", "blue_box"], "target": ["red_cube", "blue_box"]},
    ),
]


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("move_forward", Action(name="move_forward")),
        ("Move Forward", Action(name="move_forward")),
        ("`turn_left`", Action(name="turn_left")),
        ("pick_up red_cube", Action(name="pick_up", args={"object": "red_cube"})),
        ("pick up the red cube", Action(name="pick_up", args={"object": "red_cube"})),
        (
            "put_on(object=blue_box, target=red_cube)",
            Action(name="put_on", args={"object": "blue_box", "target": "red_cube"}),
        ),
        (
            "put_on(blue_box, red_cube)",
            Action(name="put_on", args={"object": "blue_box", "target": "red_cube"}),
        ),
        (
            "put blue box on top of red cube",
            Action(name="put_on", args={"object": "blue_box", "target": "red_cube"}),
        ),
        (
            "put on blue box on top of red cube",
            Action(name="put_on", args={"object": "blue_box", "target": "red_cube"}),
        ),
        (
            {"name": "put_on", "args": {"object": "Red Cube", "target": "blue_box"}},
            Action(name="put_on", args={"object": "red_cube", "target": "blue_box"}),
        ),
        ({"action": "pick_up", "object": "blue_box"}, Action(name="pick_up", args={"object": "blue_box"})),
    ],
)
def test_written_forms_map_to_legal_actions(written: object, expected: Action) -> None:
    action, why = parse_action(written, LEGAL)
    assert why is None
    assert action == expected


@pytest.mark.parametrize("written", ["fly_away", "", None, 7, {"name": "jump"}, "teleport(x=1)"])
def test_unknown_actions_are_reported(written: object) -> None:
    action, why = parse_action(written, LEGAL)
    assert action is None and why


def test_wrong_argument_passes_through_for_the_env_to_explain() -> None:
    action, why = parse_action("pick_up green_ball", LEGAL)
    assert why is None and action == Action(name="pick_up", args={"object": "green_ball"})


def test_description_lists_legal_choices() -> None:
    assert describe_action(LEGAL[1]) == "turn_left: step 15 deg"
    assert "object in {red_cube, blue_box}" in describe_action(LEGAL[2])
