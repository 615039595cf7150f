"""Action Sequencing / Action Order Inference: in what order were the objects moved?

Scene: a static platform stands behind a tall upright board. A task-supplied reference image,
taken from above and from the side of the board, shows the table before: three objects (cubes
and upright cylinders, 4-5 cm) stand apart on the table, a distractor stands elsewhere, and in half
of the scenes one more object (the resident) already sits on the platform. Then the three objects
were moved one at a time onto the platform, each onto the previous one, so the pile reads, bottom
to top, the resident (if any) and then the moved objects in the order they were moved
(``SceneSpec.changes`` holds their resting poses). The board is 2 cm taller than the pile and the
episode starts low on its other side, so the pile is out of sight at first.

Questions (one of three kinds): which object was moved first (options: the three moved objects
and the resident, or the distractor when there is no resident), which was moved last (options:
the moved objects and the distractor), or the order of all three (a sequence; the question lists
them in a shuffled order).

Ground truth: by simulation. The scene before the moves is rebuilt and the moves are replayed
with the same ``put_on`` an agent would use; the order is read from the simulated pile (bottom to
top, resident and platform left out), and every moved object must come to rest within 1.5 cm of
its recorded final pose (a mismatch is a bug and raises).

Decisive evidence: each moved object visible (>= 50% of its unoccluded area) at its final place
(one piece each), and one frame showing the whole pile (the resident, if any, and every moved
object, each >= 50%), which only a view from the side gives: from straight above the upper
objects cover the lower ones. The reference image (frame id -1) does not count.
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
from eviseek.envs.tabletop.manipulation import PLACE_OFFSET, Manipulator
from eviseek.envs.tabletop.scene import ObjectSpec, SceneChange, SceneSpec, rounded, yaw_quat
from eviseek.envs.tabletop.support import Evidence, ViewEvidence
from eviseek.types import AnswerContract

KINDS = ("first", "last", "order")
"""Question kinds, drawn with equal odds."""
PLATFORM_H = 0.02
"""Platform thickness (m)."""
POSE_TOLERANCE = 0.015
"""Metres a replayed move may end from its recorded pose before generation is called broken."""


def pile_poses(
    base_xy: tuple[float, float], base_top: float, items: list[ObjectSpec]
) -> list[tuple[float, float, float]]:
    """Resting centres of ``items`` piled in order on a support whose top centre is at
    (``base_xy``, ``base_top``), each released where ``put_on`` releases it (the support's centre
    plus the manipulator's small hand offset)."""
    out = []
    x, y, top = base_xy[0], base_xy[1], base_top
    for obj in items:
        x, y = x + PLACE_OFFSET[0], y + PLACE_OFFSET[1]
        out.append((x, y, top + obj.size[2] / 2))
        top += obj.size[2]
    return out


class ActionOrderInferenceFamily(TaskFamily):
    """Action Order Inference."""

    family = "Action Sequencing"
    subcategory = "Action Order Inference"
    slug = "action_order_inference"

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cols = colors(rng, 5)
        heading = float(rng.uniform(0, 360))  # the camera looks along this direction
        fwd = unit(heading)
        board_xy = np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.06, 0.06)])
        plat_xy = board_xy + fwd * float(rng.uniform(0.1, 0.12))
        fixture = pick(rng, list(BOARD_COLORS))
        plat_color = pick(rng, [k for k in BOARD_COLORS if k != fixture])
        platform = ObjectSpec(
            name=f"{plat_color}_platform",
            shape="box",
            category="platform",
            color=plat_color,
            size=(0.11, 0.11, PLATFORM_H),
            position=(r6(plat_xy[0]), r6(plat_xy[1]), PLATFORM_H / 2),
            orientation=yaw_quat(heading),
            mass=0.0,
            role="platform",
            movable=False,
        )

        def stackable(col: str, xy: tuple[float, float], role: str) -> ObjectSpec:
            cat = pick(rng, ["cube", "cylinder"])
            return make_object(
                cat, col, xy, float(rng.uniform(0.04, 0.05)), yaw=float(rng.uniform(0, 90)), role=role
            )

        has_resident = bool(rng.integers(2))
        resident = None
        if has_resident:
            resident = stackable(cols[3], (float(plat_xy[0]), float(plat_xy[1])), "resident")
            resident = resident.model_copy(
                update={"position": (*resident.position[:2], r6(PLATFORM_H + resident.size[2] / 2))}
            )
        placed = [
            ((float(board_xy[0]), float(board_xy[1])), 0.13),
            ((float(plat_xy[0]), float(plat_xy[1])), 0.1),
        ]
        spots = scatter(rng, [0.045] * 4, placed=placed, gap=0.07, region=(-0.5, 0.5, -0.38, 0.38))
        moved = [stackable(col, xy, "moved") for col, xy in zip(cols[:3], spots[:3], strict=True)]
        distractor = make_object(
            pick(rng, ["ball", "cone", "pyramid", "cube"]),
            cols[4],
            spots[3],
            float(rng.uniform(0.045, 0.055)),
            role="distractor",
        )
        below = [resident] if resident is not None else []
        base_top = PLATFORM_H + (resident.size[2] if resident is not None else 0.0)
        finals = pile_poses((float(plat_xy[0]), float(plat_xy[1])), base_top, moved)
        changes = [
            SceneChange(object=o.name, position=rounded(p))  # type: ignore[arg-type]
            for o, p in zip(moved, finals, strict=True)
        ]
        pile_h = base_top + sum(o.size[2] for o in moved)
        board = make_board(
            f"{fixture}_board",
            fixture,
            (float(board_xy[0]), float(board_xy[1])),
            (0.02, float(rng.uniform(0.2, 0.22)), pile_h + 0.02),
            heading,
        )
        reference = orbit_pose((0.0, 0.0, 0.0), heading + float(rng.choice([-90.0, 90.0])), 60.0, 1.1)
        camera = orbit_pose(
            (float(board_xy[0]), float(board_xy[1]), 0.06),
            heading + 180 + float(rng.uniform(-5, 5)),
            float(rng.uniform(4, 8)),
            float(rng.uniform(0.6, 0.7)),
        )
        order = [o.name for o in moved]  # the order they were moved in
        kind = str(pick(rng, list(KINDS)))
        contract: AnswerContract
        if kind == "order":
            listed = [order[int(i)] for i in rng.permutation(3)]
            names = ", the ".join(n.replace("_", " ") for n in listed[:2])
            text = (
                f"After the reference image was taken, the {names} and the "
                f"{listed[2].replace('_', ' ')} were moved one at a time. In what order were they moved?"
            )
            contract = AnswerContract(
                kind="sequence", options=listed, format_hint="First moved to last moved, separated by commas."
            )
        else:
            extra = resident.name if (kind == "first" and resident is not None) else distractor.name
            options = [*order, extra]
            options = [options[int(i)] for i in rng.permutation(len(options))]
            text = (
                "After the reference image was taken, three objects were moved one at a time. "
                f"Which object was moved {kind}?"
            )
            contract = option_contract(options, "Answer with the object's name.")
        objs = [board, platform, *below, *moved, distractor]
        return TaskDraft(
            scene=SceneSpec(objects=objs, camera=camera, reference_cameras=[reference], changes=changes),
            text=text,
            contract=contract,
            guidance=(
                "Compare the table with the reference image: find which objects left their places "
                "and where they went. Objects put on a pile later sit higher up, and something may "
                "have been on the pile before. Look at the pile from the side, not only from above, "
                "so that every layer shows; look behind the board. " + CAMERA_GUIDANCE
            ),
            metadata={
                "kind": kind,
                "order": order,
                "moved": order,
                "resident": resident.name if resident is not None else None,
                "platform": platform.name,
                "distractor": distractor.name,
            },
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        m = draft.metadata
        scene = world.scene
        sim = world.sim
        # Replay the moves on the scene as it was before them.
        sim.build(scene.model_copy(update={"changes": []}, deep=True))
        hand = Manipulator(sim)
        names = scene.names()
        target = m["resident"] or m["platform"]
        for obj in m["order"]:
            fb = hand.execute("put_on", {"object": obj, "target": target}, names, names)
            if not fb.success:
                raise RuntimeError(f"replaying the moves failed at {obj}: {fb.reason}")
            target = obj
        pile = hand.stack_of(target)
        for change in scene.changes:
            got = np.asarray(sim.pose_of(change.object)[0])
            if change.position is None or np.linalg.norm(got - np.asarray(change.position)) > POSE_TOLERANCE:
                raise RuntimeError(
                    f"{change.object} came to rest at {got.round(4).tolist()} in the replay, "
                    f"not at its recorded pose {change.position}"
                )
        moved = set(m["moved"])
        simulated = [n for n in pile if n in moved]
        if len(simulated) != len(moved):
            raise RuntimeError(f"the replayed pile {pile} does not hold every moved object")
        # Leave the world as the episode starts: after the moves.
        sim.build(scene.model_copy(deep=True))
        for change in scene.changes:
            sim.apply_change(change)
        if m["kind"] == "first":
            return simulated[0]
        if m["kind"] == "last":
            return simulated[-1]
        return "|".join(simulated)

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        moved = list(metadata["moved"])
        pieces: list[Evidence] = [
            ViewEvidence(objects=[n], label=f"{n} seen at its new place") for n in moved
        ]
        pile = ([metadata["resident"]] if metadata.get("resident") else []) + moved
        pieces.append(ViewEvidence(objects=pile, label="the whole pile seen from the side"))
        return pieces
