"""Physical Structure / Liquid Volume: will water poured from one container overflow another?

Scene: a source container holding water and an empty target of the other build (a tall narrow
cup versus a wide shallow bowl), so volumes are hard to compare by eye. The water is 70-88 per
cent of the target's capacity (no overflow) or 115-140 per cent (overflow); the target's depth is
solved for from the water's volume. Liquid is
simulated state drawn as a translucent slab at the level its volume implies (``ObjectSpec.state``:
``liquid_ml``); a spill is drawn as a puddle beside the target.

Action ``pour(object=source, target=container)`` moves the source's water into the target up to
the rim; the rest spills. Feedback: ``poured_ml``, ``spilled_ml``, ``overflowed`` and both levels.

Ground truth: by running ``pour`` in the simulator: ``yes`` when water spilled.

Decisive evidence (3 pieces): both containers visible (>= 50% of their unoccluded area), and
either a frame after a ``pour`` into the target that shows the target, or a frame showing both
containers at depths within 15 per cent of each other (a side-by-side comparison).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import CAMERA_GUIDANCE, colors, orbit_pose, unit, yes_no_contract
from eviseek.envs.tabletop.families._physical import container
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.support import AnyOf, Evidence, OutcomeEvidence, ViewEvidence
from eviseek.types import Action, ActionSpec, Feedback


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
            "levels_cm": {
                source: round(100 * sim.liquid_level(source), 1),
                target: round(100 * sim.liquid_level(target), 1),
            },
        },
    )


class LiquidVolumeFamily(TaskFamily):
    """Liquid Volume."""

    family = "Physical Structure"
    subcategory = "Liquid Volume"
    slug = "liquid_volume"

    def generate(self, rng: np.random.Generator) -> TaskDraft:
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
        overflow = bool(rng.integers(2))
        capacity = ml / (float(rng.uniform(1.15, 1.4)) if overflow else float(rng.uniform(0.7, 0.88)))
        if source_tall:
            fp = wide_fp
        else:
            # A cup 10-15 cm deep where the footprint allows; its depth follows from the capacity.
            fp = float(np.clip(np.sqrt(capacity * 1e-6 / rng.uniform(0.1, 0.15)), 0.045, 0.08))
        dst_inner = (fp, fp, capacity * 1e-6 / (fp * fp))
        heading = float(rng.uniform(0, 360))
        fwd, side = unit(heading), unit(heading + 90)
        centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        depth = float(rng.uniform(0.15, 0.25)) * float(rng.choice([-1.0, 1.0]))
        s_xy = centre + fwd * depth / 2 + side * 0.1
        d_xy = centre - fwd * depth / 2 - side * 0.1
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
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.05),
            heading + 180,
            float(rng.uniform(6, 12)),
            float(rng.uniform(0.6, 0.75)),
        )
        sn, dn = src.name.replace("_", " "), dst.name.replace("_", " ")
        return TaskDraft(
            scene=SceneSpec(objects=[src, dst], camera=camera),
            text=f"If all the water in the {sn} is poured into the {dn}, will the {dn} overflow?",
            contract=yes_no_contract(),
            guidance=(
                "A tall narrow container and a wide shallow one are hard to compare by eye. Compare "
                "their inner sizes side by side and from above, or test it: pour(object, target) pours "
                "the water and reports whether any spilled. " + CAMERA_GUIDANCE
            ),
            metadata={
                "source": src.name,
                "target": dst.name,
                "ml": round(ml, 1),
                "capacity_ml": round(capacity, 1),
            },
        )

    def custom_actions(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[ActionSpec]:
        return [
            ActionSpec(
                name="pour",
                kind="manipulation",
                params=["object", "target"],
                choices={"object": [metadata["source"]], "target": [metadata["target"]]},
                description="pour all the water from one container into another",
            )
        ]

    def handle_action(self, world: World, action: Action) -> Feedback | None:
        if action.name != "pour":
            return None
        src, dst = action.args.get("object"), action.args.get("target")
        meta = world.metadata
        if src != meta["source"] or dst != meta["target"]:
            return Feedback(
                operation="pour",
                success=False,
                reason=f"pour needs object={meta['source']} and target={meta['target']}",
            )
        return pour(world, meta["source"], meta["target"])

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        fb = pour(world, draft.metadata["source"], draft.metadata["target"])
        return "yes" if fb.state["overflowed"] else "no"

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
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
