"""Measure (and check) how the reference policy tells a house's small objects apart.

    python scripts/house_object_calibration.py                # fit on 9200-9205, check on 9220-9223
    python scripts/house_object_calibration.py --table-only   # print LOOKS for house_objects.py

Houses come from seeds no split uses (house:dev is 3000, house:test 4000). In each house every
small object is viewed from a few spots in its own room, 0.7-3.5 m away, the camera level at the
agent's height and turned up to 35 degrees off the object. Every blob the house reader would
consider (a colour blob below the horizon, not touching the bottom edge, under 30 % of the frame
each way) is labelled by what the segmentation mask says it mostly is: a small object's
category, or ``furniture`` for anything else. This script alone uses the mask; the policy sees
only the RGB.

The fit seeds give :data:`eviseek.models.reference.house_objects.LOOKS` (mean and spread of every
feature per category). On the held-out seeds it prints, per category, how often a blob of that
category is read as it (by the bounding-box rule the policy used before, and by the features),
near (blob of 120 pixels or more) and far, and how many furniture blobs pass for an object.
"""

from __future__ import annotations

import argparse
import math
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from eviseek.envs.house import generate_house
from eviseek.envs.house.catalogue import SMALL_OBJECTS
from eviseek.envs.house.grid import blocker_at
from eviseek.envs.house.sim import HouseSim
from eviseek.models.reference import house_objects
from eviseek.models.reference.house import floor_labels
from eviseek.models.reference.vision import analyse_array
from eviseek.types import Pose

OLD_SHAPES: dict[str, tuple[float, float]] = {
    "cup": (1.56, 0.89),
    "vase": (2.11, 0.67),
    "book": (0.42, 0.64),
    "ball": (1.06, 0.78),
    "box": (0.76, 0.86),
    "bottle": (3.17, 0.83),
    "lamp": (1.06, 0.97),
    "laptop": (0.85, 0.55),
}
"""The bounding-box table the reader used before (commit 453dee6), for the comparison."""


def old_read(aspect: float, fill: float) -> str | None:
    """The reader before: nearest (height/width, fill) silhouette, rejected past 0.35."""

    def dist(p: tuple[float, float]) -> float:
        return math.hypot(math.log(aspect / p[0]), 1.5 * (fill - p[1]))

    best = min(OLD_SHAPES, key=lambda c: dist(OLD_SHAPES[c]))
    return best if dist(OLD_SHAPES[best]) <= 0.35 else None


def views_of(
    seed: int, per_object: int, cache: Path | None
) -> list[tuple[np.ndarray, np.ndarray, dict[int, str]]]:
    """Level views of every small object of the house of ``seed``: (RGB, segmentation labelled by
    what each body is, ``{body id: category or "furniture"}``; cached under ``cache`` if given)."""
    hit = cache / f"{seed}-{per_object}.npz" if cache is not None else None
    if hit is not None and hit.exists():
        z = np.load(hit, allow_pickle=False)
        names = {int(k): str(v) for k, v in zip(z["ids"], z["labels"], strict=True)}
        return [(z["rgb"][i], z["seg"][i], names) for i in range(len(z["rgb"]))]
    rng = np.random.default_rng(seed)
    spec = generate_house(rng, 6, objects_per_room=(2, 4))
    sim = HouseSim(spec, width=320, height=240)
    category = {it.name: it.category for it in spec.items if it.kind == "object"}
    colour = {it.name: it.color for it in spec.items if it.kind == "object"}
    names = {
        uid: f"{category[n]}:{colour[n]}" if n in category else "furniture" for n, uid in sim.uid.items()
    }
    out = []
    for obj in [it for it in spec.items if it.kind == "object"]:
        ox, oy, _ = obj.position
        for _ in range(per_object):
            for _try in range(40):
                d = rng.uniform(0.7, 3.5)
                a = rng.uniform(-math.pi, math.pi)
                x, y = ox + d * math.cos(a), oy + d * math.sin(a)
                if spec.room_at(x, y) == obj.room and blocker_at(spec, x, y) is None:
                    break
            else:
                continue
            yaw = math.degrees(math.atan2(oy - y, ox - x)) + rng.uniform(-35, 35)
            frame = sim.render(Pose(x=x, y=y, z=1.5, yaw=yaw, pitch=0))
            out.append((frame.rgb, frame.segmentation.astype(np.int16), names))
    sim.close()
    if hit is not None and out:
        hit.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            hit,
            rgb=np.stack([o[0] for o in out]),
            seg=np.stack([o[1] for o in out]),
            ids=np.array(list(names)),
            labels=np.array(list(names.values())),
        )
    return out


def harvest(seeds: range, per_object: int, cache: Path | None = None) -> list[dict[str, object]]:
    """Every candidate blob of every view, with its true label and its features."""
    rows: list[dict[str, object]] = []
    for seed in seeds:
        for rgb, seg, names in views_of(seed, per_object, cache):
            view = analyse_array(rgb)
            floor = floor_labels(rgb) >= 0
            h, w = view.height, view.width
            for colour, blobs in view.blobs.items():
                for b in blobs:
                    if b.area < house_objects.MIN_AREA or b.height > 0.3 * h or b.width > 0.3 * w:
                        continue
                    if b.top < h * 0.45 or b.bottom >= h:
                        continue
                    under = seg[b.top : b.bottom, b.left : b.left + b.width][b.mask]
                    ids, counts = np.unique(under, return_counts=True)
                    what = names.get(int(ids[counts.argmax()]), "furniture")
                    share = counts.max() / counts.sum()
                    label, _, true_colour = what.partition(":")
                    if share <= 0.5:
                        label = "furniture"
                    rows.append(
                        {
                            "seed": seed,
                            "label": label,
                            "colour_ok": label == "furniture" or true_colour == colour,
                            "area": b.area,
                            "old": old_read(b.height / max(1, b.width), b.extent),
                            "x": house_objects.features(view, b, floor),
                        }
                    )
    return rows


def fit(rows: list[dict[str, object]]) -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
    """Mean and spread of every feature per label (spreads floored so no feature dominates)."""
    by: dict[str, list[np.ndarray]] = defaultdict(list)
    for r in rows:
        if r["label"] == "furniture" or int(r["area"]) >= house_objects.MIN_AREA:  # type: ignore[call-overload]
            by[str(r["label"])].append(r["x"])  # type: ignore[arg-type]
    out = {}
    for label in [*SMALL_OBJECTS, "furniture"]:
        x = np.array(by[label])
        mean = x.mean(axis=0)
        spread = np.maximum(x.std(axis=0), 0.03)
        out[label] = (tuple(round(float(v), 3) for v in mean), tuple(round(float(v), 3) for v in spread))
    return out


def choose_bias(rows: list[dict[str, object]]) -> float:
    """The furniture bias that reads the most fit-seed blobs right (objects and furniture alike)."""

    def right(bias: float) -> int:
        house_objects.FURNITURE_BIAS = bias
        want = [None if r["label"] == "furniture" else r["label"] for r in rows]
        return sum(house_objects.recognise_x(r["x"])[0] == w for r, w in zip(rows, want, strict=True))  # type: ignore[arg-type]

    return max((round(b, 1) for b in np.arange(-2.0, 2.01, 0.25)), key=right)


def report(rows: list[dict[str, object]]) -> None:
    """Per category: share read right, before and after, near and far; furniture passed off."""
    print(
        f"{'category':10} {'n near':>6} {'before':>7} {'after':>6} | {'n far':>5} {'before':>7} {'after':>6}"
    )
    totals = defaultdict(lambda: [0, 0, 0])
    for label in [*SMALL_OBJECTS, "furniture"]:
        cells = []
        for near in (True, False):
            sel = [
                r for r in rows if r["label"] == label and (int(r["area"]) >= house_objects.NEAR_AREA) == near
            ]  # type: ignore[call-overload]
            want = None if label == "furniture" else label
            old = sum(1 for r in sel if r["old"] == want)
            new = sum(1 for r in sel if house_objects.recognise_x(r["x"])[0] == want)  # type: ignore[arg-type]
            n = max(1, len(sel))
            cells.append(f"{len(sel):6d} {old / n:7.2f} {new / n:6.2f}")
            if label != "furniture":
                t = totals["near" if near else "far"]
                t[0] += len(sel)
                t[1] += old
                t[2] += new
        print(f"{label:10} " + " | ".join(cells))
    for k, (n, old, new) in totals.items():
        print(f"all objects, {k}: n={n}, before {old / max(1, n):.2f}, after {new / max(1, n):.2f}")
    claimed_old = [r for r in rows if r["old"] is not None]
    claimed_new = [r for r in rows if house_objects.recognise_x(r["x"])[0] is not None]  # type: ignore[arg-type]
    for name, claimed, key in (("before", claimed_old, "old"), ("after", claimed_new, None)):
        right = sum(
            1
            for r in claimed
            if (r[key] if key else house_objects.recognise_x(r["x"])[0]) == r["label"]  # type: ignore[arg-type]
        )
        print(
            f"{name}: {len(claimed)} blobs read as objects, {right / max(1, len(claimed)):.2f} of them right"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", default="9200-9205", help="seed range to fit on (A-B, inclusive)")
    ap.add_argument("--check", default="9220-9223", help="held-out seed range to check on")
    ap.add_argument("--per-object", type=int, default=3, help="views of each object")
    ap.add_argument("--table-only", action="store_true", help="print the fitted table and stop")
    ap.add_argument(
        "--cache", type=Path, default=None, help="keep rendered views here (re-runs skip rendering)"
    )
    args = ap.parse_args()

    def span(s: str) -> range:
        a, b = (int(v) for v in s.split("-"))
        return range(a, b + 1)

    t0 = time.process_time()
    train = harvest(span(args.fit), args.per_object, args.cache)
    table = fit(train)
    print("LOOKS = {")
    for k, (m, s) in table.items():
        print(f'    "{k}": ({m}, {s}),')
    print("}")
    house_objects.LOOKS.clear()
    house_objects.LOOKS.update(table)
    house_objects.FURNITURE_BIAS = choose_bias(train)
    print(f"FURNITURE_BIAS = {house_objects.FURNITURE_BIAS}")
    if args.table_only:
        return
    test = harvest(span(args.check), args.per_object, args.cache)
    print(f"held-out seeds {args.check}: {len(test)} candidate blobs")
    report(test)
    print(f"CPU {time.process_time() - t0:.0f} s")


if __name__ == "__main__":
    main()
