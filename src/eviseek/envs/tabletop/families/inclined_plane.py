"""Physical Dynamics / Inclined Plane: will an object stay put on a ramp?

Scene: a static ramp (a wedge, 15-35 deg, friction 1.0) and a cube beside it whose friction
coefficient is either at least 1.3 times the tangent of the ramp angle (it stays) or at most 0.7
times it (it slides). Friction is invisible, so the question is settled by testing: action
``put_on_slope(object)`` sets the cube on the middle of the slope, aligned with it, and simulates
1.5 s. Its feedback says only that the cube was set down (ESI-Bench's put reports success and
frames, no outcome), so the slide is seen, not read: the step's observation carries it as frames
(``Observation.action_frames``): the scene from the agent's camera at release and every 0.25 s
after it, then the step's own frame at 1.5 s (7 frames; ESI-Bench renders 30 physics frames
after its put, paper app. E: the put invokes an answer call on that frame sequence).

Ground truth: by running ``put_on_slope`` in the simulator: ``yes`` (it stays) when the cube moved
less than 2 cm.

Decisive evidence (1 piece): a frame taken after a ``put_on_slope`` of the cube that shows the
cube and the ramp (>= 30% of their unoccluded areas).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eviseek.envs.tabletop.families._common import (
    CAMERA_GUIDANCE,
    colors,
    make_object,
    orbit_pose,
    r6,
    unit,
    yes_no_contract,
)
from eviseek.envs.tabletop.families.base import TaskDraft, TaskFamily, World
from eviseek.envs.tabletop.scene import ObjectSpec, SceneSpec, rounded, yaw_quat
from eviseek.envs.tabletop.support import Evidence, OutcomeEvidence
from eviseek.types import Action, ActionSpec, Feedback

SLIDE_CM = 2.0
TEST_SECONDS = 1.5
SLIDE_FRAMES = 6
"""Frames of the slide recorded before the step's own final frame (ours: at release and every
0.25 s; enough to see a slide start and go, few enough for an answer call's image budget)."""


def slope_start(world: World, obj: str, ramp: str) -> tuple[tuple[float, float, float], Any]:
    """Where ``put_on_slope`` sets ``obj`` down: the middle of ``ramp``'s slope, aligned with it."""
    sim = world.sim
    spec = world.scene.object(ramp)
    length, _, height = spec.size
    theta = math.atan2(height, length)
    pos, orn = sim.pose_of(ramp)
    yaw = sim.p.getEulerFromQuaternion(orn)[2]
    half = world.scene.object(obj).size[2] / 2
    # Ramp-local: the slope rises along +x; its surface at x = 0 is half the height up from the base.
    normal = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    local = np.array([0.0, 0.0, 0.0]) + normal * (half + 0.003)
    rot = np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]])
    base = np.asarray(pos) - np.array([0, 0, height / 2])
    start = base + rot @ (np.array([0.0, 0.0, height / 2]) + local)
    quat = sim.p.getQuaternionFromEuler([0.0, -theta, yaw])
    return (float(start[0]), float(start[1]), float(start[2])), quat


def slide_cm(world: World, obj: str, ramp: str) -> float:
    """Set ``obj`` on ``ramp``'s slope, let go, simulate ``TEST_SECONDS`` and return how far (cm)
    it moved; the frames of the slide are recorded on the way when the world records."""
    sim = world.sim
    world.manipulator.held = None
    sim.release(obj)
    start, quat = slope_start(world, obj, ramp)
    sim.set_pose(obj, start, quat)
    ticks = int(TEST_SECONDS * 240)
    chunk = ticks // SLIDE_FRAMES
    for _ in range(SLIDE_FRAMES):  # the same ticks as one run: watching changes no physics
        if world.record is not None:
            world.record()
        sim.step(chunk)
    sim.step(ticks - chunk * SLIDE_FRAMES)
    return float(np.linalg.norm(np.asarray(sim.pose_of(obj)[0]) - np.asarray(start))) * 100


def put_on_slope(world: World, obj: str, ramp: str) -> Feedback:
    """The agent's slope test. Its feedback says only that the object was set down, as
    ESI-Bench's put does: whether it slid is for the agent to see in the frames of the step, so the
    answer cannot be read from the text."""
    slide_cm(world, obj, ramp)
    return Feedback(
        operation="put_on_slope",
        success=True,
        reason=f"{obj} set on the middle of the slope and let go; the frames show what it did",
    )


class InclinedPlaneFamily(TaskFamily):
    """Inclined Plane."""

    family = "Physical Dynamics"
    subcategory = "Inclined Plane"
    slug = "inclined_plane"
    manipulations = ("put_back",)
    hide_from_first_view = False  # the evidence is an outcome; no first view can show it
    designs = ("yes", "no")  # alternate stays / slides exactly (coin flips gave 17 of 25 "yes")

    def generate(self, rng: np.random.Generator) -> TaskDraft:
        cols = colors(rng, 2)
        angle = float(rng.uniform(15, 35))
        length = 0.3
        height = length * math.tan(math.radians(angle))
        yaw = float(rng.uniform(0, 360))
        ramp_xy = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08)])
        ramp = ObjectSpec(
            name=f"{cols[0]}_ramp",
            shape="wedge",
            category="ramp",
            color=cols[0],
            size=rounded((length, 0.16, height)),  # type: ignore[arg-type]
            position=(r6(ramp_xy[0]), r6(ramp_xy[1]), r6(height / 2)),
            orientation=yaw_quat(yaw),
            mass=0.0,
            friction=1.0,
            movable=False,
            role="ramp",
        )
        stays = bool(rng.integers(2))
        tan = math.tan(math.radians(angle))
        friction = tan * (float(rng.uniform(1.3, 1.6)) if stays else float(rng.uniform(0.3, 0.7)))
        cube_xy = ramp_xy + unit(yaw + 90) * 0.2
        cube = make_object(
            "cube",
            cols[1],
            (float(cube_xy[0]), float(cube_xy[1])),
            0.05,
            yaw=yaw,
            friction=round(friction, 4),
            role="target",
        )
        camera = orbit_pose(
            (float(ramp_xy[0]), float(ramp_xy[1]), 0.05),
            yaw + 90 + float(rng.uniform(20, 60)),
            float(rng.uniform(12, 20)),
            0.7,
        )
        cn, rn = cube.name.replace("_", " "), ramp.name.replace("_", " ")
        return TaskDraft(
            design="yes" if stays else "no",
            scene=SceneSpec(objects=[ramp, cube], camera=camera),
            text=f"If the {cn} is set down on the slope of the {rn}, will it stay still without sliding?",
            contract=yes_no_contract(),
            guidance=(
                "Whether an object slides depends on friction, which cannot be seen. Test it: "
                "put_on_slope(object) sets the object on the middle of the slope and lets it go; "
                "watch what it does. put_back returns it. " + CAMERA_GUIDANCE
            ),
            metadata={
                "object": cube.name,
                "ramp": ramp.name,
                "angle_deg": round(angle, 3),
                "friction": round(friction, 4),
            },
        )

    def manipulable(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[str]:
        return [metadata["object"]]

    def custom_actions(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[ActionSpec]:
        return [
            ActionSpec(
                name="put_on_slope",
                kind="manipulation",
                params=["object"],
                choices={"object": [metadata["object"]]},
                description="set the object on the middle of the ramp's slope and let go",
            )
        ]

    def handle_action(self, world: World, action: Action) -> Feedback | None:
        if action.name != "put_on_slope":
            return None
        obj = action.args.get("object")
        if obj != world.metadata["object"]:
            return Feedback(
                operation="put_on_slope",
                success=False,
                reason=f"put_on_slope needs object={world.metadata['object']}",
            )
        return put_on_slope(world, world.metadata["object"], world.metadata["ramp"])

    def ground_truth(self, world: World, draft: TaskDraft) -> str:
        moved = slide_cm(world, draft.metadata["object"], draft.metadata["ramp"])
        return "no" if moved >= SLIDE_CM else "yes"

    def evidence(self, scene: SceneSpec, metadata: dict[str, Any]) -> list[Evidence]:
        o, r = metadata["object"], metadata["ramp"]
        return [
            OutcomeEvidence(
                action="put_on_slope",
                args={"object": o},
                show=[o, r],
                min_fraction=0.3,
                label="the slope test seen after it ran",
            )
        ]
