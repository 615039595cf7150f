"""A small pure-Python room world implementing the Env protocol, for agent tests.

The camera moves on a plane with a height, yaw (counter-clockwise, 0 = north) and pitch, like the
benchmark's floating camera. Each frame is a small synthetic image: a background that encodes the
pose (so distinct poses give distinct frames) with coloured columns for the objects inside the
field of view, and every object drawn as a dot when the camera looks steeply down. Manipulation
commands move objects between the table and stacks. Nothing here is random.

``navigation_only=True`` gives an EXPRESS-Bench-like interface: forward moves and 30-degree turns
only, no backward, lateral or vertical moves, no pitch and no manipulation. ``range_scan=True``
adds a depth-like sensor for the frontier baseline (``metadata["range_scan"]``: distances to the
room's walls across a 90-degree view, left to right) and makes a move into a wall fail.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eviseek.envs.base import question_from_options
from eviseek.types import Action, ActionSpec, Feedback, Image, Observation, Pose, StepResult

OBJECTS: list[tuple[str, float, float, tuple[int, int, int]]] = [
    ("red_cube", 0.0, 1.5, (220, 30, 30)),
    ("blue_box", 1.0, 1.0, (30, 30, 220)),
    ("green_ball", -1.2, 0.5, (30, 200, 30)),
]


class GridWorld:
    """A deterministic room with three objects and a floating camera."""

    def __init__(
        self,
        *,
        navigation_only: bool = False,
        turn_deg: float | None = None,
        move_m: float = 0.25,
        size: tuple[int, int] = (24, 32),
        env_id: str = "test/Grid-v0",
        range_scan: bool = False,
    ) -> None:
        self.range_scan = range_scan
        self.env_id = env_id
        self.navigation_only = navigation_only
        self.turn_deg = turn_deg if turn_deg is not None else (30.0 if navigation_only else 15.0)
        self.move_m = move_m
        self.size = size
        self.closed = False
        self.steps_taken: list[Action] = []
        self.reset()

    # --- Env protocol -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        self.question = question_from_options(options)
        self.x, self.y, self.z, self.yaw, self.pitch = 0.0, -1.0, 1.0, 0.0, 0.0
        self.objects = {name: [x, y, color] for name, x, y, color in OBJECTS}
        self.stack: list[str] = []
        self.holding: str | None = None
        self.frame = 0
        self.steps_taken = []
        return self._observe(), {"seed": seed}

    def legal_actions(self) -> list[ActionSpec]:
        t, m = self.turn_deg, self.move_m
        specs = [
            ActionSpec(name="move_forward", magnitude=m),
            ActionSpec(name="turn_left", magnitude=t),
            ActionSpec(name="turn_right", magnitude=t),
        ]
        if self.navigation_only:
            return specs
        specs += [
            ActionSpec(name="move_backward", magnitude=m),
            ActionSpec(name="move_left", magnitude=m),
            ActionSpec(name="move_right", magnitude=m),
            ActionSpec(name="move_up", magnitude=m),
            ActionSpec(name="move_down", magnitude=m),
            ActionSpec(name="turn_up", magnitude=t),
            ActionSpec(name="turn_down", magnitude=t),
        ]
        names = sorted(self.objects)
        specs += [
            ActionSpec(name="pick_up", kind="manipulation", params=["object"], choices={"object": names}),
            ActionSpec(
                name="put_on",
                kind="manipulation",
                params=["object", "target"],
                choices={"object": names, "target": names},
            ),
        ]
        return specs

    def step(self, action: Action) -> StepResult:
        self.steps_taken.append(action)
        fb = self._apply(action)
        self.frame += 1
        return StepResult(observation=self._observe(), feedback=fb)

    def close(self) -> None:
        self.closed = True

    # --- dynamics -----------------------------------------------------------------------------
    def _apply(self, action: Action) -> Feedback:
        legal = {s.name: s for s in self.legal_actions()}
        name = action.name
        if name not in legal:
            return Feedback(
                operation=name, success=False, reason=f"unknown action; legal: {', '.join(legal)}"
            )
        rad = math.radians(self.yaw)
        fwd = (-math.sin(rad), math.cos(rad))
        right = (math.cos(rad), math.sin(rad))
        m = self.move_m
        moves = {
            "move_forward": (fwd[0] * m, fwd[1] * m, 0.0),
            "move_backward": (-fwd[0] * m, -fwd[1] * m, 0.0),
            "move_right": (right[0] * m, right[1] * m, 0.0),
            "move_left": (-right[0] * m, -right[1] * m, 0.0),
            "move_up": (0.0, 0.0, m),
            "move_down": (0.0, 0.0, -m),
        }
        if name in moves:
            dx, dy, dz = moves[name]
            nx, ny, nz = self.x + dx, self.y + dy, self.z + dz
            cx, cy, cz = max(-2, min(2, nx)), max(-2, min(2, ny)), max(0.25, min(2.0, nz))
            clamped = (cx, cy, cz) != (nx, ny, nz)
            if clamped and self.range_scan:
                return Feedback(operation=name, success=False, reason="bumped into a wall")
            self.x, self.y, self.z = cx, cy, cz
            return Feedback(operation=name, state={"clamped": True} if clamped else {})
        if name in ("turn_left", "turn_right"):
            self.yaw = (self.yaw + (self.turn_deg if name == "turn_left" else -self.turn_deg)) % 360
            return Feedback(operation=name)
        if name in ("turn_up", "turn_down"):
            target = self.pitch + (self.turn_deg if name == "turn_up" else -self.turn_deg)
            self.pitch = max(-90.0, min(45.0, target))
            return Feedback(operation=name, state={"clamped": True} if self.pitch != target else {})
        obj = action.args.get("object")
        if obj not in self.objects:
            return Feedback(
                operation=name,
                success=False,
                reason=f"unknown object {obj!r}; legal: {', '.join(sorted(self.objects))}",
            )
        if name == "pick_up":
            self.holding = obj
            if obj in self.stack:
                self.stack.remove(obj)
            return Feedback(operation=name, state={"holding": obj})
        target = action.args.get("target")
        if target not in self.objects or target == obj:
            return Feedback(operation=name, success=False, reason=f"bad target {target!r}")
        if not self.stack:
            self.stack = [target]
        self.stack.append(obj)
        self.holding = None
        self.objects[obj][0], self.objects[obj][1] = self.objects[target][0], self.objects[target][1]
        return Feedback(operation=name, state={"current_stack": list(self.stack)})

    # --- rendering ----------------------------------------------------------------------------
    def visible(self) -> list[str]:
        """Objects inside the horizontal field of view (privileged; tests only)."""
        out = []
        for name, (ox, oy, _c) in self.objects.items():
            bearing = math.degrees(math.atan2(-(ox - self.x), oy - self.y))
            rel = (bearing - self.yaw + 180) % 360 - 180
            if abs(rel) <= 45 and self.pitch > -60:
                out.append(name)
        return out

    def _observe(self) -> Observation:
        h, w = self.size
        img = np.zeros((h, w, 3), dtype=np.uint8)
        img[:, :, 0] = int(40 + 20 * self.x) % 256
        img[:, :, 1] = int(60 + 20 * self.y + self.yaw / 3) % 256
        img[:, :, 2] = int(50 + 40 * self.z - self.pitch) % 256
        for _name, (ox, oy, color) in self.objects.items():
            if self.pitch <= -60:
                px = int((ox + 2) / 4 * (w - 1))
                py = int((2 - oy) / 4 * (h - 1))
                img[max(0, py - 1) : py + 2, max(0, px - 1) : px + 2] = color
                continue
            bearing = math.degrees(math.atan2(-(ox - self.x), oy - self.y))
            rel = (bearing - self.yaw + 180) % 360 - 180
            if abs(rel) <= 45:
                col = int((45 - rel) / 90 * (w - 3))
                img[h // 3 :, col : col + 3] = color
        return Observation(
            image=Image.from_array(img),
            pose=Pose(x=self.x, y=self.y, z=self.z, yaw=self.yaw, pitch=self.pitch),
            frame_id=self.frame,
            metadata={"visible": self.visible(), **({"range_scan": self.scan()} if self.range_scan else {})},
        )

    def scan(self, rays: int = 9, fov: float = 90.0, max_range: float = 3.0) -> dict[str, Any]:
        """Distances to the walls of the 4 m room along ``rays`` rays, left edge to right edge."""
        ranges = []
        for i in range(rays):
            rad = math.radians(self.yaw + fov / 2 - fov * i / (rays - 1))
            dx, dy = -math.sin(rad), math.cos(rad)
            hits = [
                (bound - pos) / d
                for pos, d in ((self.x, dx), (self.y, dy))
                for bound in (-2.0, 2.0)
                if abs(d) > 1e-9 and (bound - pos) / d > 0
            ]
            ranges.append(round(min([max_range, *hits]), 3))
        return {"ranges": ranges, "fov_deg": fov, "max_range": max_range}
