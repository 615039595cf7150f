"""Physical actions that run real PyBullet physics: pick up, put on, put inside, place, put back.

A :class:`Manipulator` turns an action into teleport-then-simulate steps: the object is placed
just above where the action puts it, released, and the world is simulated until everything is at
rest. Success is judged from the settled state (did the object stay on its target, does it sit
inside the container), so a stack that topples or an object too big for a container fails the way
it would in the world. The environment uses it for agent actions and task families use the same
code to compute ground truth by simulation.

Every outcome is a :class:`~eviseek.types.Feedback`; a bad request (unknown object, an object
that cannot move) is ``success=False`` with a reason naming the legal choices, never an exception.
"""

from __future__ import annotations

import math

import numpy as np

from eviseek.envs.tabletop.sim import PARK_Z, TabletopSim
from eviseek.types import ActionSpec, Feedback

DROP_CLEARANCE = 0.004
"""Gap left under an object placed by an action, so it settles onto its support instead of
starting in penetration (which would make PyBullet push it away)."""
PLACE_OFFSET = (0.003, 0.002)
"""Metres off the exact target centre where objects are released. No hand is perfectly precise,
and an exactly centred release can balance on a point (a cube on a ball) where a real one falls."""
MIN_SETTLE_S = 0.75
"""Simulated seconds always run after a placement, so slow instabilities show before judging."""
LIFT_HEIGHT = 0.15
"""How far above the tallest object a held object hovers."""

MANIPULATIONS: dict[str, tuple[list[str], str]] = {
    "pick_up": (["object"], "lift an object and hold it above the table"),
    "put_on": (
        ["object", "target"],
        "place an object on top of another object (physics decides if it stays)",
    ),
    "put_inside": (["object", "target"], "put an object into a container (physics decides if it fits)"),
    "place_on_table": (["object"], "set an object down on a free spot of the table"),
    "put_back": (["object"], "return an object to where it was at the start"),
}
"""Built-in manipulation primitives: argument names and a description."""


class Manipulator:
    """Executes built-in manipulation primitives on a :class:`TabletopSim`."""

    def __init__(self, sim: TabletopSim) -> None:
        self.sim = sim
        self.home = sim.poses()
        """Where every object was when the episode started (``put_back`` returns objects here)."""
        self.held: str | None = None

    # -- queries -------------------------------------------------------------------

    def specs(self, names: list[str], movable: list[str], targets: list[str]) -> list[ActionSpec]:
        """Action specs of the primitives ``names`` with their legal object choices."""
        out = []
        for name in names:
            params, desc = MANIPULATIONS[name]
            choices: dict[str, list[str]] = {"object": list(movable)}
            if "target" in params:
                choices["target"] = list(targets)
            out.append(
                ActionSpec(name=name, kind="manipulation", params=params, choices=choices, description=desc)
            )
        return out

    def _half_z(self, name: str) -> float:
        lo, hi = self.sim.aabb(name)
        return float(hi[2] - lo[2]) / 2.0

    def _centre_offset(self, name: str) -> np.ndarray:
        """Base position minus AABB centre (non-zero for assets whose origin is off-centre)."""
        lo, hi = self.sim.aabb(name)
        pos = np.asarray(self.sim.pose_of(name)[0])
        return pos - (lo + hi) / 2.0

    def _on_table(self) -> list[str]:
        return [n for n in self.sim.uid if not self.sim.is_parked(n)]

    def supporters(self, name: str) -> list[str]:
        """Objects directly below ``name`` and touching it."""
        lo, _ = self.sim.aabb(name)
        out = []
        for other in self.sim.contacts(name):
            if other in ("table", "floor") or other not in self.sim.uid:
                continue
            olo, ohi = self.sim.aabb(other)
            if ohi[2] <= lo[2] + 0.02 and olo[2] < lo[2]:
                out.append(other)
        return out

    def resting_on(self, name: str) -> list[str]:
        """Objects directly on top of ``name`` and touching it."""
        return [
            o for o in self.sim.uid if o != name and not self.sim.is_parked(o) and name in self.supporters(o)
        ]

    def stack_of(self, name: str) -> list[str]:
        """The stack containing ``name``, bottom to top (just ``[name]`` when it stands alone)."""
        chain = [name]
        seen = {name}
        cur = name
        while True:
            below = [s for s in self.supporters(cur) if s not in seen]
            if not below:
                break
            cur = below[0]
            chain.insert(0, cur)
            seen.add(cur)
        cur = name
        while True:
            above = [s for s in self.resting_on(cur) if s not in seen]
            if not above:
                break
            cur = above[0]
            chain.append(cur)
            seen.add(cur)
        return chain

    def on_floor(self, name: str) -> bool:
        """Whether an object fell off the table."""
        return self.sim.pose_of(name)[0][2] < -0.05 and not self.sim.is_parked(name)

    # -- dispatch ------------------------------------------------------------------

    def execute(self, name: str, args: dict[str, str], movable: list[str], targets: list[str]) -> Feedback:
        """Run primitive ``name``; ``movable``/``targets`` are the legal argument values."""
        if name not in MANIPULATIONS:
            return Feedback(
                operation=name,
                success=False,
                reason=f"unknown manipulation {name!r}; manipulations: {', '.join(MANIPULATIONS)}",
            )
        params, _ = MANIPULATIONS[name]
        missing = [p for p in params if not args.get(p)]
        if missing:
            return Feedback(
                operation=name,
                success=False,
                reason=f"{name} needs argument(s) {', '.join(missing)}; e.g. {name}("
                + ", ".join(f"{p}=<name>" for p in params)
                + ")",
            )
        obj = args["object"]
        if obj not in movable:
            return Feedback(
                operation=name,
                success=False,
                reason=f"{obj!r} is not an object you can move here; "
                f"movable objects: {', '.join(movable) or 'none'}",
                state={"object": obj},
            )
        target = args.get("target")
        if "target" in params and target not in targets:
            return Feedback(
                operation=name,
                success=False,
                reason=f"{target!r} is not a valid target; targets: {', '.join(targets) or 'none'}",
                state={"object": obj, "target": target},
            )
        before = self.sim.poses()
        fb = getattr(self, f"_{name}")(obj, target) if target is not None else getattr(self, f"_{name}")(obj)
        fb.state.setdefault("object", obj)
        if target is not None:
            fb.state.setdefault("target", target)
        fell = [
            n
            for n, (pos, _) in self.sim.poses().items()
            if n != obj and not self.sim.is_parked(n) and before[n][0][2] - pos[2] > 0.03
        ]
        if fell:
            fb.state["disturbed"] = fell
        fb.state["held"] = self.held
        return fb

    # -- primitives ----------------------------------------------------------------

    def _pick_up(self, obj: str) -> Feedback:
        if self.held == obj:
            return Feedback(operation="pick_up", success=False, reason=f"{obj} is already held")
        above = self.resting_on(obj)
        if above:
            return Feedback(
                operation="pick_up",
                success=False,
                reason=f"{', '.join(above)} rests on {obj}; move it first",
                state={"current_stack": self.stack_of(obj)},
            )
        if self.held is not None:
            self._place_on_table(self.held)
        top = max((self.sim.aabb(n)[1][2] for n in self._on_table() if n != obj), default=0.0)
        pos = np.asarray(self.sim.pose_of(obj)[0])
        lift = (float(pos[0]), float(pos[1]), max(float(top), 0.0) + LIFT_HEIGHT + self._half_z(obj))
        self.sim.hold(obj, lift)
        self.held = obj
        self.sim.settle()
        return Feedback(operation="pick_up", success=True, reason=f"holding {obj} above the table")

    def _drop_at(self, obj: str, xy: tuple[float, float], bottom_z: float) -> None:
        """Release ``obj`` with its bottom just above ``bottom_z`` at ``xy`` and let physics act."""
        self.sim.release(obj)
        if self.held == obj:
            self.held = None
        offset = self._centre_offset(obj)
        centre = np.array(
            [xy[0] + PLACE_OFFSET[0], xy[1] + PLACE_OFFSET[1], bottom_z + self._half_z(obj) + DROP_CLEARANCE]
        )
        self.sim.set_pose(obj, tuple(float(v) for v in centre + offset))
        self.sim.settle(min_seconds=MIN_SETTLE_S)

    def _put_on(self, obj: str, target: str) -> Feedback:
        if obj == target:
            return Feedback(operation="put_on", success=False, reason="an object cannot be put on itself")
        if self.sim.is_parked(target):
            return Feedback(operation="put_on", success=False, reason=f"{target} is not on the table")
        if obj in self.stack_of(target)[: self.stack_of(target).index(target)]:
            return Feedback(
                operation="put_on", success=False, reason=f"{target} rests on {obj}; cannot put {obj} on it"
            )
        lo, hi = self.sim.aabb(target)
        self._drop_at(obj, (float(lo[0] + hi[0]) / 2, float(lo[1] + hi[1]) / 2), float(hi[2]))
        stack = self.stack_of(obj)
        ok = target in stack and stack.index(target) < stack.index(obj) and not self.on_floor(obj)
        if ok:
            reason = f"{obj} rests on {target} after settling"
        elif self.on_floor(obj):
            reason = f"{obj} fell off {target} and off the table"
        else:
            reason = f"{obj} did not stay on {target}; it slid or toppled off"
        return Feedback(operation="put_on", success=ok, reason=reason, state={"current_stack": stack})

    def _put_inside(self, obj: str, target: str) -> Feedback:
        spec = self.sim.spec.object(target)
        if spec.shape != "container":
            containers = [o.name for o in self.sim.spec.objects if o.shape == "container"]
            return Feedback(
                operation="put_inside",
                success=False,
                reason=f"{target} is not a container; containers: {', '.join(containers) or 'none'}",
            )
        lo, hi = self.sim.aabb(target)
        self._drop_at(obj, (float(lo[0] + hi[0]) / 2, float(lo[1] + hi[1]) / 2), float(hi[2]))
        ok = self.is_inside(obj, target)
        reason = f"{obj} is inside {target}" if ok else f"{obj} does not fit inside {target}"
        return Feedback(operation="put_inside", success=ok, reason=reason, state={"inside": ok})

    def is_inside(self, obj: str, container: str) -> bool:
        """Whether ``obj``'s centre lies within the container's inner walls, below its rim."""
        spec = self.sim.spec.object(container)
        pos, orn = self.sim.pose_of(container)
        inv_pos, inv_orn = self.sim.p.invertTransform(pos, orn)
        centre = np.mean(self.sim.aabb(obj), axis=0)
        local, _ = self.sim.p.multiplyTransforms(inv_pos, inv_orn, centre.tolist(), [0, 0, 0, 1])
        sx, sy, sz = spec.size
        w = spec.wall
        olo, _ = self.sim.aabb(obj)
        _, chi = self.sim.aabb(container)
        return (
            abs(local[0]) <= sx / 2 - w
            and abs(local[1]) <= sy / 2 - w
            and local[2] < sz / 2
            and float(olo[2]) < float(chi[2]) - 0.005
        )

    def free_spot(self, obj: str, prefer: tuple[float, float] | None = None) -> tuple[float, float] | None:
        """A table spot where ``obj``'s footprint touches no other object, nearest ``prefer`` first."""
        lo, hi = self.sim.aabb(obj)
        radius = float(max(hi[0] - lo[0], hi[1] - lo[1])) / 2 + 0.015
        tx, ty = self.sim.spec.table.size
        others = [self.sim.aabb(n) for n in self._on_table() if n != obj]
        start = prefer or (0.0, 0.0)
        cands = [start]
        step = 0.06
        for ring in range(1, 30):
            for k in range(8 * ring):
                a = 2 * math.pi * k / (8 * ring)
                cands.append((start[0] + ring * step * math.cos(a), start[1] + ring * step * math.sin(a)))
        for x, y in cands:
            if abs(x) > tx / 2 - radius or abs(y) > ty / 2 - radius:
                continue
            if all(
                x + radius < olo[0] or x - radius > ohi[0] or y + radius < olo[1] or y - radius > ohi[1]
                for olo, ohi in others
            ):
                return (x, y)
        return None

    def _place_on_table(self, obj: str) -> Feedback:
        if self.held != obj:
            above = self.resting_on(obj)
            if above:
                return Feedback(
                    operation="place_on_table",
                    success=False,
                    reason=f"{', '.join(above)} rests on {obj}; move it first",
                )
        home = self.home[obj][0]
        spot = self.free_spot(obj, (home[0], home[1]) if home[2] > PARK_Z / 2 else None)
        if spot is None:
            return Feedback(operation="place_on_table", success=False, reason="no free spot on the table")
        self._drop_at(obj, spot, 0.0)
        ok = "table" in self.sim.contacts(obj)
        return Feedback(
            operation="place_on_table",
            success=ok,
            reason=f"{obj} is on the table" if ok else f"{obj} did not come to rest on the table",
            state={"current_stack": self.stack_of(obj)},
        )

    def _put_back(self, obj: str) -> Feedback:
        above = self.resting_on(obj) if self.held != obj else []
        if above:
            return Feedback(
                operation="put_back",
                success=False,
                reason=f"{', '.join(above)} rests on {obj}; move it first",
            )
        self.sim.release(obj)
        if self.held == obj:
            self.held = None
        pos, orn = self.home[obj]
        self.sim.set_pose(obj, (pos[0], pos[1], pos[2] + DROP_CLEARANCE), orn)
        self.sim.settle()
        moved = float(np.linalg.norm(np.asarray(self.sim.pose_of(obj)[0]) - np.asarray(pos)))
        ok = moved < 0.03
        return Feedback(
            operation="put_back",
            success=ok,
            reason=f"{obj} is back where it started" if ok else f"{obj} could not stay at its starting place",
            state={"current_stack": self.stack_of(obj)},
        )
