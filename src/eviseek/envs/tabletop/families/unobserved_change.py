"""Temporal Understanding / Unobserved Change: which object was moved while you were away?

Scene: four objects behind an upright board 40 cm wide, in two rows of two (8 and 20 cm behind it,
10 cm either side of its middle). A task-supplied reference image, taken from above the group's far
side, shows the table before the change; then any one of the four (drawn at random) is moved
farther back, 33-37 cm behind the board (``SceneSpec.changes``). The episode starts after the
change, low, on the board's other side, where the board hides every place: neither the first view
nor the reference image narrows down which object moved. (Before version 11 two objects stood in
the open and the moved one was always one of them, so the reference image alone halved the options:
Passive with the reference policy 15 of 30 on ``test`` against a chance of 7.5.) The moved object's
place among the shuffled options is a design, in turn.

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
    unit,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneChange, SceneSpec
from eviseek.envs.tabletop.support import Evidence, ViewEvidence

MOVED_TOLERANCE = 0.05
BOARD_WIDTH = 0.4
"""The board's width (m): wide enough to hide all six places behind it from the first view."""
ROW_DEPTHS = (0.08, 0.2)
"""How far behind the board (m) the two rows of places stand."""
SLOT = 0.1
"""How far either side of the board's middle (m) the places of a row stand."""
BACK_DEPTH = (0.33, 0.37)
"""How far behind the board (m) the moved object ends: at least 12 cm from any place, so the move
shows plainly from above, and still in the board's shadow as the first view sees it."""
REFERENCE_AT = 0.2
"""How far behind the board (m) the reference camera looks."""


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
        fwd, along = unit(heading), unit(heading + 90)
        board_xy = np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.06, 0.06)])
        board_col = pick(rng, list(BOARD_COLORS))
        board = make_board(
            f"{board_col}_board",
            board_col,
            (float(board_xy[0]), float(board_xy[1])),
            (0.02, BOARD_WIDTH, 0.16),
            heading,
        )
        # Four places behind the board (two rows of two), one object on each, and the moved one
        # goes farther back, still behind the board. Every place is out of the first view, so
        # neither the first view nor the reference image narrows down which object moved.
        places = [board_xy + fwd * depth + along * side for depth in ROW_DEPTHS for side in (-SLOT, SLOT)]
        order = [int(i) for i in rng.permutation(len(places))]
        objs = [
            make_object(
                cat,
                col,
                (float(places[k][0]), float(places[k][1])),
                float(rng.uniform(0.05, 0.06)),
                yaw=heading,
            )
            for cat, col, k in zip(cats, cols, order, strict=True)
        ]
        moved = objs[int(rng.integers(4))]
        to = board_xy + fwd * float(rng.uniform(*BACK_DEPTH)) + along * float(rng.uniform(-SLOT, SLOT))
        change = SceneChange(object=moved.name, position=(r6(to[0]), r6(to[1]), moved.position[2]))
        # Taken from above the far side of the group, where the board hides none of it.
        centre = board_xy + fwd * REFERENCE_AT
        reference = orbit_pose((float(centre[0]), float(centre[1]), 0.0), heading, 60.0, 0.8)
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
                "Compare the table with the reference image. The objects stand behind the board: "
                "look over it from above, find each object of the reference and check whether it "
                "is still where it was. " + CAMERA_GUIDANCE
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
