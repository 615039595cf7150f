"""Physical Dynamics / Stacking & Stability: in what order do three objects stack stably?

Scene: three objects side by side on the table: two with flat tops (cubes of different sizes or
an upright cylinder) and one that nothing can rest on (a ball, a cone or a pyramid). Which flat
object may go on which depends on their sizes. The agent can test stacks with ``pick_up``,
``put_on``, ``place_on_table`` and ``put_back``; ``put_on`` reports the ``current_stack``.

Ground truth: by simulation. Every one of the six orders is built in a fresh copy of the scene
with the same ``put_on`` the agent uses; an order is stable when both placements succeed and the
final stack reads bottom to top in that order. The answer is the list of stable orders (any one
scores correct), each as ``bottom|middle|top``. Ground truth also records them in
``metadata["stable_orders"]``.

Decisive evidence (2 pieces): a frame, taken after a successful ``put_on`` of a stable order's
middle object onto its bottom object, showing both; and one after a successful ``put_on`` of a
stable order's top object onto its middle object, showing both.
"""

from __future__ import annotations

from itertools import pairwise, permutations
from typing import Any

import numpy as np

from eviseek.envs.tabletop.families import _common as c
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.manipulation import Manipulator
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.sim import TabletopSim
from eviseek.envs.tabletop.support import AnyOf, Evidence, OutcomeEvidence
from eviseek.types import AnswerContract


def order_is_stable(sim: TabletopSim, scene: SceneSpec, order: tuple[str, ...]) -> bool:
    """Rebuild ``scene`` in ``sim`` and stack ``order`` bottom to top with ``put_on``."""
    sim.build(scene.model_copy(deep=True))
    m = Manipulator(sim)
    names = list(order)
    for lower, upper in pairwise(order):
        if not m.execute("put_on", {"object": upper, "target": lower}, names, names).success:
            return False
    return m.stack_of(order[-1]) == names


class Family(TaskFamily):
    """Stacking & Stability."""

    family = "Physical Dynamics"
    subcategory = "Stacking & Stability"
    slug = "stacking_and_stability"
    manipulations = ("pick_up", "put_on", "place_on_table", "put_back")
    hide_from_first_view = False  # the evidence is the outcome of tests

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cols = c.colors(rng, 3)
        flat = c.pick(rng, [("cube", "cube"), ("cube", "cylinder"), ("cylinder", "cube")])
        top = c.pick(rng, ["ball", "cone", "pyramid"])
        big, small = float(rng.uniform(0.075, 0.09)), float(rng.uniform(0.04, 0.05))
        cats = [flat[0], flat[1], top]
        scales = [big, small, float(rng.uniform(0.045, 0.055))]
        order = rng.permutation(3)
        heading = float(rng.uniform(0, 360))
        side = c.unit(heading + 90)
        centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        objs = []
        for slot, k in enumerate(order):
            xy = centre + side * (slot - 1) * 0.16
            objs.append(
                c.make_object(
                    cats[int(k)],
                    cols[int(k)],
                    (float(xy[0]), float(xy[1])),
                    scales[int(k)],
                    yaw=heading,
                    mass=0.2,
                    friction=0.8,
                )
            )
        camera = c.orbit_pose(
            (float(centre[0]), float(centre[1]), 0.04),
            heading + 180 + float(rng.uniform(-20, 20)),
            float(rng.uniform(15, 25)),
            0.6,
        )
        names = [o.name for o in objs]
        listed = ", ".join(n.replace("_", " ") for n in names)
        return TaskDraft(
            scene=SceneSpec(objects=objs, camera=camera),
            text=f"In which order, from bottom to top, can the {listed} be stacked into one stable tower?",
            contract=AnswerContract(
                kind="sequence", options=names, format_hint="Bottom to top, separated by commas."
            ),
            guidance=(
                "Shapes and sizes decide what can carry what. Test candidate stacks: pick_up an object, "
                "put_on(object, target) to place it on another and read current_stack; place_on_table "
                "or put_back undoes a try. " + c.CAMERA_GUIDANCE
            ),
            metadata={"objects": names},
        )

    def ground_truth(self, world: World, draft: TaskDraft) -> list[str]:
        scene = world.scene
        stable = [
            "|".join(p)
            for p in permutations(draft.metadata["objects"])
            if order_is_stable(world.sim, scene, p)
        ]
        world.sim.build(scene.model_copy(deep=True))
        draft.metadata["stable_orders"] = stable
        return stable

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        orders = [o.split("|") for o in metadata.get("stable_orders", [])]

        def placed(lower: int, upper: int) -> AnyOf:
            opts = [
                OutcomeEvidence(
                    action="put_on",
                    args={"object": o[upper], "target": o[lower]},
                    require_success=True,
                    show=[o[lower], o[upper]],
                    min_fraction=0.3,
                )
                for o in orders
            ]
            return AnyOf(options=opts, label=f"a stable {'middle' if upper == 1 else 'top'} placement seen")

        return [placed(0, 1), placed(1, 2)]
