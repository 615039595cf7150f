"""The reference policy's dead-reckoned walk through a house: doorways placed from pixels, the
room underfoot from the walk so far, and legs that pass through a doorway's opening."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eviseek.envs.house import HouseEnv
from eviseek.envs.house.questions import build_question
from eviseek.envs.house.spec import HouseSpec
from eviseek.models.reference import house, house_walk, navigate, seeking
from eviseek.models.reference.house_walk import Door, Pose2
from eviseek.models.reference.request import Request
from eviseek.models.reference.task import read_task
from eviseek.models.reference.verdict import Verdict
from eviseek.models.reference.vision import View, analyse, analyse_array
from eviseek.types import Action, ChatMessage, GenerateConfig


def _ask(question: str, options: list[str]) -> house.HouseAsk:
    """The house question ``question`` asks (the test fails if the reader does not take it)."""
    ask = house.read_ask(question, options)
    assert ask is not None
    return ask


def _cup_ask() -> house.HouseAsk:
    """The attribute question most of these tests walk for."""
    return _ask("What colour is the cup in the bedroom?", ["red", "green"])


def _blank_view_read_as(monkeypatch: pytest.MonkeyPatch, seen: house.HouseView) -> View:
    """A black frame's analysis, with the house reader patched to read every view as ``seen``."""
    monkeypatch.setattr(house, "read_view", lambda v: seen)
    return analyse_array(np.zeros((64, 64, 3), dtype=np.uint8))


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


def test_a_walk_not_aimed_at_a_doorway_still_changes_room_when_it_crosses_one() -> None:
    # A doorway placed 1 m north of the start, walked through heading north (yaw 0).
    door = Door(frozenset(("hallway", "kitchen")), 0.0, 1.0, 0.0, 1.0).text()
    sweep = (
        f"SWEEP {{'direction': 'left', 'turns': 3, 'saw': 'hallway:0.80', 'doors': '{door}'}}: 3 action(s)"
    )
    walk = "GOTO {'direction': 'ahead', 'steps': 4, 'at': '+0.00,+0.00', 'in': 'hallway'}: 4 action(s)"
    mem = house_walk.recall([sweep, walk])
    assert mem.moves[-1].enter is None
    # Short of the threshold, or only just over it: still the hallway.
    assert house_walk.room_now(mem, Pose2(0.0, 0.9, 0.0)) == "hallway"
    assert house_walk.room_now(mem, Pose2(0.0, 1.1, 0.0)) == "hallway"
    # Past it through the opening: the kitchen.
    assert house_walk.room_now(mem, Pose2(0.2, 1.5, 0.0)) == "kitchen"
    # Past the threshold's line but 2 m to the side of the opening: through a wall it is not.
    assert house_walk.room_now(mem, Pose2(2.0, 1.5, 0.0)) == "hallway"
    # The same walk from the kitchen side back south: into the hallway.
    back = walk.replace("'at': '+0.00,+0.00', 'in': 'hallway'", "'at': '+0.00,+2.00', 'in': 'kitchen'")
    assert house_walk.room_now(house_walk.recall([sweep, back]), Pose2(0.0, 0.5, 180.0)) == "hallway"
    # A doorway of another room does not count.
    other = Door(frozenset(("office", "bedroom")), 0.0, 1.0, 0.0, 1.0).text()
    mem = house_walk.recall([sweep.replace(door, other), walk])
    assert house_walk.room_now(mem, Pose2(0.0, 1.5, 0.0)) == "hallway"


def test_standing_beside_a_doorway_in_its_wall_line_is_not_being_through_it() -> None:
    door = Door(frozenset(("bedroom", "living room")), 0.0, 1.0, 0.0, 1.0)
    # In the opening, on the threshold: already through (no leg left).
    assert house_walk.leg_through(door, Pose2(0.1, 1.05, 0.0), "living room") is None
    # On the threshold's line, 2.4 m beside the opening (in line with the wall): a leg toward it.
    leg = house_walk.leg_through(door, Pose2(2.4, 1.0, 0.0), "living room")
    assert leg is not None and leg.steps >= 1


def test_a_doorway_too_near_for_its_threshold_to_show_is_placed_right_ahead_anywhere() -> None:
    # Bottom rows mostly the hallway's floor, seen from (2, 3) facing +y inside the kitchen.
    doors = navigate.doors_right_ahead(
        [("hallway:0.60@0.50,kitchen:0.10@0.20", Pose2(2.0, 3.0, 0.0))], "kitchen"
    )
    door = doors[frozenset(("hallway", "kitchen"))]
    assert (door.x, door.y, door.through) == (2.0, 3.0 + navigate.NEAR_DOOR_M, 0.0)
    # The room underfoot, or too little of another floor, places nothing.
    assert navigate.doors_right_ahead([("kitchen:0.90@0.50", Pose2(2.0, 3.0, 0.0))], "kitchen") == {}
    assert navigate.doors_right_ahead([("hallway:0.10@0.50", Pose2(2.0, 3.0, 0.0))], "kitchen") == {}


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
    ask = _cup_ask()
    seen = house.HouseView(room="kitchen", rooms={"kitchen": 900, "office": 300}, floor_x={"office": 0.05})
    view = _blank_view_read_as(monkeypatch, seen)
    memory = [
        "SWEEP {'direction': 'left', 'turns': 6}: 6 action(s); kept: in the kitchen",
        "SWEEP {'direction': 'left', 'turns': 6}: 6 action(s); kept: in the kitchen",
        "FACE {'direction': 'right', 'degrees': 30}: 1 action(s); nothing kept",
    ]
    name, args, _ = navigate.house_intent(ask, view, memory, [], 80, Pose2(0.0, 0.0, -30.0))
    assert not (name == "FACE" and args.get("direction") == "left")


def test_a_house_episode_opens_with_three_quarter_turns_that_record_the_floor() -> None:
    ask = _cup_ask()
    rgb = np.zeros((64, 64, 3), dtype=np.uint8)
    rgb[48:] = house.FLOOR_LOOKS["kitchen"]
    view = analyse_array(rgb)
    task = read_task("What colour is the cup in the bedroom?", {})
    memory: list[str] = []
    for k in range(3):
        pose = {"x": 0.0, "y": 0.0, "yaw": 0.0}
        name, args, _ = navigate.nav_intent(task, view, memory, [], 100, ask, pose, steps_used=3 * k)
        assert name == "SWEEP" and args["turns"] == 3
        assert house_walk.read_floors(str(args["saw"])) == {"kitchen": 1.0}
        memory.append(f"SWEEP {args}: 3 action(s); nothing kept")
    assert house_walk.recall(memory).start == "kitchen"
    # The fourth side is the view after the third sweep: the next decision reads it, not a sweep.
    name, args, _ = navigate.nav_intent(task, view, memory, [], 100, ask, {"x": 0, "y": 0}, steps_used=9)
    assert name != "SWEEP"


def test_a_new_subtask_with_an_empty_memory_does_not_turn_round_at_the_start_again() -> None:
    # eviseek-nav:paper keeps the working memory per subtask: the steps already taken tell the
    # policy that the start sweeps are behind it.
    ask = _cup_ask()
    rgb = np.zeros((64, 64, 3), dtype=np.uint8)
    rgb[48:] = house.FLOOR_LOOKS["kitchen"]
    task = read_task("What colour is the cup in the bedroom?", {})
    pose = {"x": 1.0, "y": 2.0, "yaw": 0.0}
    fresh = navigate.nav_intent(task, analyse_array(rgb), [], [], 80, ask, pose, steps_used=0)
    later = navigate.nav_intent(task, analyse_array(rgb), [], [], 80, ask, pose, steps_used=30)
    assert fresh[0] == "SWEEP" and "saw" in fresh[1]
    assert "saw" not in later[1]


def test_with_no_doorway_placed_the_policy_looks_round_the_room_it_walked_into(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ask = _cup_ask()
    view = _blank_view_read_as(monkeypatch, house.HouseView(room="office", rooms={"office": 900}))
    memory = [
        "GOTO {'direction': 'ahead', 'steps': 8, 'at': '+0.00,+0.00', 'in': 'kitchen', "
        "'enter': 'office', 'cross': 1.0}: 8 action(s); nothing kept",
    ]
    name, args, why = navigate.house_intent(ask, view, memory, [], 80, Pose2(0.0, 2.0, 0.0))
    assert (name, args["turns"], args["in"]) == ("SWEEP", 3, "office"), why
    # Mid-way through the look round it goes on turning; after three quarter turns (four sides
    # seen) it moves on.
    quarter = "SWEEP {'direction': 'left', 'turns': 3, 'in': 'office'}: 3 action(s); nothing kept"
    memory += [quarter]
    assert navigate.house_intent(ask, view, memory, [], 80, Pose2(0.0, 2.0, 90.0))[0] == "SWEEP"
    memory += [quarter] * 2
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


def _line(intent: str, args: dict[str, object], tail: str = "3 action(s); nothing kept") -> str:
    return f"{intent} {args}: {tail}"


def test_standing_in_the_named_room_is_read_from_the_walk_not_the_views() -> None:
    ask = _cup_ask()
    sweeps = [_line("SWEEP", {"direction": "left", "turns": 3, "saw": "kitchen:0.90"})] * 3
    origin = {"x": 0.0, "y": 0.0, "yaw": 0.0}
    # No notes shown (the paper's controller): it cannot tell.
    assert navigate.stood_in_target(ask, [], origin) is None
    # Started in the kitchen; a walk toward the bedroom's doorway has not crossed it yet.
    walk = _line(
        "GOTO",
        {
            "direction": "ahead",
            "steps": 8,
            "at": "+0.00,+0.00",
            "in": "kitchen",
            "enter": "bedroom",
            "cross": 1.5,
        },
        "8 action(s)",
    )
    assert navigate.stood_in_target(ask, [*sweeps, walk], {"x": 0.0, "y": 1.0, "yaw": 0.0}) is False
    # Past the crossing by the dead-reckoned pose: in the bedroom.
    assert navigate.stood_in_target(ask, [*sweeps, walk], {"x": 0.0, "y": 2.0, "yaw": 0.0}) is True
    # A later decision taken in the bedroom says so on its own.
    inside = _line("SWEEP", {"direction": "left", "turns": 3, "in": "bedroom"})
    assert navigate.stood_in_target(ask, [*sweeps, walk, inside], origin) is True
    # The start room counts once the first look round is done (three quarter turns).
    bedroom = [_line("SWEEP", {"direction": "left", "turns": 3, "saw": "bedroom:0.80"})]
    assert navigate.stood_in_target(ask, bedroom, origin) is False
    assert navigate.stood_in_target(ask, bedroom * 3, origin) is True
    # Questions that name no room's inside are not held back.
    between = house.read_ask("What lies between the kitchen and the bedroom?", [])
    assert between is not None and between.kind == "regional_boundary"
    assert navigate.stood_in_target(between, sweeps, origin) is None


def _coverage_request(memory: list[str], left: int = 80, active: bool = True) -> Request:
    meta: dict[str, object] = {
        "control": "navigation",
        "question": "What colour is the cup in the bedroom?",
        "demands": [{"id": 1, "text": "the cup in the bedroom"}],
        "covered_before": [],
        "active": {"id": 1, "goal": "find the cup", "demand": 1} if active else None,
        "remaining_steps": left,
        "working_memory": memory,
        "pose": {"x": 0.0, "y": 0.0, "z": 0.0, "yaw": 0.0, "pitch": 0.0},
    }
    return Request(
        [ChatMessage(role="user", content="Question: What colour is the cup in the bedroom?")],
        GenerateConfig(stage="coverage", metadata=meta),
    )


def test_the_controller_does_not_close_a_room_question_before_the_agent_stood_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The kept views settle the question (say, the cup seen through the bedroom's doorway)...
    monkeypatch.setattr(house, "covered", lambda ask, views: True)
    monkeypatch.setattr(Request, "verdict", lambda self: Verdict("red", 0.95, 0, "seen"))
    monkeypatch.setattr(
        Request, "views", property(lambda self: [analyse_array(np.zeros((8, 8, 3), np.uint8))])
    )
    sweeps = [_line("SWEEP", {"direction": "left", "turns": 3, "saw": "kitchen:0.90"})] * 3
    # ...but the agent has only stood in the kitchen: the search goes on.
    reply = seeking.coverage(_coverage_request(sweeps))
    assert reply["covered"] == [] and reply["decision"] == "continue"
    # With the plan worked through, it replans a walk into the named room.
    reply = seeking.coverage(_coverage_request(sweeps, active=False))
    assert reply["decision"] == "replan" and "Walk into the bedroom" in reply["subtasks"][0]["goal"]
    # Once it has stood in the bedroom, the same views close the demand and stop the search.
    inside = _line("SWEEP", {"direction": "left", "turns": 3, "in": "bedroom"})
    reply = seeking.coverage(_coverage_request([*sweeps, inside]))
    assert reply["covered"] == [1] and reply["decision"] == "stop"
    # Without the notes (eviseek-nav:paper's controller) the views alone decide, as before.
    reply = seeking.coverage(_coverage_request([]))
    assert reply["covered"] == [1] and reply["decision"] == "stop"


def test_a_start_view_full_of_another_rooms_floor_is_a_doorway_walked_through() -> None:
    # The agent starts by the bedroom's doorway, too close for the threshold to show: the first
    # start view's nearest floor is the bedroom's. After the look round it turns back and walks in.
    ask = _cup_ask()
    rgb = np.zeros((64, 64, 3), dtype=np.uint8)
    rgb[48:] = house.FLOOR_LOOKS["kitchen"]
    kitchen = analyse_array(rgb)
    task = read_task("What colour is the cup in the bedroom?", {})
    memory = [
        _line("SWEEP", {"direction": "left", "turns": 3, "saw": "bedroom:0.70", "facing": 0}),
        _line("SWEEP", {"direction": "left", "turns": 3, "saw": "kitchen:0.90", "facing": 90}),
        _line("SWEEP", {"direction": "left", "turns": 3, "saw": "kitchen:0.90", "facing": 180}),
    ]
    pose = {"x": 0.0, "y": 0.0, "yaw": -90.0}
    name, args, why = navigate.nav_intent(task, kitchen, memory, [], 100, ask, pose, steps_used=9)
    assert (name, args["direction"], args["degrees"], args["enter"]) == ("GOTO", "left", 90, "bedroom"), why
    # Without such a view it does not.
    memory[0] = memory[1]
    name, args, _ = navigate.nav_intent(task, kitchen, memory, [], 100, ask, pose, steps_used=9)
    assert args.get("enter") != "bedroom"


def test_blocked_again_and_again_the_agent_backs_off_then_tries_the_other_side() -> None:
    ask = _cup_ask()
    rgb = np.zeros((64, 64, 3), dtype=np.uint8)
    rgb[40:, :20] = house.FLOOR_LOOKS["kitchen"]  # open floor on the left only
    view = analyse_array(rgb)
    memory = [_line("SWEEP", {"direction": "left", "turns": 3, "saw": "kitchen:0.90", "facing": 0})] * 3
    blocked = "1 action(s); outcome: move_forward failed: blocked by furniture"
    memory.append(
        _line("GOTO", {"direction": "ahead", "steps": 4, "at": "+0.00,+0.00", "in": "kitchen"}, blocked)
    )
    turns = []
    for _ in range(5):
        name, args, _ = navigate.house_intent(ask, view, memory, [], 80, Pose2(0.0, 0.0, 0.0))
        assert name == "GOTO" and args.get("aside")
        turns.append((args["direction"], args["degrees"]))
        memory.append(_line("GOTO", args, blocked))
    # Aside to the freer side twice, back off (turn round), the other side, then round again.
    assert turns == [("left", 60), ("left", 60), ("left", 180), ("right", 90), ("left", 60)]


def test_a_refused_done_in_the_target_room_buys_another_spot_to_look_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ask = _cup_ask()
    view = _blank_view_read_as(monkeypatch, house.HouseView(room="bedroom", rooms={"bedroom": 900}))
    walk = _line(
        "GOTO", {"direction": "ahead", "steps": 2, "at": "+0.00,+0.00", "in": "bedroom"}, "2 action(s)"
    )
    looks = [_line("SWEEP", {"direction": "left", "turns": 3, "in": "bedroom"})] * 6
    memory = [walk, *looks]
    assert navigate.house_intent(ask, view, memory, [], 60, Pose2(0.0, 0.5, 0.0))[0] == "DONE"
    memory.append("DONE was refused: the retained evidence does not yet cover demand 1; look somewhere new")
    name, _, why = navigate.house_intent(ask, view, memory, [], 60, Pose2(0.0, 0.5, 0.0))
    assert name != "DONE", why


def test_a_doorway_beside_the_start_is_placed_toward_the_middle_of_the_floor_beyond() -> None:
    # Facing north, the hallway's floor fills the left of the bottom rows (the jamb on the right):
    # the doorway is placed 1 m ahead and to the left, walked through heading north.
    rgb = np.zeros((64, 64, 3), dtype=np.uint8)
    rgb[48:, :32] = house.FLOOR_LOOKS["hallway"]
    saw = house_walk.bottom_floors(analyse_array(rgb))
    share, x = house_walk.read_floors_at(saw)["hallway"]
    assert share == pytest.approx(0.5, abs=0.01) and x == pytest.approx(0.25, abs=0.01)
    doors = navigate.doors_at_start([(saw, 0.0)], "laundry room")
    door = doors[frozenset(("hallway", "laundry room"))]
    assert door.y == pytest.approx(1.0) and door.x == pytest.approx(-0.5, abs=0.05)
    assert door.through == 0.0
    # Too little of it, or the start room's own floor: no doorway.
    assert navigate.doors_at_start([("hallway:0.10@0.25", 0.0)], "laundry room") == {}
    assert navigate.doors_at_start([(saw, 0.0)], "hallway") == {}


def test_none_there_waits_for_a_second_look_round_in_the_named_room(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(house, "covered", lambda ask, views: True)
    monkeypatch.setattr(Request, "verdict", lambda self: Verdict("no", 0.9, 0, "none seen all round"))
    monkeypatch.setattr(
        Request, "views", property(lambda self: [analyse_array(np.zeros((8, 8, 3), np.uint8))])
    )
    question = "Is there a cup in the bedroom?"
    walk = _line(
        "GOTO", {"direction": "ahead", "steps": 2, "at": "+0.00,+0.00", "in": "bedroom"}, "2 action(s)"
    )
    look = _line("SWEEP", {"direction": "left", "turns": 3, "in": "bedroom"})

    def check(memory: list[str]) -> dict[str, object]:
        req = _coverage_request(memory)
        req.house = house.read_ask(question, ["yes", "no"])
        return seeking.coverage(req)

    assert check([walk, *[look] * 3])["covered"] == []  # one look round: not yet
    assert check([walk, *[look] * 6])["covered"] == [1]  # two: "no" it is
    # A "yes" needs no second look.
    monkeypatch.setattr(Request, "verdict", lambda self: Verdict("yes", 0.95, 0, "a cup"))
    assert check([walk, *[look] * 3])["covered"] == [1]


def test_a_route_never_leads_straight_back_through_the_doorway_just_crossed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The agent walked from the bathroom into the laundry room. Its notes say the bathroom has a
    # doorway to the office (seen, not placed), so the map's route to the office runs back through
    # the bathroom; from the bathroom a like glimpse had sent it here. It tries the laundry room's
    # own way on (the kitchen) instead of walking to and fro.
    ask = _ask("Is there a vase in the office?", ["yes", "no"])
    view = _blank_view_read_as(monkeypatch, house.HouseView(room="laundry room"))
    doors = "bathroom/laundry room@+0.00,+1.00>0~1.00; kitchen/laundry room@+2.00,+3.00>90~1.00"
    args = {
        "direction": "ahead",
        "steps": 9,
        "at": "+0.00,+0.00",
        "in": "bathroom",
        "door": "bathroom/laundry room",
        "enter": "laundry room",
        "cross": 1.0,
        "doors": doors,
    }
    memory = [_line("GOTO", args, "9 action(s); kept: in the bathroom; doorways bathroom / office")]
    name, got, why = navigate.house_intent(ask, view, memory, [], 80, Pose2(0.0, 2.25, 0.0))
    assert got.get("door") == "kitchen/laundry room", (name, got, why)


def test_a_new_spot_in_the_target_room_lies_further_in_not_back_through_the_doorway(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ask = _cup_ask()
    view = _blank_view_read_as(monkeypatch, house.HouseView(room="bedroom", rooms={"bedroom": 900}))
    walk_in = {
        "direction": "ahead",
        "steps": 9,
        "at": "+0.00,+0.00",
        "in": "kitchen",
        "door": "bedroom/kitchen",
        "enter": "bedroom",
        "cross": 1.0,
        "doors": "bedroom/kitchen@+0.00,+1.00>180~1.00",
    }
    memory = [
        _line("GOTO", walk_in, "9 action(s)"),
        *[_line("SWEEP", {"direction": "left", "turns": 3, "in": "bedroom"})] * 3,
    ]
    # Facing back toward the doorway (south) after the look round: it turns north and walks on.
    name, args, why = navigate.house_intent(ask, view, memory, [], 80, Pose2(0.0, 2.25, 180.0))
    assert (name, args["degrees"], args["steps"]) == ("GOTO", 180, 4), why
    assert "further into the bedroom" in why


def test_something_right_in_front_is_seen_before_walking_into_it() -> None:
    rgb = np.zeros((64, 64, 3), dtype=np.uint8)
    rgb[40:] = house.FLOOR_LOOKS["kitchen"]
    assert not navigate.blocked_ahead(analyse_array(rgb))
    rgb[40:, 26:38] = (200, 40, 40)  # a red cabinet standing right ahead, down to the bottom edge
    assert navigate.blocked_ahead(analyse_array(rgb))
    rgb = np.zeros((64, 64, 3), dtype=np.uint8)
    rgb[40:, :20] = house.FLOOR_LOOKS["kitchen"]  # floor on the left only: a wall ahead
    assert navigate.blocked_ahead(analyse_array(rgb))
