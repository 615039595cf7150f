"""Action Sequencing / Action Order Inference: which object should be the base?

Three question forms (designs):

* **stack** (ESI-Bench's ``action`` form, drawn by ``paper`` and ``test`` since version 10; every
  one of ESI-Bench's 77 evaluated records is this three-object form): five objects stand in one
  row through an open box B (6.5-7.5 cm, movable): two crates (open boxes 3.5-4.5 cm tall) on
  opposite sides of B, and two blocks on opposite sides of B, one pair inside the other. The row
  runs across the first view (sides ``left``/``right``) or along the line of sight (``above``:
  farther, higher in the picture; ``below``: nearer), as ESI-Bench's views give both. The text
  says which crate and which block stands on which side (ESI-Bench's object list names them so)
  and asks which crate B should be placed on top of and which block should go on top of B; the
  answer is two sides, the crate's first (four options, ``left, right`` ...). Scale decides both,
  as in ESI-Bench where the wrong object of each pair is the right one scaled too large or too
  small: a crate carries B on its rim only where its opening is 0.7-0.85 times B's width (the
  other's, 1.15-1.3 times, swallows B); a block stays on top of B only where it is 1.2-1.4 times
  B's opening (the other, 0.7-0.85 times, drops in). Thick walls round the narrow opening and a
  taller narrow block keep the wrong one from simply looking bigger or smaller. The design fixes
  the direction and both sides (8 designs). Ground truth: B is put on each crate, and each block on
  B, by the manipulator the agent uses, each put back after; exactly one of each must stay on top
  (at or above the rim), else generation raises. Decisive evidence: B visible; B tried on a crate
  with the outcome seen, or B and both crates seen from 50 degrees or more above; a block tried
  on B with the outcome seen, or B and both blocks seen from above.
* **base** (ours since version 10, dev only; ESI-Bench's two-object variant): two boxes of one
  outer size (6.5-7.5 cm wide, 6.5-7.5 cm tall) stand left and right of a smaller cube B (3.6-4.2 cm),
  all three in a row across the first view. One box is solid; the other is open at the top, so B
  dropped on it falls inside instead of resting on top. The first view looks level from 5 cm
  above the table, under both rims, so the two boxes look alike there. "Which box should B be
  placed on top of as its base?", answered ``left`` or ``right`` as seen in the first view (the
  design says which, in turn: ``base-left``, ``base-right``). Actions are ESI-Bench's: ``pick_up``,
  ``put_on`` (its "place X on top of Y"; the feedback says whether B ended on top, or sank into
  the box) and ``put_back``. Ground truth: B is put on each box in turn by the same manipulator
  the agent uses and put back; the base is the box B ended on top of (at or above its rim). A
  draw where not exactly one box holds B on top raises (a generator bug). Decisive evidence: the
  solid box visible, and B tried on either box with the outcome seen, or the open box seen from
  30 degrees or more above, where its opening shows.
* **order** (ours, a named extra kept in ``dev``; designs ``first``, ``last``, ``order``): in what
  order were the objects moved? Described below.

Order-form scene: a static platform stands behind a tall upright board. A task-supplied reference image,
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
    PlacementError,
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
from eviseek.envs.tabletop.families._physical import container
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.manipulation import PLACE_OFFSET, Manipulator
from eviseek.envs.tabletop.scene import ObjectSpec, SceneChange, SceneSpec, rounded, yaw_quat
from eviseek.envs.tabletop.support import AnyOf, Evidence, OutcomeEvidence, ViewEvidence
from eviseek.types import Action, ActionSpec, AnswerContract, Feedback

KINDS = ("first", "last", "order")
"""Question kinds of the order form (designs)."""
MAX_PLACEMENT_DRAWS = 64
"""Order-form drafts drawn at most while a crowded draw leaves no room (a generator bug past that)."""
PLATFORM_H = 0.02
"""Platform thickness (m)."""
POSE_TOLERANCE = 0.015
"""Metres a replayed move may end from its recorded pose before generation is called broken."""
BASE_DESIGNS = ("base-left", "base-right")
"""Designs of the two-box base form (ours since version 10, dev only): the solid box stands left or
right of B in the first view."""
SIDES = {"across": ("left", "right"), "along": ("above", "below")}
"""The two sides of B a pair stands on, by the row's direction in the first view: across it (left,
right) or along the line of sight (above: farther, higher in the picture; below: nearer)."""
STACK_DESIGNS = (
    "stack-across-0-0",
    "stack-along-1-1",
    "stack-across-1-0",
    "stack-along-0-1",
    "stack-across-0-1",
    "stack-along-1-0",
    "stack-across-1-1",
    "stack-along-0-0",
)
"""Designs of ESI-Bench's three-object form: the row's direction, then which side (index into
:data:`SIDES`) the right crate and the right block stand on. Ordered so that every run of them
from the start keeps both sides and both directions as even as its length allows."""
ON_TOP_TOLERANCE = 0.01
"""B counts as on top of a box when its lowest point is at most this far (m) below the box's top."""


def on_top(world: World, obj: str, base: str) -> bool:
    """Whether ``obj`` rests on top of ``base``: its lowest point at or above ``base``'s rim."""
    lo, _ = world.sim.aabb(obj)
    _, hi = world.sim.aabb(base)
    return float(lo[2]) >= float(hi[2]) - ON_TOP_TOLERANCE


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
    designs = (
        *STACK_DESIGNS[:2],
        "first",
        "base-left",
        *STACK_DESIGNS[2:5],
        "last",
        "base-right",
        *STACK_DESIGNS[5:],
        "order",
    )
    esi_designs = STACK_DESIGNS

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        return self.draft_design(rng, str(rng.choice(self.designs)))

    def draft_design(self, rng: np.random.Generator, design: str | None) -> TaskDraft:
        if design is None:
            return self.generate(rng)
        if design in STACK_DESIGNS:
            _, axis, a_side, c_side = design.split("-")
            return self._stack_form(rng, axis, int(a_side), int(c_side))
        if design in BASE_DESIGNS:
            return self._base_form(rng, left=design == "base-left")
        if design not in KINDS:
            raise RuntimeError(f"{self.slug}: unknown design {design!r}")
        for _ in range(MAX_PLACEMENT_DRAWS):
            try:
                return self._order_form(rng, design)
            except PlacementError:
                continue
        raise RuntimeError(f"{self.slug}: no order-form draft in {MAX_PLACEMENT_DRAWS} draws")

    # -- ESI-Bench's three-object form -----------------------------------------------

    # Long because it draws one question's scene as a fixed sequence of random draws, then writes the
    # text and metadata from them (the draw order is part of what a seed means).
    def _stack_form(self, rng: np.random.Generator, axis: str, a_side: int, c_side: int) -> TaskDraft:
        cols = colors(rng, 5)
        heading = float(rng.uniform(0, 360))  # the camera looks along this direction
        fwd, left = unit(heading), unit(heading + 90)
        centre = np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.06, 0.06)])
        # B: an open box, movable. Scale decides both answers: a crate carries B on its rim only
        # where its opening is narrower than B (a wider one swallows it), and a block stays on top
        # of B only where it is wider than B's opening (a narrower one drops in).
        b_outer, b_h, wall = float(rng.uniform(0.065, 0.075)), float(rng.uniform(0.045, 0.055)), 0.008
        b_open = b_outer - 2 * wall
        crate_h = float(rng.uniform(0.035, 0.045))
        good_open, bad_open = b_outer * float(rng.uniform(0.7, 0.85)), b_outer * float(rng.uniform(1.15, 1.3))
        # Thick walls round the narrow opening and thin ones round the wide one, so that the two
        # crates' outer sizes overlap and the smaller-looking crate is not the answer by rule.
        good_wall, bad_wall = float(rng.uniform(0.015, 0.03)), float(rng.uniform(0.005, 0.008))
        good_w, good_h = b_open * float(rng.uniform(1.2, 1.4)), float(rng.uniform(0.03, 0.045))
        bad_w = b_open * float(rng.uniform(0.7, 0.85))
        # The narrow block is taller by about the width ratio, so both blocks show a similar face.
        bad_h = min(good_w * good_h / bad_w * float(rng.uniform(0.9, 1.1)), 0.085)
        along = left if axis == "across" else fwd
        sign = (1.0, -1.0)  # SIDES[axis][0] lies along +along (left, or farther), [1] along -along
        inner = float(rng.uniform(0.13, 0.15))
        outer = inner + float(rng.uniform(0.13, 0.15))
        crates_inner = bool(rng.integers(2))
        gap = {"crate": inner if crates_inner else outer, "block": outer if crates_inner else inner}
        jitter = [float(rng.uniform(-0.015, 0.015)) for _ in range(4)]
        across = fwd if axis == "across" else left

        def spot(kind: str, side: int, k: int) -> tuple[float, float]:
            xy = centre + along * sign[side] * gap[kind] + across * jitter[k]
            return float(xy[0]), float(xy[1])

        yaw = heading + float(rng.uniform(-10, 10))
        good_crate = container(
            f"{cols[0]}_crate",
            cols[0],
            spot("crate", a_side, 0),
            (good_open, good_open, crate_h - good_wall),
            wall=good_wall,
            yaw=yaw,
            category="crate",
        )
        bad_crate = container(
            f"{cols[1]}_crate",
            cols[1],
            spot("crate", 1 - a_side, 1),
            (bad_open, bad_open, crate_h - bad_wall),
            wall=bad_wall,
            yaw=heading + float(rng.uniform(-10, 10)),
            category="crate",
        )
        b = container(
            f"{cols[2]}_box",
            cols[2],
            (float(centre[0]), float(centre[1])),
            (b_open, b_open, b_h - wall),
            wall=wall,
            yaw=heading,
            category="box",
            mass=0.3,
            movable=True,
        ).model_copy(update={"role": "target"})

        def block(col: str, width: float, height: float, xy: tuple[float, float]) -> ObjectSpec:
            return ObjectSpec(
                name=f"{col}_block",
                shape="box",
                category="block",
                color=col,
                size=rounded((width, width, height)),  # type: ignore[arg-type]
                position=(r6(xy[0]), r6(xy[1]), r6(height / 2)),
                orientation=yaw_quat(heading + float(rng.uniform(-10, 10))),
                mass=0.15,
                role="top",
            )

        good_block = block(cols[3], good_w, good_h, spot("block", c_side, 2))
        bad_block = block(cols[4], bad_w, bad_h, spot("block", 1 - c_side, 3))
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.03),
            heading + 180 + float(rng.uniform(-4, 4)),
            30.0,
            float(rng.uniform(0.8, 0.9)) + (0.1 if axis == "along" else 0.0),
        )
        names = SIDES[axis]
        side_of = {
            good_crate.name: names[a_side],
            bad_crate.name: names[1 - a_side],
            good_block.name: names[c_side],
            bad_block.name: names[1 - c_side],
        }

        def where(name: str) -> str:
            side = side_of[name]
            spoken = name.replace("_", " ")
            return f"the {spoken} to the {side} of B" if axis == "across" else f"the {spoken} {side} B"

        crates = sorted((good_crate.name, bad_crate.name), key=lambda n: names.index(side_of[n]))
        blocks = sorted((good_block.name, bad_block.name), key=lambda n: names.index(side_of[n]))
        bn = b.name.replace("_", " ")
        view_words = (
            "as seen in the first view"
            if axis == "across"
            else "as seen in the first view (above: farther away)"
        )
        text = (
            f"There are two crates, {where(crates[0])} and {where(crates[1])}; one {bn} (B); and two "
            f"blocks, {where(blocks[0])} and {where(blocks[1])}, {view_words}. Which crate should B be "
            "placed on top of as its base, and which block should go on top of B? Answer with two "
            f"sides, the crate's first: e.g. '{names[0]}, {names[1]}'."
        )
        options = [f"{x}, {y}" for x in names for y in names]
        return TaskDraft(
            design=f"stack-{axis}-{a_side}-{c_side}",
            scene=SceneSpec(objects=[good_crate, bad_crate, b, good_block, bad_block], camera=camera),
            text=text,
            contract=option_contract(options, "Two sides, the crate's first, e.g. 'left, right'."),
            guidance=(
                "Crates and blocks that look alike from the side may not fit B. Test it: "
                "put_on(object, target) places B on a crate, or a block on B, and reports whether it "
                "stayed on top; put_back returns it to its place. Or compare openings and widths "
                "from above. Sides are as seen in the first view. " + CAMERA_GUIDANCE
            ),
            metadata={
                "form": "stack",
                "axis": axis,
                "object": b.name,
                "crates": crates,
                "blocks": blocks,
                "base": good_crate.name,
                "top": good_block.name,
                "sides": side_of,
            },
        )

    def _put_on_top(
        self, world: World, obj: str, target: str, movable: list[str], targets: list[str]
    ) -> Feedback:
        """``put_on`` that fails when ``obj`` did not stay on top of ``target`` (it sank in)."""
        fb = world.manipulator.execute("put_on", {"object": obj, "target": target}, movable, targets)
        if fb.operation != "put_on" or target not in targets or on_top(world, obj, target):
            return fb
        # Say so when it sank into the target (the manipulator alone would call it slid off).
        lo, hi = world.sim.aabb(target)
        centre = np.asarray(world.sim.pose_of(obj)[0])
        within = bool(np.all(centre[:2] >= lo[:2]) and np.all(centre[:2] <= hi[:2]))
        if not fb.success and not within:
            return fb
        return Feedback(
            operation="put_on",
            success=False,
            reason=f"{obj} did not stay on top of {target}; it ended below its rim",
            state=fb.state,
        )

    @staticmethod
    def _stack_parts(m: dict[str, Any]) -> tuple[list[str], list[str]]:
        """The movable objects and the legal targets of the three-object form."""
        return [m["object"], *m["blocks"]], [*m["crates"], m["object"]]

    def _stack_truth(self, world: World, m: dict[str, Any]) -> str:
        movable, targets = self._stack_parts(m)
        b = m["object"]
        carried, topped = [], []
        for crate in m["crates"]:
            if self._put_on_top(world, b, crate, movable, targets).success:
                carried.append(crate)
            self._put_back(world, b, movable, targets)
        for blk in m["blocks"]:
            if self._put_on_top(world, blk, b, movable, targets).success:
                topped.append(blk)
            self._put_back(world, blk, movable, targets)
        if carried != [m["base"]] or topped != [m["top"]]:
            raise RuntimeError(
                f"{self.slug}: B stayed on {carried} (built for {m['base']}), blocks on B: {topped} "
                f"(built for {m['top']})"
            )
        return f"{m['sides'][m['base']]}, {m['sides'][m['top']]}"

    def _put_back(self, world: World, obj: str, movable: list[str], targets: list[str]) -> None:
        back = world.manipulator.execute("put_back", {"object": obj}, movable, targets)
        if not back.success:
            raise RuntimeError(f"{self.slug}: put_back of {obj} failed: {back.reason}")

    # -- the two-box base form (ours) -----------------------------------------------------

    def _base_form(self, rng: np.random.Generator, *, left: bool) -> TaskDraft:
        cols = colors(rng, 3)
        heading = float(rng.uniform(0, 360))  # the camera looks along this direction
        fwd, side = unit(heading), unit(heading + 90)  # side points to the camera's left
        centre = np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.06, 0.06)])
        width = float(rng.uniform(0.065, 0.075))
        height = float(rng.uniform(0.065, 0.075))
        wall = 0.008
        b_size = float(rng.uniform(0.036, 0.042))
        gap = float(rng.uniform(0.14, 0.17))
        spots = {
            "left": centre + side * gap + fwd * float(rng.uniform(-0.03, 0.03)),
            "right": centre - side * gap + fwd * float(rng.uniform(-0.03, 0.03)),
        }
        solid_side = "left" if left else "right"
        open_side = "right" if left else "left"
        yaw = heading + float(rng.uniform(-10, 10))
        sx, sy = (float(v) for v in spots[solid_side])
        solid = make_object("cube", cols[0], (sx, sy), width, yaw=yaw, role="base")
        solid = solid.model_copy(
            update={
                "name": f"{cols[0]}_box",
                "category": "box",
                "size": rounded((width, width, height)),
                "position": (solid.position[0], solid.position[1], r6(height / 2)),
            }
        )
        ox, oy = (float(v) for v in spots[open_side])
        hollow = container(
            f"{cols[1]}_box",
            cols[1],
            (ox, oy),
            (width - 2 * wall, width - 2 * wall, height - wall),
            wall=wall,
            yaw=heading + float(rng.uniform(-10, 10)),
            category="box",
        )
        b = make_object(
            "cube", cols[2], (float(centre[0]), float(centre[1])), b_size, yaw=heading, role="target"
        )
        camera = orbit_pose(
            (float(centre[0]), float(centre[1]), 0.05),
            heading + 180 + float(rng.uniform(-4, 4)),
            0.0,
            float(rng.uniform(0.55, 0.65)),
        )
        boxes = [solid.name, hollow.name]
        listed = [boxes[int(i)] for i in rng.permutation(2)]
        bn = b.name.replace("_", " ")
        text = (
            f"There are two boxes, the {listed[0].replace('_', ' ')} and the "
            f"{listed[1].replace('_', ' ')}, and one {bn} (B). One box is to the left of B, one to "
            "the right, as seen in the first view. Which box should B be placed on top of as its "
            "base: the left one or the right one?"
        )
        return TaskDraft(
            design="base-left" if left else "base-right",
            scene=SceneSpec(objects=[solid, hollow, b], camera=camera),
            text=text,
            contract=option_contract(["left", "right"], "Answer left or right."),
            guidance=(
                "Boxes that look alike from the side may not both carry B. Test it: put_on(object, "
                "target) places B on top of a box and reports whether it stayed on top; put_back "
                "returns it to its place. Or look at the boxes from above. Left and right are as "
                "seen in the first view. " + CAMERA_GUIDANCE
            ),
            metadata={
                "form": "base",
                "object": b.name,
                "boxes": boxes,
                "solid": solid.name,
                "open": hollow.name,
                "sides": {solid.name: solid_side, hollow.name: open_side},
            },
        )

    def _base_put_on(self, world: World, obj: str, target: str) -> Feedback:
        m = world.metadata
        boxes = list(m["boxes"])
        fb = world.manipulator.execute("put_on", {"object": obj, "target": target}, [m["object"]], boxes)
        if fb.operation != "put_on" or (not fb.success and target not in boxes):
            return fb
        if target in boxes and not on_top(world, obj, target):
            return Feedback(
                operation="put_on",
                success=False,
                reason=f"{obj} did not stay on top of {target}; it ended below its rim",
                state=fb.state,
            )
        return fb

    # -- ours: the order form --------------------------------------------------------

    # Long because it draws one question's scene as a fixed sequence of random draws, then writes the
    # text and metadata from them. The draw order is part of what a seed means (reordering changes
    # every generated question, and with it the generator version), so the steps stay in one
    # sequence that reads top to bottom.
    def _order_form(self, rng: np.random.Generator, want: str) -> TaskDraft:
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
        pick(rng, list(KINDS))  # drawn as before, so the rest of the draw keeps its stream
        kind = want
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
            design=kind,
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
                "form": "order",
                "kind": kind,
                "order": order,
                "moved": order,
                "resident": resident.name if resident is not None else None,
                "platform": platform.name,
                "distractor": distractor.name,
            },
        )

    # -- actions ---------------------------------------------------------------------

    def custom_actions(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[ActionSpec]:
        if metadata.get("form") == "stack":
            movable, targets = self._stack_parts(metadata)
            return _pick_place_back(movable, targets)
        if metadata.get("form") != "base":
            return []
        obj, boxes = metadata["object"], list(metadata["boxes"])
        return [
            ActionSpec(
                name="pick_up",
                kind="manipulation",
                params=["object"],
                choices={"object": [obj]},
                description="pick an object up and hold it above the table",
            ),
            ActionSpec(
                name="put_on",
                kind="manipulation",
                params=["object", "target"],
                choices={"object": [obj], "target": boxes},
                description="place an object on top of another (physics decides whether it stays on top)",
            ),
            ActionSpec(
                name="put_back",
                kind="manipulation",
                params=["object"],
                choices={"object": [obj]},
                description="return an object to where it started",
            ),
        ]

    def handle_action(self, world: World, action: Action) -> Feedback | None:
        m = world.metadata
        if m.get("form") == "stack" and action.name in ("pick_up", "put_on", "put_back"):
            movable, targets = self._stack_parts(m)
            obj = str(action.args.get("object", ""))
            if action.name == "put_on" and obj in movable:
                return self._put_on_top(world, obj, str(action.args.get("target", "")), movable, targets)
            return world.manipulator.execute(action.name, dict(action.args), movable, targets)
        if m.get("form") != "base" or action.name not in ("pick_up", "put_on", "put_back"):
            return None
        obj = str(action.args.get("object", ""))
        if obj != m["object"]:
            return Feedback(operation=action.name, success=False, reason=f"object must be {m['object']}")
        if action.name == "put_on":
            return self._base_put_on(world, obj, str(action.args.get("target", "")))
        return world.manipulator.execute(action.name, {"object": obj}, [obj], list(m["boxes"]))

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        m = draft.metadata
        if m.get("form") == "stack":
            return self._stack_truth(world, m)
        if m.get("form") == "base":
            world = World(sim=world.sim, manipulator=world.manipulator, scene=world.scene, metadata=dict(m))
            held = []
            for box in m["boxes"]:
                fb = self._base_put_on(world, m["object"], box)
                if fb.success:
                    held.append(box)
                back = world.manipulator.execute("put_back", {"object": m["object"]}, [m["object"]], [])
                if not back.success:
                    raise RuntimeError(f"{self.slug}: put_back failed after {box}: {back.reason}")
            if held != [m["solid"]]:
                raise RuntimeError(f"{self.slug}: B stayed on top of {held}, not only on {m['solid']}")
            return str(m["sides"][m["solid"]])
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
        if metadata.get("form") == "stack":
            b, crates, blocks = metadata["object"], list(metadata["crates"]), list(metadata["blocks"])
            return [
                ViewEvidence(objects=[b], label=f"{b} visible"),
                AnyOf(
                    options=[
                        *(
                            OutcomeEvidence(
                                action="put_on",
                                args={"object": b, "target": c},
                                show=[b, c],
                                min_fraction=0.3,
                            )
                            for c in crates
                        ),
                        ViewEvidence(objects=[b, *crates], max_pitch=-50.0),
                    ],
                    label="B tried on a crate and the outcome seen, or B and the crates seen from above",
                ),
                AnyOf(
                    options=[
                        *(
                            OutcomeEvidence(
                                action="put_on",
                                args={"object": k, "target": b},
                                show=[k, b],
                                min_fraction=0.3,
                            )
                            for k in blocks
                        ),
                        ViewEvidence(objects=[b, *blocks], max_pitch=-50.0),
                    ],
                    label="a block tried on B and the outcome seen, or B and the blocks seen from above",
                ),
            ]
        if metadata.get("form") == "base":
            b, solid, hollow = metadata["object"], metadata["solid"], metadata["open"]
            return [
                ViewEvidence(objects=[solid], label=f"{solid} visible"),
                AnyOf(
                    options=[
                        *(
                            OutcomeEvidence(
                                action="put_on", args={"target": t}, show=[b, t], min_fraction=0.3
                            )
                            for t in (solid, hollow)
                        ),
                        ViewEvidence(objects=[hollow], max_pitch=-30.0),
                    ],
                    label="B tried on a box and the outcome seen, or the open box seen from above",
                ),
            ]
        moved = list(metadata["moved"])
        pieces: list[Evidence] = [
            ViewEvidence(objects=[n], label=f"{n} seen at its new place") for n in moved
        ]
        pile = ([metadata["resident"]] if metadata.get("resident") else []) + moved
        pieces.append(ViewEvidence(objects=pile, label="the whole pile seen from the side"))
        return pieces


def _pick_place_back(movable: list[str], targets: list[str]) -> list[ActionSpec]:
    """ESI-Bench's three physical actions: pick up, place on top of, put back."""
    return [
        ActionSpec(
            name="pick_up",
            kind="manipulation",
            params=["object"],
            choices={"object": movable},
            description="pick an object up and hold it above the table",
        ),
        ActionSpec(
            name="put_on",
            kind="manipulation",
            params=["object", "target"],
            choices={"object": movable, "target": targets},
            description="place an object on top of another (physics decides whether it stays on top)",
        ),
        ActionSpec(
            name="put_back",
            kind="manipulation",
            params=["object"],
            choices={"object": movable},
            description="return an object to where it started",
        ),
    ]
