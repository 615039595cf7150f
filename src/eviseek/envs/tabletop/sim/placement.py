"""The scene check: does every object stand where a real object could?

A generated scene is only honest if it is physically possible: nothing sunk into the table,
nothing hanging in the air, nothing passing through something else. Generation runs this check on
the world it is about to store (and on the world the episode starts in) and refuses a draft that
fails it, so no question is ever written over a broken scene.

The check reads PyBullet's closest points between collision shapes, so it judges the shapes that
were built, not the numbers in the spec that built them: a container whose ``position`` was
copied from a taller one is caught by where its walls end up.

Rules (every tolerance is ours, set above the 0-1 mm contacts PyBullet leaves between settled
bodies and well under the centimetres a misplaced object is off by):

* **sunk**: an object's shape reaches more than :data:`TOLERANCE` into the table (or the floor);
* **floating**: an object is farther than :data:`TOLERANCE` from the table, the floor and every
  other object that could carry it (one it touches at its own lowest :data:`SUPPORT_BAND`);
* **overlap**: two objects' shapes pass more than :data:`TOLERANCE` into each other, except
  panels of one built structure (:data:`JOINED`), which meet in joints by design;
* **fallen**: a movable object lies on the floor (only fixtures stand there).

Generation checks the draft as built (sinking and overlaps only: physics would push overlapping
objects apart while settling and hide the fault) and again once it has come to rest.

Cloth is visual only (no collision shape) and is skipped; so is anything parked off the table.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel

from eviseek.envs.tabletop.sim.state import SimState

TOLERANCE = 0.002
"""Metres an object may sink into, float above or pass into another shape (ours)."""
SUPPORT_BAND = 0.01
"""A touching object carries another only where it touches it within this many metres of the
carried object's lowest point (ours: a neighbour touching its side does not hold it up)."""
JOINED = frozenset({"wall", "mat"})
"""Categories of static panels that together form one structure (Connectivity's walls meet at
corners, its doorway mats meet where doorways line up); two of one such category may overlap."""
SEARCH = 0.05
"""How far (m) PyBullet is asked to look for closest points."""


class PlacementProblem(BaseModel):
    """One object that no real scene could hold where it stands."""

    object: str
    kind: Literal["sunk", "floating", "overlap", "fallen"]
    mm: float
    """How far into the table or the other object (``sunk``, ``overlap``), or how far above the
    nearest support (``floating``), in millimetres."""
    other: str = ""
    """The other object of an overlap."""

    def describe(self) -> str:
        """One line naming the object, what is wrong and by how much."""
        if self.kind == "sunk":
            return f"{self.object}: reaches {self.mm:.1f} mm into the table"
        if self.kind == "fallen":
            return f"{self.object}: fell off the table onto the floor"
        if self.kind == "floating" and self.mm >= SEARCH * 1000:
            return f"{self.object}: nothing within {SEARCH * 1000:.0f} mm under it (it hangs in the air)"
        if self.kind == "floating":
            return f"{self.object}: floats {self.mm:.1f} mm above anything that could carry it"
        return f"{self.object} and {self.other} overlap by {self.mm:.1f} mm"


def _closest(sim: SimState, a: int, b: int) -> list[tuple]:
    return list(sim.p.getClosestPoints(a, b, SEARCH, physicsClientId=sim.client))


def placement_problems(sim: SimState, *, drafted: bool = False) -> list[PlacementProblem]:
    """Every object of ``sim``'s current state that is sunk, floating, overlapping or fallen.

    ``drafted``: the state is a draft before it was simulated to rest, where objects may be
    released a little above their support; only sinking and overlaps count (physics would push
    overlapping objects apart while settling and hide the fault)."""
    names = [
        o.name
        for o in sim.spec.objects
        if o.shape != "cloth" and o.name in sim.uid and not sim.is_parked(o.name)
    ]
    category = {o.name: o.category for o in sim.spec.objects}
    dynamic = {o.name: o.mass > 0 for o in sim.spec.objects}
    problems: list[PlacementProblem] = []
    for i, name in enumerate(names):
        uid = sim.uid[name]
        bottom = float(sim.aabb(name)[0][2])
        floor = _closest(sim, uid, sim.floor_uid)
        ground = _closest(sim, uid, sim.table_uid) + floor
        gap = min((float(pt[8]) for pt in ground), default=np.inf)
        if gap < -TOLERANCE:
            problems.append(PlacementProblem(object=name, kind="sunk", mm=round(-gap * 1000, 1)))
        if dynamic[name] and min((float(pt[8]) for pt in floor), default=np.inf) <= TOLERANCE:
            # Only fixtures (a backdrop beyond the table's edge) stand on the floor.
            problems.append(PlacementProblem(object=name, kind="fallen", mm=0.0))
            continue
        carried = gap <= TOLERANCE
        nearest = gap
        for j, other in enumerate(names):
            if other == name:
                continue
            points = _closest(sim, uid, sim.uid[other])
            if not points:
                continue
            d = min(float(pt[8]) for pt in points)
            joint = category[name] in JOINED and category[name] == category[other]
            if j > i and d < -TOLERANCE and not joint:
                mm = round(-d * 1000, 1)
                problems.append(PlacementProblem(object=name, kind="overlap", mm=mm, other=other))
            low = [pt for pt in points if float(pt[5][2]) <= bottom + SUPPORT_BAND]
            if low:
                near = min(float(pt[8]) for pt in low)
                nearest = min(nearest, near)
                carried = carried or near <= TOLERANCE
        if not carried and not drafted:
            mm = round(min(nearest, SEARCH) * 1000, 1)
            problems.append(PlacementProblem(object=name, kind="floating", mm=mm))
    return problems
