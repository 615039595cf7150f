"""Physical Structure / Liquid Volume: how much water two containers hold, tested with water.

Two question forms, alternating by design (``designs``), both over a tall narrow cup and a wide
shallow bowl, whose volumes are hard to compare by eye:

* **overflow** (ours): the source holds water, the target is empty; "if all the water is poured
  into the target, will it overflow?". The water is 70-88 per cent of the target's capacity (no)
  or 115-140 per cent (yes); the target's depth is solved for from the water's volume.
* **capacity, left/right** (ESI-Bench's form: all 136 of its Liquid Volume questions ask which of
  two containers has the larger volume, and its ``pour`` task answers ``left`` or ``right``): both
  containers are empty; the text says which stands on the left and which on the right as seen in
  the first view, and asks which holds more water when filled to the brim. The larger capacity is
  1.15-1.4 times the smaller; which build is larger is a coin flip, and the design puts the
  larger on the left or the right (designs ``larger-left``, ``larger-right``).
* **capacity, by name** (ours, the form before ESI-Bench's answer was followed): the same scene
  and question, answered with a container's name; the design puts the answer first or second
  among the options (``larger-first``, ``larger-second``).

Liquid is simulated state drawn as a translucent slab at the level its volume implies
(``ObjectSpec.state``: ``liquid_ml``); a spill is drawn as a puddle beside the target.

Actions: ``pour(object=source, target=container)`` moves the source's water into the target up to
the rim; the rest spills (feedback: ``poured_ml``, ``spilled_ml``, ``overflowed``, ``source`` and
both levels). In the capacity form ``fill(object)`` also fills a container with water up to its
brim (the paper's "fill obj with water"; feedback names no volume, what it shows is the water);
filling a full container fails. The overflow form does not offer ``fill``: filling would change
its premise (the water to pour is given).

Ground truth, by running the agent's own actions in the simulator: overflow form, ``pour``;
``yes`` when water spilled. Capacity forms, ``fill`` the first container (the first option, or
the left one) and ``pour`` it into the other: the first holds more when the other overflows.

Decisive evidence (3 pieces): both containers visible (>= 50% of their unoccluded area), and in
the overflow form either a frame after a ``pour`` into the target that shows the target or a
frame showing both containers at depths within 15 per cent of each other (a side-by-side
comparison); in the capacity form a frame after a successful ``pour`` (one of a filled container)
into either container that shows the container poured into.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    option_contract,
    orbit_pose,
    unit,
    yes_no_contract,
)
from eviseek.envs.tabletop.families._physical import container
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import AnyOf, Evidence, OutcomeEvidence, ViewEvidence
from eviseek.types import Action, ActionSpec, Feedback

CAPACITY_DESIGNS = ("larger-first", "larger-second")
"""Designs of the capacity form answered by name: the container that holds more is the first or
second option."""
SIDE_DESIGNS = ("larger-left", "larger-right")
"""Designs of ESI-Bench's capacity form: the container that holds more stands on the left or the
right of the first view, and the answer is ``left`` or ``right``."""
ESI_DESIGNS = SIDE_DESIGNS
"""The designs that ask ESI-Bench's own question form (the ``paper`` and ``test`` splits)."""


def pour(world: World, source: str, target: str) -> Feedback:
    """Move all of ``source``'s liquid into ``target``; what does not fit spills beside it."""
    sim = world.sim
    have = float(world.scene.object(source).state.get("liquid_ml", 0.0))
    if have <= 0:
        return Feedback(operation="pour", success=False, reason=f"{source} holds no water")
    room = sim.capacity_ml(target) - float(world.scene.object(target).state.get("liquid_ml", 0.0))
    moved = min(have, max(room, 0.0))
    spilled = have - moved
    sim.set_liquid(source, 0.0)
    sim.set_liquid(target, float(world.scene.object(target).state.get("liquid_ml", 0.0)) + moved)
    sim.show_spill(target, spilled)
    overflowed = spilled > 1e-6
    reason = (
        f"poured {have:.0f} ml; {target} overflowed and {spilled:.0f} ml spilled"
        if overflowed
        else f"poured {have:.0f} ml into {target} without spilling"
    )
    return Feedback(
        operation="pour",
        success=True,
        reason=reason,
        state={
            "poured_ml": round(moved, 1),
            "spilled_ml": round(spilled, 1),
            "overflowed": overflowed,
            "source": source,
            "levels_cm": {
                source: round(100 * sim.liquid_level(source), 1),
                target: round(100 * sim.liquid_level(target), 1),
            },
        },
    )


def fill(world: World, name: str) -> Feedback:
    """Fill container ``name`` with water up to its brim (the paper's "fill obj with water").

    The feedback names no volume: how much went in is what the filled container shows.
    """
    sim = world.sim
    capacity = sim.capacity_ml(name)
    if float(world.scene.object(name).state.get("liquid_ml", 0.0)) >= capacity - 1e-6:
        return Feedback(operation="fill", success=False, reason=f"{name} is already full to the brim")
    sim.set_liquid(name, capacity)
    return Feedback(operation="fill", success=True, reason=f"filled {name} with water up to its brim")


def _layout(rng: np.random.Generator) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Heading, centre and the two containers' spots: one nearer the first view than the other,
    and apart sideways, so a side-by-side view at equal depths needs a move."""
    heading = float(rng.uniform(0, 360))
    fwd, side = unit(heading), unit(heading + 90)
    centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
    depth = float(rng.uniform(0.15, 0.25)) * float(rng.choice([-1.0, 1.0]))
    return heading, centre, centre + fwd * depth / 2 + side * 0.1, centre - fwd * depth / 2 - side * 0.1


def _camera(rng: np.random.Generator, heading: float, centre: np.ndarray) -> Any:
    return orbit_pose(
        (float(centre[0]), float(centre[1]), 0.05),
        heading + 180,
        float(rng.uniform(6, 12)),
        float(rng.uniform(0.6, 0.75)),
    )


class LiquidVolumeFamily(TaskFamily):
    """Liquid Volume."""

    family = "Physical Structure"
    subcategory = "Liquid Volume"
    slug = "liquid_volume"
    designs = ("larger-left", "overflow-yes", "larger-right", "overflow-no", "larger-first", "larger-second")
    """Every form in turn, each with its answers balanced exactly; the ``paper`` and ``test``
    splits draw only :data:`ESI_DESIGNS`."""
    esi_designs = ESI_DESIGNS

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, str(rng.choice(self.designs)))

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        if design is None:
            return self.generate(rng)
        if design in CAPACITY_DESIGNS:
            return self._capacity(rng, larger_first=design == "larger-first")
        if design in SIDE_DESIGNS:
            return self._capacity(rng, larger_first=design == "larger-left", by_side=True)
        if design not in ("overflow-yes", "overflow-no"):
            raise RuntimeError(f"{self.slug}: unknown design {design!r}")
        return self._overflow(rng, overflow=design == "overflow-yes")

    def _overflow(self, rng: np.random.Generator, *, overflow: bool) -> TaskDraft:
        cols = colors(rng, 2)
        # The source's build is drawn first and its water fixed; the target's depth is then solved
        # for so that the water is 70-88% (fits) or 115-140% (overflows) of the target's capacity.
        tall_fp = float(rng.uniform(0.045, 0.06))
        wide_fp = float(rng.uniform(0.09, 0.12))
        source_tall = bool(rng.integers(2))
        if source_tall:
            src_inner = (tall_fp, tall_fp, float(rng.uniform(0.1, 0.14)))
        else:
            src_inner = (wide_fp, wide_fp, float(rng.uniform(0.035, 0.05)))
        ml = src_inner[0] * src_inner[1] * src_inner[2] * 1e6 * float(rng.uniform(0.6, 0.85))
        capacity = ml / (float(rng.uniform(1.15, 1.4)) if overflow else float(rng.uniform(0.7, 0.88)))
        if source_tall:
            fp = wide_fp
        else:
            # A cup 10-15 cm deep where the footprint allows; its depth follows from the capacity.
            fp = float(np.clip(np.sqrt(capacity * 1e-6 / rng.uniform(0.1, 0.15)), 0.045, 0.08))
        dst_inner = (fp, fp, capacity * 1e-6 / (fp * fp))
        heading, centre, s_xy, d_xy = _layout(rng)
        # Named by build, not by role: the tall one is a cup, the wide one a bowl.
        src_cat = "cup" if source_tall else "bowl"
        dst_cat = "bowl" if src_cat == "cup" else "cup"
        src = container(
            f"{cols[0]}_{src_cat}",
            cols[0],
            (float(s_xy[0]), float(s_xy[1])),
            src_inner,
            category=src_cat,
            yaw=heading,
            state={"liquid_ml": round(ml, 1)},
        )
        dst = container(
            f"{cols[1]}_{dst_cat}",
            cols[1],
            (float(d_xy[0]), float(d_xy[1])),
            dst_inner,
            category=dst_cat,
            yaw=heading,
        )
        camera = _camera(rng, heading, centre)
        sn, dn = src.name.replace("_", " "), dst.name.replace("_", " ")
        return TaskDraft(
            design="overflow-yes" if overflow else "overflow-no",
            scene=SceneSpec(objects=[src, dst], camera=camera),
            text=f"If all the water in the {sn} is poured into the {dn}, will the {dn} overflow?",
            contract=yes_no_contract(),
            guidance=(
                "A tall narrow container and a wide shallow one are hard to compare by eye. Compare "
                "their inner sizes side by side and from above, or test it: pour(object, target) pours "
                "the water and reports whether any spilled. " + CAMERA_GUIDANCE
            ),
            metadata={
                "form": "overflow",
                "source": src.name,
                "target": dst.name,
                "ml": round(ml, 1),
                "capacity_ml": round(capacity, 1),
            },
        )

    # Long because it draws one question's scene as a fixed sequence of random draws, then writes the
    # text and metadata from them. The draw order is part of what a seed means (reordering changes
    # every generated question, and with it the generator version), so the steps stay in one
    # sequence that reads top to bottom.
    def _capacity(self, rng: np.random.Generator, *, larger_first: bool, by_side: bool = False) -> TaskDraft:
        cols = colors(rng, 2)
        # The bowl is drawn first; the cup's capacity is the bowl's times or over 1.15-1.4 (a coin
        # says which build holds more), and its depth follows from a 4.5-7.5 cm footprint.
        bowl_fp = float(rng.uniform(0.09, 0.12))
        bowl_inner = (bowl_fp, bowl_fp, float(rng.uniform(0.03, 0.05)))
        bowl_ml = bowl_inner[0] * bowl_inner[1] * bowl_inner[2] * 1e6
        ratio = float(rng.uniform(1.15, 1.4))
        cup_larger = bool(rng.integers(2))
        cup_ml = bowl_ml * ratio if cup_larger else bowl_ml / ratio
        cup_fp = float(np.clip(np.sqrt(cup_ml * 1e-6 / rng.uniform(0.1, 0.15)), 0.045, 0.075))
        cup_inner = (cup_fp, cup_fp, cup_ml * 1e-6 / (cup_fp * cup_fp))
        heading, centre, a_xy, b_xy = _layout(rng)
        cup_at_a = bool(rng.integers(2))
        spots = (a_xy, b_xy) if cup_at_a else (b_xy, a_xy)
        cup = container(
            f"{cols[0]}_cup",
            cols[0],
            (float(spots[0][0]), float(spots[0][1])),
            cup_inner,
            category="cup",
            yaw=heading,
        )
        bowl = container(
            f"{cols[1]}_bowl",
            cols[1],
            (float(spots[1][0]), float(spots[1][1])),
            bowl_inner,
            category="bowl",
            yaw=heading,
        )
        larger, smaller = (cup, bowl) if cup_larger else (bowl, cup)
        camera = _camera(rng, heading, centre)
        if by_side:
            # Left and right as seen from the first view: along the camera's right-hand direction.
            right = unit(float(camera.yaw) - 90)
            left_first = float(np.dot(a_xy - b_xy, right)) < 0
            at_a, at_b = (cup, bowl) if cup_at_a else (bowl, cup)
            left, right_obj = (at_a, at_b) if left_first else (at_b, at_a)
            larger_is_left = left is larger
            if larger_is_left != larger_first:
                # Swap the two builds' spots on the table so the larger one stands where the design
                # wants it. Only the footprint moves: each keeps its own height above the table
                # (its own half-height), or the taller one would sink into the table and the
                # shorter one float above it (generator version 9 did that).
                left, right_obj = (
                    right_obj.model_copy(update={"position": (*left.position[:2], right_obj.position[2])}),
                    left.model_copy(update={"position": (*right_obj.position[:2], left.position[2])}),
                )
                cup, bowl = (left, right_obj) if left.category == "cup" else (right_obj, left)
            ln, rn = left.name.replace("_", " "), right_obj.name.replace("_", " ")
            return TaskDraft(
                design="larger-left" if larger_first else "larger-right",
                scene=SceneSpec(objects=[cup, bowl], camera=camera),
                text=(
                    f"The {ln} is on the left and the {rn} is on the right. Both are empty. Which of "
                    "the two containers has the larger volume: the left one or the right one?"
                ),
                contract=option_contract(["left", "right"], "Answer left or right."),
                guidance=(
                    "A tall narrow container and a wide shallow one are hard to compare by eye. Test "
                    "it with water: fill(object) fills a container up to its brim, and "
                    "pour(object, target) pours all of one container's water into the other and "
                    "reports whether any spilled. Left and right are as seen in the first view. "
                    + CAMERA_GUIDANCE
                ),
                metadata={
                    "form": "capacity",
                    "answer_by": "side",
                    "containers": [left.name, right_obj.name],
                    "capacity_ml": {cup.name: round(cup_ml, 1), bowl.name: round(bowl_ml, 1)},
                },
            )
        first, second = (larger, smaller) if larger_first else (smaller, larger)
        fn, sn = first.name.replace("_", " "), second.name.replace("_", " ")
        return TaskDraft(
            design="larger-first" if larger_first else "larger-second",
            scene=SceneSpec(objects=[cup, bowl], camera=camera),
            text=(
                f"Both containers are empty. Which of them holds more water when filled to the brim: "
                f"the {fn} or the {sn}?"
            ),
            contract=option_contract([first.name, second.name], "Answer with the container's name."),
            guidance=(
                "A tall narrow container and a wide shallow one are hard to compare by eye. Test it "
                "with water: fill(object) fills a container up to its brim, and pour(object, target) "
                "pours all of one container's water into the other and reports whether any spilled. "
                + CAMERA_GUIDANCE
            ),
            metadata={
                "form": "capacity",
                "containers": [first.name, second.name],
                "capacity_ml": {cup.name: round(cup_ml, 1), bowl.name: round(bowl_ml, 1)},
            },
        )

    @staticmethod
    def _containers(metadata: dict[str, Any]) -> list[str]:
        if metadata.get("form") == "capacity":
            return list(metadata["containers"])
        return [metadata["source"], metadata["target"]]

    def custom_actions(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[ActionSpec]:
        if metadata.get("form") != "capacity":
            return [
                ActionSpec(
                    name="pour",
                    kind="manipulation",
                    params=["object", "target"],
                    choices={"object": [metadata["source"]], "target": [metadata["target"]]},
                    description="pour all the water from one container into another",
                )
            ]
        both = self._containers(metadata)
        return [
            ActionSpec(
                name="fill",
                kind="manipulation",
                params=["object"],
                choices={"object": both},
                description="fill a container with water up to its brim",
            ),
            ActionSpec(
                name="pour",
                kind="manipulation",
                params=["object", "target"],
                choices={"object": both, "target": both},
                description="pour all the water from one container into the other",
            ),
        ]

    def handle_action(self, world: World, action: Action) -> Feedback | None:
        meta = world.metadata
        both = self._containers(meta)
        if action.name == "fill":
            obj = action.args.get("object")
            if meta.get("form") != "capacity" or obj not in both:
                return Feedback(
                    operation="fill", success=False, reason=f"fill needs object= one of {', '.join(both)}"
                )
            return fill(world, obj)
        if action.name != "pour":
            return None
        src, dst = action.args.get("object"), action.args.get("target")
        if meta.get("form") != "capacity":
            if src != meta["source"] or dst != meta["target"]:
                return Feedback(
                    operation="pour",
                    success=False,
                    reason=f"pour needs object={meta['source']} and target={meta['target']}",
                )
        elif src not in both or dst not in both or src == dst:
            return Feedback(
                operation="pour",
                success=False,
                reason=f"pour needs object and target, the two different containers of {', '.join(both)}",
            )
        return pour(world, str(src), str(dst))

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        meta = draft.metadata
        if meta.get("form") == "capacity":
            first, second = meta["containers"]
            filled = fill(world, first)
            if not filled.success:
                raise RuntimeError(f"{self.slug}: could not fill {first}: {filled.reason}")
            first_larger = bool(pour(world, first, second).state["overflowed"])
            if meta.get("answer_by") == "side":
                return "left" if first_larger else "right"
            return first if first_larger else second
        fb = pour(world, meta["source"], meta["target"])
        return "yes" if fb.state["overflowed"] else "no"

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        if metadata.get("form") == "capacity":
            a, b = metadata["containers"]
            return [
                ViewEvidence(objects=[a], label=f"{a} visible"),
                ViewEvidence(objects=[b], label=f"{b} visible"),
                AnyOf(
                    options=[
                        OutcomeEvidence(action="pour", args={"target": t}, require_success=True, show=[t])
                        for t in (a, b)
                    ],
                    label="a filled container poured into the other, and the outcome seen",
                ),
            ]
        s, t = metadata["source"], metadata["target"]
        return [
            ViewEvidence(objects=[s], label=f"{s} visible"),
            ViewEvidence(objects=[t], label=f"{t} visible"),
            AnyOf(
                options=[
                    OutcomeEvidence(action="pour", args={"target": t}, show=[t]),
                    ViewEvidence(objects=[s, t], max_depth_ratio=1.15),
                ],
                label="the pour's outcome seen, or both compared side by side",
            ),
        ]
