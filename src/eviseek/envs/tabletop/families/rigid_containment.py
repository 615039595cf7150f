"""Physical Structure / Rigid Containment: which container does an object best fit inside?

Two question forms (designs):

* **which container** (ESI-Bench's ``storage`` form, drawn by ``paper`` and ``test``): three open
  bins whose inner openings grow by a factor of 1.3 from one to the next (the smallest 6-7 cm),
  and a cube, ball or cylinder; "which container does it best fit inside?" (the question says
  what fitting means: at rest between the walls, its middle below the rim), answered with a bin's
  name; the best fit is the smallest bin it fits inside. The design says which of the three that
  is (``smallest``, ``middle``, ``largest``, in turn): the object's footprint is 80-90 per cent of
  that bin's opening and at least 108 per cent of the next smaller one's. The bins stand in a
  row across the first view at depths 0-25 cm apart, drawn so that apparent size does not rank
  them, and the options list them in a shuffled order. Actions are ESI-Bench's: ``pick_up``,
  ``put_inside(object, bin)`` (physics decides whether it ends inside) and ``put_back``.
  Ground truth: ``put_inside`` into every bin in turn, smallest first, each run by the same
  manipulator the agent uses; the answer is the smallest bin the object ended inside (a draw
  where that is not the designed bin is drawn again). Decisive evidence: the object visible, the
  answer bin visible, a frame after a ``put_inside`` of the object into the answer bin showing
  both, and (unless the answer is the smallest) a frame after one into the next smaller bin.
* **does it fit** (ours, a named extra kept in ``dev``): yes or no, one bin; described below.

Does-it-fit scene: an open bin (static) and a candidate object (cube, ball or cylinder) whose footprint is
either 80-92 per cent of the bin's inner opening (it fits) or 108-125 per cent (it does not),
placed at a different distance from the initial camera than the bin so perspective hides the
difference; cubes are turned to line up with the bin. Two distractors stand elsewhere.

Ground truth: by simulation. ``put_inside(object, bin)`` is run in the simulator exactly as the
agent's action would run it (release above the opening, simulate to rest); ``yes`` when the
object ends inside the walls, below the rim.

Decisive evidence (3 pieces): the object visible (>= 50% of its unoccluded area), the bin visible,
and either a frame taken after a ``put_inside`` of the object showing both, or a frame showing
both at depths within 15 per cent of each other while looking down at least 30 deg (a fair size
comparison that sees into the opening).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    PlacementError,
    colors,
    make_object,
    option_contract,
    orbit_pose,
    pick,
    scatter_distractors,
    unit,
    yes_no_contract,
)
from eviseek.envs.tabletop.families._physical import container
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import AnyOf, Evidence, OutcomeEvidence, ViewEvidence

SIZES = ("smallest", "middle", "largest")
"""Designs of the which-container form: which of the three bins (by opening) is the best fit."""
FIT_DESIGNS = ("fits", "does-not-fit")
"""Designs of the does-it-fit form (ours)."""
FITS_MEANS = (
    "An object fits inside a container when, dropped into its opening, it comes to rest between "
    "the walls with its middle below the rim (a tall one may stick out above the rim)."
)
"""What "fits inside" means, said in the question (version 11): the simulator's test
(``Manipulator.is_inside``) asks that much, and the larger objects stand taller than the bins' 7 cm
(a 125 mm cylinder sticks out 55 mm), so "inside" alone claimed more than the physics checks."""
STEP = 1.3
"""Each bin's opening over the next smaller one's (ours: wide enough that an object 80-90 per
cent of one opening is at least 108 per cent of the next smaller one's)."""


class RigidContainmentFamily(TaskFamily):
    """Rigid Containment."""

    family = "Physical Structure"
    subcategory = "Rigid Containment"
    slug = "rigid_containment"
    manipulations = ("pick_up", "put_inside", "place_on_table", "put_back")
    designs = ("smallest", "fits", "middle", "does-not-fit", "largest")
    esi_designs = SIZES

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, str(rng.choice(self.designs)))

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        if design is None:
            return self.generate(rng)
        if design in SIZES:
            return self._which(rng, SIZES.index(design))
        if design not in FIT_DESIGNS:
            raise RuntimeError(f"{self.slug}: unknown design {design!r}")
        return self._fits(rng, design == "fits")

    def _which(self, rng: np.random.Generator, answer: int) -> TaskDraft:
        cols = colors(rng, 5)
        cat = pick(rng, ["cube", "ball", "cylinder"])
        smallest = float(rng.uniform(0.06, 0.07))
        openings = [smallest * STEP**k for k in range(3)]
        lower = openings[answer - 1] * 1.08 if answer > 0 else 0.0
        size = max(openings[answer] * float(rng.uniform(0.8, 0.9)), lower)
        heading = float(rng.uniform(0, 360))
        fwd, side = unit(heading), unit(heading + 90)
        centre = np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.06, 0.06)])
        # The bins stand in a row across the view, in a shuffled order, each at its own depth:
        # a larger bin tends to stand farther back, so apparent size does not rank them.
        order = [int(i) for i in rng.permutation(3)]
        depths = sorted(float(d) for d in rng.uniform(-0.05, 0.2, size=3))
        by_size = sorted(range(3), key=lambda k: openings[k])
        if bool(rng.integers(2)):
            by_size = by_size[::-1]
        bins = []
        for slot, k in enumerate(order):
            depth = depths[by_size.index(k)]
            xy = centre + side * (slot - 1) * 0.17 + fwd * depth
            w = openings[k]
            bins.append(
                container(f"{cols[k]}_bin", cols[k], (float(xy[0]), float(xy[1])), (w, w, 0.07), yaw=heading)
            )
        obj_xy = centre - fwd * float(rng.uniform(0.16, 0.2)) + side * float(rng.uniform(-0.1, 0.1))
        obj = make_object(
            cat, cols[3], (float(obj_xy[0]), float(obj_xy[1])), size, yaw=heading, role="target"
        )
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.04),
            heading + 180,
            float(rng.uniform(8, 14)),
            float(rng.uniform(0.6, 0.72)),
        )
        names = [b.name for b in bins]
        options = [names[int(i)] for i in rng.permutation(3)]
        listed = ", the ".join(n.replace("_", " ") for n in options[:2])
        on = obj.name.replace("_", " ")
        by_opening = [f"{cols[k]}_bin" for k in range(3)]
        return TaskDraft(
            design=SIZES[answer],
            scene=SceneSpec(objects=[*bins, obj], camera=camera),
            text=(
                f"{FITS_MEANS} The best fit is the smallest container an object fits inside. Which "
                "container does "
                f"the {on} best fit inside: the {listed} or the {options[2].replace('_', ' ')}?"
            ),
            contract=option_contract(options, "Answer with the container's name."),
            guidance=(
                "Bins at different distances are hard to compare by eye. Test it: "
                "put_inside(object, target) drops the object into a bin and reports whether it ended "
                "inside; put_back returns it. If it fits in more than one, the smaller bin is the "
                "better fit. " + CAMERA_GUIDANCE
            ),
            metadata={
                "form": "which",
                "object": obj.name,
                "containers": by_opening,
                "designed_answer": by_opening[answer],
            },
        )

    def _fits(self, rng: np.random.Generator, fits: bool) -> TaskDraft:
        cols = colors(rng, 4)
        cat = pick(rng, ["cube", "ball", "cylinder"])
        inner_w = float(rng.uniform(0.07, 0.09))
        ratio = float(rng.uniform(0.8, 0.92)) if fits else float(rng.uniform(1.08, 1.25))
        heading = float(rng.uniform(0, 360))
        fwd, side = unit(heading), unit(heading + 90)
        centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        # One of the two stands 0.2-0.3 m nearer the camera than the other.
        depth = float(rng.uniform(0.2, 0.3)) * float(rng.choice([-1.0, 1.0]))
        bin_xy = centre + fwd * depth / 2 + side * 0.08
        obj_xy = centre - fwd * depth / 2 - side * 0.08
        box = container(
            f"{cols[0]}_bin",
            cols[0],
            (float(bin_xy[0]), float(bin_xy[1])),
            (inner_w, inner_w, 0.07),
            yaw=heading,
        )
        obj = make_object(
            cat, cols[1], (float(obj_xy[0]), float(obj_xy[1])), inner_w * ratio, yaw=heading, role="target"
        )
        placed = [((float(bin_xy[0]), float(bin_xy[1])), 0.09), ((float(obj_xy[0]), float(obj_xy[1])), 0.08)]
        extras = scatter_distractors(
            rng, cols[2:], ["cone", "pyramid"], placed, radius=0.04, gap=0.06, scale=0.05
        )
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.04),
            heading + 180,
            float(rng.uniform(8, 14)),
            float(rng.uniform(0.6, 0.75)),
        )
        on, bn = obj.name.replace("_", " "), box.name.replace("_", " ")
        return TaskDraft(
            design="fits" if fits else "does-not-fit",
            scene=SceneSpec(objects=[box, obj, *extras], camera=camera),
            text=f"Does the {on} fit inside the {bn}? {FITS_MEANS}",
            contract=yes_no_contract(),
            guidance=(
                "Sizes are hard to compare when one object is nearer to you. Compare the object with "
                "the bin's opening from a view where both are at the same distance, looking down into "
                "the bin, or test it: put_inside(object, target) drops the object into the bin and "
                "reports whether it ended inside; put_back returns it. " + CAMERA_GUIDANCE
            ),
            metadata={"object": obj.name, "container": box.name, "fits_by_design": fits},
        )

    def manipulable(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[str]:
        return [metadata["object"]]

    def targets(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[str]:
        if metadata.get("form") == "which":
            return list(metadata["containers"])
        return [metadata["container"]]

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        m = draft.metadata
        if m.get("form") == "which":
            bins = list(m["containers"])  # smallest opening first
            hand = world.manipulator
            answer = None
            for name in bins:
                fb = hand.execute("put_inside", {"object": m["object"], "target": name}, [m["object"]], bins)
                back = hand.execute("put_back", {"object": m["object"]}, [m["object"]], bins)
                if not back.success:
                    raise RuntimeError(f"{self.slug}: put_back failed after {name}: {back.reason}")
                if fb.success:
                    answer = name
                    break
            if answer != m["designed_answer"]:
                raise PlacementError(f"the object ended in {answer}, not the designed {m['designed_answer']}")
            return answer
        fb = world.manipulator.execute(
            "put_inside", {"object": m["object"], "target": m["container"]}, [m["object"]], [m["container"]]
        )
        return "yes" if fb.success else "no"

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        if metadata.get("form") == "which":
            o, bins = metadata["object"], list(metadata["containers"])
            best = metadata["designed_answer"]
            k = bins.index(best)
            pieces: list[Evidence] = [
                ViewEvidence(objects=[o], label=f"{o} visible"),
                ViewEvidence(objects=[best], label=f"{best} visible"),
                OutcomeEvidence(
                    action="put_inside",
                    args={"object": o, "target": best},
                    show=[o, best],
                    min_fraction=0.3,
                    label=f"{o} put inside {best}, seen",
                ),
            ]
            if k > 0:
                pieces.append(
                    OutcomeEvidence(
                        action="put_inside",
                        args={"object": o, "target": bins[k - 1]},
                        show=[o, bins[k - 1]],
                        min_fraction=0.3,
                        label=f"{o} tried in the smaller {bins[k - 1]}, seen",
                    )
                )
            return pieces
        o, b = metadata["object"], metadata["container"]
        return [
            ViewEvidence(objects=[o], label=f"{o} visible"),
            ViewEvidence(objects=[b], label=f"{b} visible"),
            AnyOf(
                options=[
                    OutcomeEvidence(action="put_inside", args={"object": o}, show=[o, b], min_fraction=0.3),
                    ViewEvidence(objects=[o, b], max_depth_ratio=1.15, max_pitch=-30.0),
                ],
                label="the put_inside outcome seen, or both compared side by side from above",
            ),
        ]
