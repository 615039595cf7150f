"""Physical Dynamics / Stacking & Stability: in what order do three objects stack stably?

Scene: three objects side by side on the table, drawn from one of four designs so that the number
of stable orders varies (1, 2 or 4 of the 6) and some plausible-looking orders fail:

- two carriers (cube or upright cylinder, one large, one small) and a cap (ball, cone or pyramid,
  which nothing can rest on): 2 stable orders, the cap on top;
- an open bin, a carrier wider than the bin's opening and one narrower: the wide one rests on the
  rim, the narrow one drops inside instead of staying on top: 4 stable orders;
- a bin, a wide carrier and a cap that is either wider than the opening (a cone or pyramid; it
  rests on the rim: 2 orders) or narrower (it drops in: 1 order);
- a bin, a narrow carrier and a wide cone or pyramid: only narrow carrier, bin, cap stands
  (1 order).

Caps wider than a bin's opening are never balls: a ball cradled in the rim can carry a block or
not depending on fine details of the drop, which no look at the scene could settle.

Wide means at least 1.6 cm wider than the bin's inner opening and narrow at least 1.2 cm
narrower, so physics decides clearly. The agent can test stacks with ``pick_up``, ``put_on``,
``place_on_table`` and ``put_back``; ``put_on`` reports the ``current_stack``.

Objects are named by colour alone (``red_object``): what each one is, and how wide, is for the
agent to see. Named by kind, the text settled the question: "carriers at the bottom, then the
bin, then caps" was right in 23 of 25 questions, against 36% for a random order. Colours and
slots are drawn at random, so any order of the listed names is right as often as a random
order.

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

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    make_object,
    orbit_pose,
    pick,
    unit,
)
from eviseek.envs.tabletop.families._physical import container
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.manipulation import Manipulator
from eviseek.envs.tabletop.scene import ObjectSpec, SceneSpec
from eviseek.envs.tabletop.sim import TabletopSim
from eviseek.envs.tabletop.support import AnyOf, Evidence, OutcomeEvidence
from eviseek.types import AnswerContract

CARRIERS = ("cube", "cylinder")
"""Flat-topped objects that can carry another one."""
CAPS = ("ball", "cone", "pyramid")
"""Objects nothing can rest on: they only go on top."""
POINTED = ("cone", "pyramid")
"""Caps used where they are wider than a bin's opening and rest on its rim."""
DESIGNS = ("two_carriers_and_cap", "bin_wide_and_narrow", "bin_wide_and_cap", "bin_narrow_and_cap")
"""Scene designs, drawn with equal odds (see the module docstring)."""
BIN_WALL = 0.008
WIDE_MARGIN = 0.016
"""Metres by which a 'wide' object exceeds a bin's inner opening (it rests on the rim)."""
NARROW_MARGIN = 0.012
"""Metres by which a 'narrow' object is smaller than the opening (it drops inside)."""


def order_is_stable(sim: TabletopSim, scene: SceneSpec, order: tuple[str, ...]) -> bool:
    """Rebuild ``scene`` in ``sim`` and stack ``order`` bottom to top with ``put_on``."""
    sim.build(scene.model_copy(deep=True))
    m = Manipulator(sim)
    names = list(order)
    for lower, upper in pairwise(order):
        if not m.execute("put_on", {"object": upper, "target": lower}, names, names).success:
            return False
    return m.stack_of(order[-1]) == names


class StackingAndStabilityFamily(TaskFamily):
    """Stacking & Stability."""

    family = "Physical Dynamics"
    subcategory = "Stacking & Stability"
    slug = "stacking_and_stability"
    manipulations = ("pick_up", "put_on", "place_on_table", "put_back")
    hide_from_first_view = False  # the evidence is the outcome of tests

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cols = colors(rng, 3)
        heading = float(rng.uniform(0, 360))
        side = unit(heading + 90)
        centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        items = self._design(rng)
        order = rng.permutation(3)
        objs: list[ObjectSpec] = []
        for slot, k in enumerate(order):
            xy = centre + side * (slot - 1) * 0.17
            cat, scale, extra = items[int(k)]
            col = cols[int(k)]
            where = (float(xy[0]), float(xy[1]))
            if cat == "bin":
                objs.append(
                    container(
                        f"{col}_object",
                        col,
                        where,
                        (scale, scale, extra),
                        wall=BIN_WALL,
                        yaw=heading,
                        mass=0.15,
                        movable=True,
                    )
                )
            else:
                objs.append(
                    make_object(
                        cat, col, where, scale, yaw=heading, mass=0.2, friction=0.8, name=f"{col}_object"
                    )
                )
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.04),
            heading + 180 + float(rng.uniform(-20, 20)),
            float(rng.uniform(15, 25)),
            0.6,
        )
        names = [o.name for o in objs]
        listed = (
            ", the ".join(n.replace("_", " ") for n in names[:-1]) + " and the " + names[-1].replace("_", " ")
        )
        return TaskDraft(
            scene=SceneSpec(objects=objs, camera=camera),
            text=f"In which order, from bottom to top, can the {listed} be stacked into one stable tower?",
            contract=AnswerContract(
                kind="sequence", options=names, format_hint="Bottom to top, separated by commas."
            ),
            guidance=(
                "Shapes and sizes decide what can carry what; an object set on an open bin may drop "
                "inside instead of resting on the rim. Test candidate stacks: pick_up an object, "
                "put_on(object, target) to place it on another and read current_stack; place_on_table "
                "or put_back undoes a try. " + CAMERA_GUIDANCE
            ),
            metadata={"objects": names},
        )

    @staticmethod
    def _design(rng: np.random.Generator) -> list[tuple[str, float, float]]:
        """Three (category, scale, bin depth) items of one of the four designs (module docstring).

        A bin's scale is its inner opening; every other scale is the object's width.
        """

        def carrier() -> str:
            return str(pick(rng, list(CARRIERS)))

        cap = str(pick(rng, list(CAPS)))
        design = pick(rng, list(DESIGNS))
        if design == "two_carriers_and_cap":
            return [
                (carrier(), float(rng.uniform(0.075, 0.09)), 0.0),
                (carrier(), float(rng.uniform(0.04, 0.05)), 0.0),
                (cap, float(rng.uniform(0.045, 0.055)), 0.0),
            ]
        inner = float(rng.uniform(0.06, 0.07))
        box = ("bin", inner, float(rng.uniform(0.045, 0.055)))
        wide = inner + float(rng.uniform(WIDE_MARGIN, WIDE_MARGIN + 0.012))
        narrow = inner - float(rng.uniform(NARROW_MARGIN, NARROW_MARGIN + 0.01))
        if design == "bin_wide_and_narrow":
            return [box, (carrier(), wide, 0.0), (carrier(), narrow, 0.0)]
        # A ball wider than the opening would sit cradled in the rim, where it can carry a block or
        # not depending on fine details of the drop; wide caps are therefore pointed.
        pointed = str(pick(rng, list(POINTED)))
        wide_cap = inner + float(rng.uniform(0.018, 0.028))
        if design == "bin_wide_and_cap":
            if rng.integers(2):
                return [box, (carrier(), wide, 0.0), (pointed, wide_cap, 0.0)]
            return [box, (carrier(), wide, 0.0), (cap, narrow, 0.0)]
        return [box, (carrier(), narrow, 0.0), (pointed, wide_cap, 0.0)]

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
