"""The reference policy's dead-reckoned walk through a house: doorways placed from pixels, the
room underfoot from the walk so far, and legs that pass through a doorway's opening."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eviseek.envs.house import HouseEnv
from eviseek.envs.house.questions import build_question
from eviseek.envs.house.spec import HouseSpec
from eviseek.models.reference import house, house_walk, navigate
from eviseek.models.reference.house_walk import Door, Pose2
from eviseek.models.reference.task import read_task
from eviseek.models.reference.vision import analyse, analyse_array
from eviseek.types import Action


def test_ground_points_do_not_depend_on_the_frame_size() -> None:
    # 320x240 keeps the 90-degree horizontal field: its row 180 and 512x512's row 352 look
    # equally far below the horizon (60 and 96 px under it, focal lengths 160 and 256).
    c = house_walk.ground(352 - 0.5, 512 * 0.2 - 0.5, 512, 512)
    d = house_walk.ground(180 - 0.5, 320 * 0.2 - 0.5, 320, 240)
    assert c is not None and d is not None
    assert c == pytest.approx(d, rel=1e-9)
    assert house_walk.ground(256, 100, 512, 512) is None  # the horizon: no ground
    # The bottom edge of a level camera 1.5 m up with a 90-degree field sees the floor 1.5 m out.
    assert house_walk.nearest_ground_m(512, 512) == pytest.approx(1.5, abs=0.01)
    assert house_walk.nearest_ground_m(240, 320) == pytest.approx(2.0, abs=0.02)


def _to_world(spec: HouseSpec, x: float, y: float) -> tuple[float, float]:
    """A point of the agent's own frame (start at 0,0 facing +y) in the house's frame."""
    st = spec.start
    yaw = math.radians(st.yaw)
    return st.x + math.sin(yaw) * x + math.cos(yaw) * y, st.y - math.cos(yaw) * x + math.sin(yaw) * y


@pytest.mark.serial
def test_doorways_are_placed_where_the_house_has_them() -> None:
    """Doorways read from rendered 512x512 frames of a turn round at the start land within a
    few centimetres of the house's doorways (checked against the spec, which the policy never
    reads), with a through-heading square to the doorway's wall. Starts of ``house:test`` are
    taken in turn until at least ten views have shown a doorway (seven views of each turn)."""
    env = HouseEnv(width=512, height=512)
    errors: list[float] = []
    square = 0
    try:
        for kind, idx in [(k, i) for i in range(4) for k in ("existence", "attribute", "counting", "object")]:
            if len(errors) >= 10:
                break
            q = build_question(kind, 4000, idx)
            spec = HouseSpec.from_question(q.scene)
            here = spec.room_at(spec.start.x, spec.start.y)
            assert here is not None
            obs, _ = env.reset(options={"question": q})
            found: dict[frozenset[str], Door] = {}
            for k in range(7):
                view = analyse(obs.image)
                pose = Pose2(0.0, 0.0, 30.0 * k)
                for other in house.read_view(view).rooms:
                    door = house_walk.door_in_view(view, pose, here, other) if other != here else None
                    if door is None:
                        continue
                    found[door.rooms] = door
                    wx, wy = _to_world(spec, door.x, door.y)
                    true = [d for d in spec.doors if frozenset(d.rooms) == door.rooms]
                    assert true, f"{sorted(door.rooms)} is no doorway of {q.id}"
                    errors.append(min(math.hypot(wx - d.centre[0], wy - d.centre[1]) for d in true))
                obs = env.step(Action(name="turn_left")).observation
            for door in house_walk.square_up(found).values():
                (match,) = [d for d in spec.doors if frozenset(d.rooms) == door.rooms]
                heading = (spec.start.yaw + door.through) % 180
                square += heading == (0.0 if match.axis == "y" else 90.0)
    finally:
        env.close()
    assert len(errors) >= 10
    assert sorted(errors)[len(errors) // 2] < 0.1
    assert max(errors) < 0.5
    assert square >= 3


def test_the_room_underfoot_changes_only_past_the_crossing() -> None:
    line = (
        "GOTO {'direction': 'ahead', 'steps': 8, 'at': '+0.00,+0.00', 'in': 'hallway', "
        "'door': 'hallway/kitchen', 'enter': 'kitchen', 'cross': 1.0}: 8 action(s); kept: in the kitchen"
    )
    # Quarter-turn sweeps at the start: by a doorway, one side shows mostly the kitchen's floor.
    sweeps = [
        f"SWEEP {{'direction': 'left', 'turns': 3, 'saw': '{saw}'}}: 3 action(s); kept: in the hallway"
        for saw in ("hallway:0.80", "kitchen:0.90,hallway:0.05", "hallway:0.70", "hallway:0.40")
    ]
    mem = house_walk.recall([*sweeps, line])
    assert mem.start == "hallway"
    # Still short of the threshold (the floor ahead already shows the kitchen): the hallway.
    assert house_walk.room_now(mem, Pose2(0.0, 1.0, 0.0)) == "hallway"
    assert house_walk.room_now(mem, Pose2(0.0, 2.0, 0.0)) == "kitchen"
    # Blocked on the way: the last line says so and the walk ended short of the crossing.
    blocked = line.replace("kept: in the kitchen", "outcome: move_forward failed: blocked by a wall")
    mem = house_walk.recall([*sweeps, blocked])
    assert mem.last_failed and mem.moves[-1].failed
    assert house_walk.room_now(mem, Pose2(0.0, 0.5, 0.0)) == "hallway"
    # Before any walk, the room the first sweeps showed most.
    assert house_walk.room_now(house_walk.recall(sweeps), Pose2(0.0, 0.0, 0.0)) == "hallway"
    assert house_walk.room_now(house_walk.recall(sweeps[1:2]), Pose2(0.0, 0.0, 0.0)) == "kitchen"


def test_doorway_records_read_back() -> None:
    door = Door(frozenset(("kitchen", "living room")), -1.25, 3.5, -90.0)
    again = house_walk.parse_door(door.text())
    assert again == door
    assert house_walk.parse_door("kitchen/garage@+1.00,+2.00>90") is None  # no such room type
    assert house_walk.parse_door("kitchen/kitchen@+1.00,+2.00>90") is None


def _walk(pose: Pose2, leg: house_walk.Leg) -> tuple[Pose2, list[tuple[float, float]]]:
    yaw = house_walk.wrap(pose.yaw + leg.turn)
    fx, fy = house_walk.forward(yaw)
    pts = [
        (pose.x + fx * house_walk.STEP_M * i, pose.y + fy * house_walk.STEP_M * i)
        for i in range(leg.steps + 1)
    ]
    return Pose2(pts[-1][0], pts[-1][1], yaw), pts


@pytest.mark.parametrize("through", [0.0, 90.0, -150.0])
def test_legs_reach_the_doorway_square_and_pass_through_its_opening(through: float) -> None:
    """From anywhere on the near side, at most three legs (whole 30-degree turns, 0.25 m steps)
    bring the body through the 1 m opening: where the last leg crosses the threshold it is
    within 0.3 m of the doorway's centre, and it ends past it."""
    door = Door(frozenset(("hallway", "kitchen")), 0.0, 0.0, through)
    nx, ny = house_walk.forward(through)
    checked = 0
    for dist in (1.2, 2.0, 3.5):
        for side in range(-6, 7):
            # A start on the near side, up to 80 degrees off the line through the doorway.
            ang = math.radians(through + 180 + side * 13)
            start = Pose2(-math.sin(ang) * dist, math.cos(ang) * dist, 30.0 * (side % 12))
            if (start.x * nx + start.y * ny) > -0.5:
                continue
            pose = start
            leg: house_walk.Leg | None = None
            for _ in range(4):
                leg = house_walk.leg_through(door, pose, "kitchen")
                assert leg is not None
                pose, pts = _walk(pose, leg)
                if leg.crossing:
                    break
            assert leg is not None and leg.crossing, f"no crossing leg from {start}"
            s = [px * nx + py * ny for px, py in pts]
            assert s[-1] >= 0.75, "the crossing leg ends past the threshold, inside the next room"
            i = next(i for i, v in enumerate(s) if v >= 0)
            (ax, ay), (bx, by) = pts[i - 1], pts[i]
            t = -s[i - 1] / (s[i] - s[i - 1])
            cx, cy = ax + t * (bx - ax), ay + t * (by - ay)
            assert math.hypot(cx, cy) <= 0.3
            checked += 1
    assert checked >= 20


def test_the_policy_never_turns_straight_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a turn one way the next turn is never the other way (the flip-flop between two
    goals either side of the centre that wasted whole episodes)."""
    ask = house.read_ask("What colour is the cup in the bedroom?", ["red", "green"])
    assert ask is not None
    view = analyse_array(np.zeros((64, 64, 3), dtype=np.uint8))
    seen = house.HouseView(room="kitchen", rooms={"kitchen": 900, "office": 300}, floor_x={"office": 0.05})
    monkeypatch.setattr(house, "read_view", lambda v: seen)
    memory = [
        "SWEEP {'direction': 'left', 'turns': 6}: 6 action(s); kept: in the kitchen",
        "SWEEP {'direction': 'left', 'turns': 6}: 6 action(s); kept: in the kitchen",
        "FACE {'direction': 'right', 'degrees': 30}: 1 action(s); nothing kept",
    ]
    name, args, _ = navigate.house_intent(ask, view, memory, [], 80, Pose2(0.0, 0.0, -30.0))
    assert not (name == "FACE" and args.get("direction") == "left")


def test_a_house_episode_opens_with_four_quarter_turns_that_record_the_floor() -> None:
    ask = house.read_ask("What colour is the cup in the bedroom?", ["red", "green"])
    assert ask is not None
    rgb = np.zeros((64, 64, 3), dtype=np.uint8)
    rgb[48:] = house.FLOOR_LOOKS["kitchen"]
    view = analyse_array(rgb)
    task = read_task("What colour is the cup in the bedroom?", {})
    memory: list[str] = []
    for _ in range(4):
        pose = {"x": 0.0, "y": 0.0, "yaw": 0.0}
        name, args, _ = navigate.nav_intent(task, view, memory, [], 100, ask, pose)
        assert name == "SWEEP" and args["turns"] == 3
        assert house_walk.read_floors(str(args["saw"])) == {"kitchen": 1.0}
        memory.append(f"SWEEP {args}: 3 action(s); nothing kept")
    assert house_walk.recall(memory).start == "kitchen"


def test_with_no_doorway_placed_the_policy_looks_round_the_room_it_walked_into(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ask = house.read_ask("What colour is the cup in the bedroom?", ["red", "green"])
    assert ask is not None
    view = analyse_array(np.zeros((64, 64, 3), dtype=np.uint8))
    seen = house.HouseView(room="office", rooms={"office": 900})
    monkeypatch.setattr(house, "read_view", lambda v: seen)
    memory = [
        "GOTO {'direction': 'ahead', 'steps': 8, 'at': '+0.00,+0.00', 'in': 'kitchen', "
        "'enter': 'office', 'cross': 1.0}: 8 action(s); nothing kept",
    ]
    name, args, why = navigate.house_intent(ask, view, memory, [], 80, Pose2(0.0, 2.0, 0.0))
    assert (name, args["turns"], args["in"]) == ("SWEEP", 3, "office"), why
    # Mid-way through the look round it goes on turning; after four quarter turns it moves on.
    quarter = "SWEEP {'direction': 'left', 'turns': 3, 'in': 'office'}: 3 action(s); nothing kept"
    memory += [quarter]
    assert navigate.house_intent(ask, view, memory, [], 80, Pose2(0.0, 2.0, 90.0))[0] == "SWEEP"
    memory += [quarter] * 3
    assert navigate.house_intent(ask, view, memory, [], 80, Pose2(0.0, 2.0, 0.0))[0] != "SWEEP"


def test_a_dead_end_is_left_through_the_doorway_toward_rooms_not_yet_entered() -> None:
    def door(a: str, b: str) -> tuple[frozenset[str], Door]:
        return frozenset((a, b)), Door(frozenset((a, b)), 0.0, 0.0, 0.0)

    doors = dict([door("kitchen", "living room"), door("living room", "bathroom"), door("kitchen", "office")])
    visited = {"kitchen", "living room", "office"}
    # From the office (a dead end): back into the kitchen, toward the living room's bathroom door.
    assert navigate._hop_to_frontier("office", doors, visited, None) == frozenset(("kitchen", "office"))
    assert navigate._hop_to_frontier("kitchen", doors, visited, None) == frozenset(("kitchen", "living room"))
    # Everything entered: nowhere new to go.
    assert navigate._hop_to_frontier("office", doors, visited | {"bathroom"}, None) is None
