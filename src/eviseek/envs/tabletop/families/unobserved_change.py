"""Temporal Understanding / Unobserved Change: which object was moved while you were away?

Scene: four objects and an upright board. Two of them stand behind the board (as seen from the
initial camera) from the start, 7.5 cm either side of its middle; the other two stand elsewhere.
A task-supplied reference image, taken from above, shows the table before the change; then one
of the two standing elsewhere is moved to the spot between the two behind the board
(``SceneSpec.changes``). The episode starts after the change, low, on the board's other side, so
three objects are out of sight at first, the moved one among them: which ones are missing from
the first view does not tell which one moved. The options list the four in a shuffled order.

Ground truth: the object whose simulated position differs from its position in the reference
scene by more than 5 cm.

Decisive evidence (1 piece): the moved object visible (>= 50% of its unoccluded area) in a frame.
The reference image itself (frame id -1) is not an episode frame and does not count.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.colors import BOARD_COLORS
from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    make_board,
    make_object,
    option_contract,
    orbit_pose,
    pick,
    r6,
    scatter,
    unit,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneChange, SceneSpec
from eviseek.envs.tabletop.support import Evidence, ViewEvidence

MOVED_TOLERANCE = 0.05


class UnobservedChangeFamily(TaskFamily):
    """Unobserved Change."""

    family = "Temporal Understanding"
    subcategory = "Unobserved Change"
    slug = "unobserved_change"
    designs = ("0", "1", "2", "3")
    """Answer designs: the moved object's place among the options, in turn (a random order before
    version 10)."""

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cols = colors(rng, 4)
        cats = pick(rng, ["cube", "cylinder", "ball", "cone", "pyramid"], 4)
        heading = float(rng.uniform(0, 360))
        fwd = unit(heading)
        board_xy = np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.06, 0.06)])
        board_col = pick(rng, list(BOARD_COLORS))
        board = make_board(
            f"{board_col}_board",
            board_col,
            (float(board_xy[0]), float(board_xy[1])),
            (0.02, 0.22, 0.16),
            heading,
        )
        hidden_xy = board_xy + fwd * float(rng.uniform(0.08, 0.1))
        along = unit(heading + 90)
        behind = [hidden_xy + along * 0.075, hidden_xy - along * 0.075]
        placed = [
            ((float(board_xy[0]), float(board_xy[1])), 0.12),
            ((float(hidden_xy[0]), float(hidden_xy[1])), 0.13),
        ]
        spots = scatter(rng, [0.05] * 2, placed=placed, gap=0.07, region=(-0.5, 0.5, -0.38, 0.38))
        spots += [(float(p[0]), float(p[1])) for p in behind]
        objs = [
            make_object(cat, col, xy, float(rng.uniform(0.05, 0.06)))
            for cat, col, xy in zip(cats, cols, spots, strict=True)
        ]
        # Move one of the two standing in the open, the one farther from the hiding place first.
        far = [i for i in (0, 1) if np.linalg.norm(np.asarray(spots[i]) - hidden_xy) > 0.15]
        k = int(far[int(rng.integers(len(far)))]) if far else 0
        moved = objs[k]
        change = SceneChange(
            object=moved.name, position=(r6(hidden_xy[0]), r6(hidden_xy[1]), moved.position[2])
        )
        reference = orbit_pose((0.0, 0.0, 0.0), heading + 180, 60.0, 1.1)
        camera = orbit_pose(
            (float(board_xy[0]), float(board_xy[1]), 0.06),
            heading + 180 + float(rng.uniform(-5, 5)),
            float(rng.uniform(4, 8)),
            0.6,
        )
        names = [objs[int(i)].name for i in rng.permutation(4)]
        return TaskDraft(
            design=str(names.index(change.object)),
            scene=SceneSpec(
                objects=[board, *objs], camera=camera, reference_cameras=[reference], changes=[change]
            ),
            text="One object on the table was moved after the reference image was taken. Which one?",
            contract=option_contract(names, "Answer with the object's name."),
            guidance=(
                "Compare the table with the reference image. Find each object of the reference in the "
                "scene and check whether it is still where it was; look behind the board too. "
                + CAMERA_GUIDANCE
            ),
            metadata={"objects": names, "moved": moved.name},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        moved = [
            o.name
            for o in world.scene.objects
            if o.category != "board"
            and np.linalg.norm(np.asarray(world.sim.pose_of(o.name)[0][:2]) - np.asarray(o.position[:2]))
            > MOVED_TOLERANCE
        ]
        if len(moved) != 1:
            raise RuntimeError(f"expected exactly one moved object, found {moved}")
        return moved[0]

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        m = metadata["moved"]
        return [ViewEvidence(objects=[m], label=f"{m} seen at its new place")]
