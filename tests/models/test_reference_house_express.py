"""The reference policy reads the house's EXPRESS-Bench kinds off rendered pixels: a TV's state, an
object's size, what it stands on and what it is for (hand-built rooms, seen from a fixed spot)."""

from __future__ import annotations

import math

import pytest

from eviseek.envs.house.catalogue import FURNITURE, ROOM_TYPES, SIZE_SCALES, SMALL_OBJECTS, USES
from eviseek.envs.house.layout import _walls
from eviseek.envs.house.sim import HouseSim
from eviseek.envs.house.spec import HouseSpec, ItemSpec, RoomSpec
from eviseek.models.reference import house_express
from eviseek.models.reference.house import read_ask, read_view, solve_house
from eviseek.models.reference.vision import View, analyse_array
from eviseek.types import Pose


def _room(name: str, items: list[ItemSpec]) -> HouseSpec:
    rooms = [
        RoomSpec(
            name=name,
            rect=(0.0, 0.0, 5.0, 5.0),
            floor_rgb=ROOM_TYPES[name].floor,
            wall_rgb=ROOM_TYPES[name].wall,
        )
    ]
    return HouseSpec(rooms=rooms, walls=_walls(rooms, []), items=items)


def _furniture(
    category: str, room: str, x: float, y: float, colour: str = "green", state: str | None = None
) -> ItemSpec:
    sx, sy, sz = FURNITURE[category].size
    return ItemSpec(
        name=f"{category.replace(' ', '_')}_1",
        category=category,
        kind="furniture",
        shape="box",
        color=colour,
        size=(sx, sy, sz),
        position=(x, y, sz / 2),
        room=room,
        state=state,
    )


def _on(top: ItemSpec, category: str, colour: str, scale: float = 1.0, name: str = "") -> ItemSpec:
    sx, sy, sz = (v * scale for v in SMALL_OBJECTS[category].size)
    return ItemSpec(
        name=name or f"{category}_1",
        category=category,
        kind="object",
        shape=SMALL_OBJECTS[category].shape,
        color=colour,
        size=(sx, sy, sz),
        position=(top.position[0], top.position[1], top.top + sz / 2),
        room=top.room,
        on=top.name,
    )


def _look(spec: HouseSpec, at: tuple[float, float], toward: tuple[float, float]) -> View:
    yaw = math.degrees(math.atan2(toward[1] - at[1], toward[0] - at[0]))
    sim = HouseSim(spec, width=320, height=240)
    try:
        frame = sim.render(Pose(x=at[0], y=at[1], z=1.5, yaw=yaw, pitch=0.0))
    finally:
        sim.close()
    return analyse_array(frame.rgb)


def test_the_tables_agree_with_the_house_catalogue() -> None:
    assert house_express.USES == USES
    for room, pieces in house_express.SURFACES.items():
        assert set(pieces) == {f for f in ROOM_TYPES[room].furniture if FURNITURE[f].surface}, room
        for piece, (height, _legs) in pieces.items():
            assert height == pytest.approx(FURNITURE[piece].size[2]), piece


@pytest.mark.parametrize("state", ["on", "off"])
def test_the_tv_reads_on_or_off(state: str) -> None:
    tv = _furniture("tv stand", "living room", 2.5, 4.7, colour="orange", state=state)
    view = _look(_room("living room", [tv]), (2.5, 2.0), (2.5, 4.7))
    assert house_express.tv_state(view)[0] == state
    ask = read_ask("Is the TV in the living room on or off?", ["on", "off"])
    assert ask is not None and ask.kind == "state"
    verdict = solve_house(ask, [view])
    assert verdict.answer == state and verdict.confidence >= 0.9
    # Nothing but walls in view: no reading, a guess with no confidence.
    empty = _look(_room("living room", [tv]), (2.5, 2.0), (2.5, 0.0))
    assert house_express.tv_state(empty)[0] is None and solve_house(ask, [empty]).confidence == 0.0


@pytest.mark.parametrize("size", sorted(SIZE_SCALES))
def test_an_objects_size_and_use_read_off_its_silhouette(size: str) -> None:
    desk = _furniture("desk", "office", 2.5, 4.6)
    cup = _on(desk, "vase", "red", scale=SIZE_SCALES[size])
    view = _look(_room("office", [desk, cup]), (2.5, 2.6), (2.5, 4.6))
    ask = read_ask("Is the vase in the office big or small for a vase?", ["big", "small"])
    assert ask is not None and ask.kind == "attribute" and ask.aspect == "size"
    assert solve_house(ask, [view]).answer == size
    use = read_ask("What is the red thing on the desk in the office used for?", sorted(USES.values()))
    assert use is not None and use.kind == "knowledge"
    assert solve_house(use, [view]).answer == "flowers"


@pytest.mark.parametrize("on", ["counter", "kitchen table"])
def test_what_an_object_stands_on(on: str) -> None:
    counter = _furniture("counter", "kitchen", 1.4, 4.65, colour="purple")
    table = _furniture("kitchen table", "kitchen", 3.8, 2.5, colour="pink")
    top = counter if on == "counter" else table
    lamp = _on(top, "lamp", "blue")
    view = _look(
        _room("kitchen", [counter, table, lamp]), (top.position[0], top.position[1] - 2.0), top.position[:2]
    )
    ask = read_ask("Where in the kitchen is the blue lamp?", ["counter", "kitchen table"])
    assert ask is not None and ask.kind == "location"
    verdict = solve_house(ask, [view])
    assert verdict.answer == on, verdict


def test_object_readings_do_not_depend_on_the_frame_size() -> None:
    # Far from the desk, the vase is small in a 320x240 frame and 2.6x larger in a 512x512 one;
    # the area thresholds scale with the focal length, so both read it the same way.
    desk = _furniture("desk", "office", 2.5, 4.6)
    vase = _on(desk, "vase", "red")
    spec = _room("office", [desk, vase])
    seen = []
    for width, height in ((320, 240), (512, 512)):
        sim = HouseSim(spec, width=width, height=height)
        try:
            frame = sim.render(Pose(x=2.5, y=1.2, z=1.5, yaw=90.0, pitch=0.0))
        finally:
            sim.close()
        objects = read_view(analyse_array(frame.rgb)).objects
        seen.append([(o.colour, o.category, o.near) for o in objects])
    assert seen[0] == seen[1] and seen[0] and seen[0][0][:2] == ("red", "vase")
