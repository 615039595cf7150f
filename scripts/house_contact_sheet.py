"""Contact sheet of every house category, rendered from the agent's camera height (1.5 m, level).

    python scripts/house_contact_sheet.py [--out docs/house_contact_sheet.png]

Each tile is one category alone in a plain room: furniture against the far wall (free-standing
pieces in the middle), small objects on a table, the camera 1.5 m high and level (the paper's
interface has no tilt), at a distance that fits the piece in view. Colours cycle through the
palette so the sheet also shows the range an item's main colour takes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from eviseek.envs.house.catalogue import COLORS, FURNITURE, ROOM_TYPES, SMALL_OBJECTS, WALL_HEIGHT
from eviseek.envs.house.layout import _walls
from eviseek.envs.house.sim import HouseSim
from eviseek.envs.house.spec import HouseSpec, ItemSpec, RoomSpec
from eviseek.types import Pose

W, H = 320, 240


def _room_for(category: str) -> str:
    for r in ROOM_TYPES.values():
        if category in r.furniture:
            return r.name
    return "living room"


def tile(category: str, colour: str) -> np.ndarray:
    """One category, alone, seen from 1.5 m."""
    room_name = _room_for(category) if category in FURNITURE else "dining room"
    rt = ROOM_TYPES[room_name]
    room = RoomSpec(name=room_name, rect=(0.0, 0.0, 5.0, 5.0), floor_rgb=rt.floor, wall_rgb=rt.wall)
    items: list[ItemSpec] = []
    if category in FURNITURE:
        f = FURNITURE[category]
        sx, sy, sz = f.size
        y = 5.0 - 0.07 - sy / 2 if f.against_wall else 3.6
        items.append(
            ItemSpec(
                name="piece_1",
                category=category,
                kind="furniture",
                shape=f.shape,
                color=colour,
                size=(sx, sy, sz),
                position=(2.5, y, sz / 2),
                room=room_name,
            )
        )
        reach = max(sx, sz * 1.2, 2.0 if sz < 1.0 else 1.2)
        cam_y = y - sy / 2 - 0.25 - reach
    else:
        t = FURNITURE["kitchen table"]
        tsx, tsy, tsz = 0.8, 0.6, t.size[2]
        items.append(
            ItemSpec(
                name="table_1",
                category="kitchen table",
                kind="furniture",
                shape="box",
                color="brown",
                size=(tsx, tsy, tsz),
                position=(2.5, 3.0, tsz / 2),
                room=room_name,
            )
        )
        o = SMALL_OBJECTS[category]
        items.append(
            ItemSpec(
                name=f"{category}_1",
                category=category,
                kind="object",
                shape=o.shape,
                color=colour,
                size=o.size,
                position=(2.5, 3.0, tsz + o.size[2] / 2),
                room=room_name,
                on="table_1",
            )
        )
        cam_y = 3.0 - 1.3
    spec = HouseSpec(rooms=[room], walls=_walls([room], []), items=items)
    sim = HouseSim(spec, width=W, height=H)
    try:
        frame = sim.render(Pose(x=2.5, y=cam_y, z=spec.camera_height, yaw=90.0, pitch=0.0))
    finally:
        sim.close()
    img = frame.rgb
    if category in SMALL_OBJECTS:  # the object is small at this distance: show the lower middle enlarged
        crop = Image.fromarray(img[H // 2 : H, W // 4 : 3 * W // 4]).resize((W, H), Image.NEAREST)
        img = np.asarray(crop)
    return img


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="docs/house_contact_sheet.png")
    args = ap.parse_args()
    cats = list(FURNITURE) + list(SMALL_OBJECTS)
    cols = 6
    rows = (len(cats) + cols - 1) // cols
    sheet = Image.new("RGB", (cols * W, rows * (H + 18)), "white")
    draw = ImageDraw.Draw(sheet)
    for k, cat in enumerate(cats):
        colour = COLORS[k % len(COLORS)]
        x, y = (k % cols) * W, (k // cols) * (H + 18)
        sheet.paste(Image.fromarray(tile(cat, colour)), (x, y + 18))
        zoom = " (lower middle, x2)" if cat in SMALL_OBJECTS else ""
        draw.text((x + 4, y + 3), f"{cat} ({colour}){zoom}", fill="black")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out, optimize=True)
    print(f"wrote {out} ({len(cats)} categories; wall height {WALL_HEIGHT} m)")


if __name__ == "__main__":
    main()
