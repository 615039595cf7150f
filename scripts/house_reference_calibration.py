"""Measure the looks the reference policy's house reader uses, on houses from seeds no split uses.

    python scripts/house_reference_calibration.py

Prints ``FLOOR_LOOKS`` (median rendered floor colour of each room type, seeds 9100-9105, four
views from every room's centre) and ``SHAPES`` (median height/width and box fill of each small
object's own-colour blob, seed 9150: 16 views per category from 1.2-3 m at the agent's height, on
a sideboard against each wall in turn). Paste them into ``eviseek/models/reference/house.py``.
The splits use seeds 3000 (house:dev) and 4000 (house:test).
"""

from __future__ import annotations

import math

import numpy as np

from eviseek.envs.house import generate_house
from eviseek.envs.house.catalogue import COLORS, ROOM_TYPES, SMALL_OBJECTS
from eviseek.envs.house.layout import _walls
from eviseek.envs.house.sim import HouseSim
from eviseek.envs.house.spec import HouseSpec, ItemSpec, RoomSpec
from eviseek.models.reference.vision import analyse_array
from eviseek.types import Pose


def floors() -> dict[str, tuple[int, int, int]]:
    seen: dict[str, list[np.ndarray]] = {}
    for seed in range(9100, 9106):
        spec = generate_house(np.random.default_rng(seed), 6)
        sim = HouseSim(spec, width=160, height=120)
        for r in spec.rooms:
            cx, cy = r.centre
            for yaw in (0, 90, 180, -90):
                f = sim.render(Pose(x=cx, y=cy, z=1.5, yaw=yaw, pitch=0))
                seen.setdefault(r.name, []).append(f.rgb[f.segmentation == sim.uid[f"floor:{r.name}"]])
        sim.close()
    out = {}
    for name, px in seen.items():
        med = np.median(np.concatenate(px), axis=0)
        out[name] = (int(med[0]), int(med[1]), int(med[2]))
    return out


def shapes() -> dict[str, tuple[float, float]]:
    rng = np.random.default_rng(9150)
    rt = ROOM_TYPES["dining room"]
    room = RoomSpec(name="dining room", rect=(0.0, 0.0, 6.0, 6.0), floor_rgb=rt.floor, wall_rgb=rt.wall)
    spots = {"north": (3.0, 5.7), "south": (3.0, 0.3), "east": (5.7, 3.0), "west": (0.3, 3.0)}
    into = {"north": -90.0, "south": 90.0, "east": 180.0, "west": 0.0}
    out = {}
    for cat, o in SMALL_OBJECTS.items():
        rows = []
        for trial in range(16):
            colour = COLORS[trial % len(COLORS)]
            side = list(spots)[trial % 4]
            k = rng.uniform(0.85, 1.15)
            size = (o.size[0] * k, o.size[1] * k, o.size[2] * k)
            tx, ty = spots[side]
            board = ItemSpec(
                name="sideboard_1",
                category="sideboard",
                kind="furniture",
                shape="box",
                color="blue" if colour == "brown" else "brown",
                size=(1.6, 0.5, 0.9) if side in ("north", "south") else (0.5, 1.6, 0.9),
                position=(tx, ty, 0.45),
                room=room.name,
            )
            obj = ItemSpec(
                name=f"{cat}_1",
                category=cat,
                kind="object",
                shape=o.shape,
                color=colour,
                size=size,
                position=(tx, ty, 0.9 + size[2] / 2),
                room=room.name,
                on="sideboard_1",
            )
            sim = HouseSim(
                HouseSpec(rooms=[room], walls=_walls([room], []), items=[board, obj]), width=320, height=240
            )
            d, ang = rng.uniform(1.2, 3.0), math.radians(into[side] + rng.uniform(-50, 50))
            cx, cy = tx + d * math.cos(ang), ty + d * math.sin(ang)
            yaw = math.degrees(math.atan2(ty - cy, tx - cx))
            view = analyse_array(sim.render(Pose(x=cx, y=cy, z=1.5, yaw=yaw, pitch=0)).rgb)
            sim.close()
            b = view.largest(colour)
            if b is not None:
                rows.append((b.height / b.width, b.extent))
        r = np.array(rows)
        out[cat] = (round(float(np.median(r[:, 0])), 2), round(float(np.median(r[:, 1])), 2))
    return out


if __name__ == "__main__":
    print("FLOOR_LOOKS =", floors())
    print("SHAPES =", shapes())
