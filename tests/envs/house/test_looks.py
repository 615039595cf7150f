"""Every category is drawn from several parts, as one body, inside the look the catalogue promises."""

from __future__ import annotations

import numpy as np
import pytest

from eviseek.envs.house import looks
from eviseek.envs.house.catalogue import FURNITURE, SMALL_OBJECTS
from eviseek.envs.house.sim import HouseSim
from eviseek.envs.house.spec import ItemSpec
from eviseek.types import Pose
from tests.envs.house.conftest import two_rooms


def test_every_category_has_a_look_of_several_parts() -> None:
    assert set(looks.FURNITURE_LOOKS) == set(FURNITURE)
    assert set(looks.OBJECT_LOOKS) >= set(SMALL_OBJECTS) - {"ball"}
    for cat, parts in {**looks.FURNITURE_LOOKS, **looks.OBJECT_LOOKS}.items():
        assert len(parts) >= (1 if cat == "ball" else 2), cat
        if cat in SMALL_OBJECTS:  # the colour questions ask about
            assert any(p.colour == "main" for p in parts), f"{cat}: its colour word must show"


@pytest.mark.parametrize("back", ["south", "north", "east", "west"])
def test_parts_stay_over_the_footprint_whatever_way_the_piece_faces(back: str) -> None:
    it = ItemSpec(
        name="bed_1",
        category="bed",
        kind="furniture",
        shape="box",
        color="pink",
        size=(1.6, 2.0, 0.55) if back in ("south", "north") else (2.0, 1.6, 0.55),
        position=(3.0, 3.0, 0.275),
        room="bedroom",
    )
    x0, y0, x1, y1 = it.footprint
    head = None
    for part in looks.parts_of(it):
        (cx, cy, _), (ex, ey, _) = looks.place(part, it, back)
        assert x0 - 1e-6 <= cx - ex / 2 and cx + ex / 2 <= x1 + 1e-6
        assert y0 - 1e-6 <= cy - ey / 2 and cy + ey / 2 <= y1 + 1e-6
        if part.z[1] >= 2.0:
            head = (cx, cy)
    assert head is not None
    # The headboard stands against the wall the piece turns its back to.
    side = {"south": head[1] < 3.0 - 0.9, "north": head[1] > 3.0 + 0.9}
    side.update({"west": head[0] < 3.0 - 0.9, "east": head[0] > 3.0 + 0.9})
    assert side[back]


def test_an_item_of_parts_is_one_body_in_the_segmentation() -> None:
    spec = two_rooms()
    sim = HouseSim(spec, width=160, height=120)
    try:
        desk = sim.uid["desk_1"]
        assert sim.p.getNumJoints(desk, physicsClientId=sim.client) == len(
            looks.parts_of(spec.item("desk_1"))
        )
        frame = sim.render(Pose(x=5.2, y=2.0, z=1.5, yaw=0.0, pitch=0.0))
        ids = set(np.unique(frame.segmentation).tolist())
        assert desk in ids and sim.uid["cup_1"] in ids
        assert all(i in sim.name_of for i in ids if i >= 0), "every pixel names one body"
        assert any(n.startswith("ceiling:") for n in sim.uid) and any(
            n.startswith("doorframe:") for n in sim.uid
        )
    finally:
        sim.close()
