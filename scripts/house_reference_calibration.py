"""Measure the looks the reference policy's house reader uses, on houses from seeds no split uses.

    python scripts/house_reference_calibration.py

Prints ``FLOOR_LOOKS`` (median rendered floor colour of each room type, seeds 9100-9105, four
views from every room's centre). Paste it into ``eviseek/models/reference/house.py``. The small
objects' looks are measured by ``scripts/house_object_calibration.py``. The splits use seeds
3000 (house:dev) and 4000 (house:test).
"""

from __future__ import annotations

import numpy as np

from eviseek.envs.house import generate_house
from eviseek.envs.house.sim import HouseSim
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


if __name__ == "__main__":
    print("FLOOR_LOOKS =", floors())
