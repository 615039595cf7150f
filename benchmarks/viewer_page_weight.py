"""Episode page weight and write time for the viewer's image modes, measured side by side.

Renders a 30-step orbit around a PyBullet tabletop (TinyRenderer, 640x480, objects from
``pybullet_data``), saves it as an EviSeek-style trajectory (every frame a step, 8 frames kept on
the board and sent to the answer), then writes the same episode page three ways in one process:

* ``embed`` at the default 480-pixel JPEG thumbnails (one self-contained file),
* ``embed`` at full resolution (``max_side`` 4096: JPEG, no downscaling),
* ``copy`` (full-resolution PNG files next to the page, linked relatively).

It prints bytes on disk (page plus copied files) and the median write time of each, and the
ratios against the default.

    python benchmarks/viewer_page_weight.py [--steps 30] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from eviseek._lazy import require
from eviseek.types import (
    Action,
    BoardEvent,
    EvidenceItem,
    Feedback,
    Image,
    StepRecord,
    Trajectory,
)
from eviseek.types.plans import Demand, EviSeekPlan, Subtask
from eviseek.viewer import write_episode_page


def render_orbit(steps: int, width: int = 640, height: int = 480) -> list[Image]:
    """Frames of a camera circling a table with a few objects on it."""
    p = require("pybullet", "sim", "rendering benchmark frames")
    pd = require("pybullet_data", "sim", "rendering benchmark frames")
    cid = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pd.getDataPath(), physicsClientId=cid)
        p.loadURDF("plane.urdf", physicsClientId=cid)
        p.loadURDF("table/table.urdf", [0, 0, 0], physicsClientId=cid)
        for i, (x, y) in enumerate([(-0.2, 0.0), (0.0, 0.1), (0.2, 0.2)]):
            body = p.loadURDF("cube_small.urdf", [x, y, 0.66], globalScaling=2.0, physicsClientId=cid)
            colour = [(0.9, 0.1, 0.1, 1), (0.1, 0.3, 0.9, 1), (0.1, 0.7, 0.2, 1)][i]
            p.changeVisualShape(body, -1, rgbaColor=colour, physicsClientId=cid)
        proj = p.computeProjectionMatrixFOV(60, width / height, 0.05, 10, physicsClientId=cid)
        frames = []
        for k in range(steps + 1):
            yaw = 2 * math.pi * k / (steps + 1)
            eye = [1.2 * math.cos(yaw), 1.2 * math.sin(yaw), 1.3 + 0.02 * k]
            view = p.computeViewMatrix(eye, [0, 0, 0.65], [0, 0, 1], physicsClientId=cid)
            _, _, rgba, _, _ = p.getCameraImage(
                width, height, view, proj, renderer=p.ER_TINY_RENDERER, physicsClientId=cid
            )
            np = require("numpy", "core")
            frames.append(Image.from_array(np.reshape(np.asarray(rgba, dtype=np.uint8), (height, width, 4))))
        return frames
    finally:
        p.disconnect(cid)


def build_trajectory(frames: list[Image], kept_every: int = 4) -> Trajectory:
    """An EviSeek-shaped trajectory over ``frames`` with every ``kept_every``-th frame kept."""
    steps = [
        StepRecord(
            index=i,
            action=Action(name="turn_left"),
            feedback=Feedback(operation="turn_left"),
            image=img,
            frame_id=i,
            intent="ORBIT",
            subtask=1 + (i - 1) * 3 // max(1, len(frames) - 1),
        )
        for i, img in enumerate(frames[1:], start=1)
    ]
    kept = [s for s in steps if s.index % kept_every == 0]
    board = [
        BoardEvent(
            item=EvidenceItem(id=n, frame_id=s.frame_id, step_index=s.index, image=s.image, demand=1),
            at_step=s.index,
        )
        for n, s in enumerate(kept, start=1)
    ]
    plan = EviSeekPlan(
        demands=[Demand(id=1, text="the layout of the three cubes")],
        subtasks=[Subtask(id=k, goal=f"arc {k}", demand=1, status="done") for k in (1, 2, 3)],
        mode="active",
    )
    return Trajectory(
        episode_id="bench",
        question_id="bench-q",
        agent="eviseek",
        initial_image=frames[0],
        plan=plan,
        steps=steps,
        board=board,
        answer_images=[s.image for s in kept if s.image is not None],
        answer_frame_ids=[s.frame_id for s in kept],
    )


def disk_bytes(page: Path) -> int:
    """The page plus the files folder ``copy`` mode writes next to it."""
    files = page.parent / f"{page.stem}_files"
    extra = sum(f.stat().st_size for f in files.iterdir()) if files.is_dir() else 0
    return page.stat().st_size + extra


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    t0 = time.perf_counter()
    frames = render_orbit(args.steps)
    print(f"rendered {len(frames)} frames of 640x480 in {time.perf_counter() - t0:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        ep = Path(tmp, "episode")
        build_trajectory(frames).save(ep)
        png_bytes = sum(f.stat().st_size for f in (ep / "images").iterdir())
        print(f"saved episode: {len(list((ep / 'images').iterdir()))} PNG files, {png_bytes / 1e6:.2f} MB\n")
        modes = [
            ("embed, 480 px thumbnails (default)", {"images": "embed", "max_side": 480}),
            ("embed, full resolution", {"images": "embed", "max_side": 4096}),
            ("copy, full-resolution PNG files", {"images": "copy"}),
        ]
        rows = []
        for label, kwargs in modes:
            times = []
            size = 0
            for r in range(args.repeats):
                out = Path(tmp, f"out{r}", "page.html")
                start = time.perf_counter()
                write_episode_page(ep, out, **kwargs)  # type: ignore[arg-type]
                times.append(time.perf_counter() - start)
                size = disk_bytes(out)
                shutil.rmtree(out.parent)
            rows.append((label, size, statistics.median(times)))
        base_size, base_time = rows[0][1], rows[0][2]
        print(f"{'mode':38} {'bytes on disk':>14} {'x default':>10} {'write s':>9} {'x default':>10}")
        for label, size, sec in rows:
            print(f"{label:38} {size:>14,} {size / base_size:>10.2f} {sec:>9.3f} {sec / base_time:>10.2f}")


if __name__ == "__main__":
    main()
