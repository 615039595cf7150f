"""Shared helpers for the house tests: a hand-built two-room house wrapped as a question."""

from __future__ import annotations

from typing import Any

from eviseek.envs.house.catalogue import ROOM_TYPES
from eviseek.envs.house.layout import _walls
from eviseek.envs.house.spec import DoorSpec, HouseSpec, ItemSpec, RoomSpec
from eviseek.envs.tabletop.support import ViewEvidence
from eviseek.types import AnswerContract, Pose, Question


def two_rooms(start: Pose | None = None) -> HouseSpec:
    """Kitchen (0..4 x 0..4) and bedroom (4..8 x 0..4), one doorway at (4, 2); a table with a cup
    in the bedroom at (6.5, 2)."""
    rooms = [
        RoomSpec(name=n, rect=r, floor_rgb=ROOM_TYPES[n].floor, wall_rgb=ROOM_TYPES[n].wall)
        for n, r in (("kitchen", (0.0, 0.0, 4.0, 4.0)), ("bedroom", (4.0, 0.0, 8.0, 4.0)))
    ]
    doors = [DoorSpec(rooms=("kitchen", "bedroom"), centre=(4.0, 2.0), axis="y", width=1.0)]
    table = ItemSpec(
        name="desk_1",
        category="desk",
        kind="furniture",
        shape="box",
        color="brown",
        size=(0.8, 1.2, 0.75),
        position=(6.5, 2.0, 0.375),
        room="bedroom",
    )
    cup = ItemSpec(
        name="cup_1",
        category="cup",
        kind="object",
        shape="cylinder",
        color="red",
        size=(0.1, 0.1, 0.13),
        position=(6.4, 2.0, 0.815),
        room="bedroom",
        on="desk_1",
    )
    return HouseSpec(
        rooms=rooms,
        doors=doors,
        walls=_walls(rooms, doors),
        items=[table, cup],
        start=start or Pose(x=1.0, y=2.0, z=1.5, yaw=0.0, pitch=0.0),
    )


def hand_question(spec: HouseSpec, **metadata: Any) -> Question:
    """An attribute question about the cup in ``spec``."""
    return Question(
        id="house-hand-0",
        text="What colour is the cup in the bedroom?",
        contract=AnswerContract(kind="option", options=["red", "blue"]),
        family="Open EQA",
        subcategory="Object Attribute",
        ground_truth="red",
        env_id="eviseek/House-v0",
        scene=spec.model_dump(mode="json"),
        metadata={
            "slug": "attribute",
            "target": {"position": [6.4, 2.0, 0.815], "room": "bedroom"},
            "shortest_path_m": 5.0,
            "evidence": [ViewEvidence(objects=["cup_1"], min_fraction=0.3, min_pixels=40).model_dump()],
            **metadata,
        },
    )
