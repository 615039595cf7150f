"""The scene specification: everything needed to rebuild a tabletop scene from a question record.

A :class:`SceneSpec` is stored in ``Question.scene`` (as its JSON dump). It lists every object's
shape or asset, size, colour, pose, mass and friction, the table, the lighting, the camera's
initial pose and bounds, and - for temporal tasks - changes applied after the reference images
were taken. Nothing about a question's scene lives anywhere else.

Conventions: metres and degrees; the table top is the plane ``z = 0``; ``position`` is the centre
of an object's local bounding box; ``size`` is its full extent along its local x, y and z axes.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from eviseek.envs.tabletop.colors import PALETTE, SHADES, TABLE_RGBA, known_color
from eviseek.types import Pose

Shape = Literal[
    "box", "cylinder", "sphere", "cone", "pyramid", "wedge", "container", "asset", "cloth", "robot", "window"
]
"""Primitive shapes. ``container`` is an open-topped box (floor plus four walls); ``wedge`` is a
ramp rising along local +x; ``robot`` is a small wheeled robot filling ``size`` (four wheels, a
flat base, a mast and a camera head, facing local +x); ``asset`` loads a URDF from
``pybullet_data`` (``ObjectSpec.asset``); ``cloth`` is a square sheet of side ``size[0]`` draped
over whatever lies under it (visual only, see :mod:`eviseek.envs.tabletop.sim.cloth`); its
``position`` is the centre of its footprint on the table (z = 0), not of its bounding box;
``window`` is an upright board like a ``box`` (thin along local x) with a small rectangular hole
through it, :data:`WINDOW_WIDTH` wide from :data:`WINDOW_BOTTOM` to :data:`WINDOW_TOP` above its
bottom, in the middle of its width."""

WINDOW_WIDTH = 0.02
WINDOW_BOTTOM = 0.015
WINDOW_TOP = 0.03
"""The hole of a ``window`` board (m, ours): small and low enough that any catalogue object 5.5-7
cm wide standing a few centimetres behind it fills the hole, whatever its shape (Partial
Occlusion shows its target through it)."""

Material = Literal["matte", "glass", "mirror"]
"""How a surface is drawn. ``glass`` lets what is behind it show through (its colour tints it);
``mirror`` makes the local +x face of a box a planar mirror (see
:mod:`eviseek.envs.tabletop.sim.optics`)."""

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]


def yaw_quat(yaw_deg: float) -> Quat:
    """The quaternion (x, y, z, w) of a rotation by ``yaw_deg`` about the vertical axis."""
    half = math.radians(yaw_deg) / 2.0
    return (0.0, 0.0, round(math.sin(half), 9), round(math.cos(half), 9))


def rounded(values: tuple[float, ...] | list[float], nd: int = 6) -> tuple[float, ...]:
    """Round a vector so that specs serialise to short, stable JSON."""
    return tuple(round(float(v), nd) + 0.0 for v in values)  # + 0.0 turns -0.0 into 0.0


class ObjectSpec(BaseModel):
    """One object on the table."""

    name: str
    """The name agents see and use in actions, e.g. ``red_cube`` (colour, underscore, category)."""
    shape: Shape
    category: str
    """The noun used in questions and names (``cube``, ``cylinder``, ``ball``, ``cup``...)."""
    color: str
    size: Vec3
    """Full extent along local x, y, z. Cylinders, cones and spheres use ``size[0]`` as diameter."""
    position: Vec3
    orientation: Quat = (0.0, 0.0, 0.0, 1.0)
    mass: float = 0.2
    """Kilograms; ``0`` makes the object static (it never moves and cannot be picked up)."""
    friction: float = 0.6
    restitution: float = 0.0
    wall: float = 0.01
    """Wall and floor thickness of a ``container``."""
    asset: str | None = None
    """URDF path relative to ``pybullet_data`` when ``shape == "asset"``."""
    scale: float = 1.0
    """Global scaling of an ``asset``."""
    role: str = ""
    """What the generator made this object for (``target``, ``occluder``, ``distractor``...)."""
    movable: bool = True
    """Whether manipulation actions may move it (occluders and ramps are usually not)."""
    state: dict[str, Any] = Field(default_factory=dict)
    """Simulated state outside rigid-body physics, e.g. ``{"liquid_ml": 120, "capacity_ml": 300}``."""
    material: Material = "matte"
    """Optical material; only the renderer reads it (physics is the same for every material)."""

    @field_validator("color")
    @classmethod
    def _known_color(cls, v: str) -> str:
        if not known_color(v):
            raise ValueError(f"unknown colour {v!r}; use one of {', '.join([*PALETTE, *SHADES])}")
        return v

    @model_validator(mode="after")
    def _check(self) -> ObjectSpec:
        if any(s <= 0 for s in self.size):
            raise ValueError(f"object {self.name!r}: every size component must be positive, got {self.size}")
        if self.shape == "asset" and not self.asset:
            raise ValueError(f"object {self.name!r}: shape 'asset' needs an asset path (pybullet_data URDF)")
        if self.mass < 0:
            raise ValueError(f"object {self.name!r}: mass must be >= 0")
        if self.material == "mirror" and self.shape != "box":
            raise ValueError(f"object {self.name!r}: a mirror must be a box (its local +x face reflects)")
        if self.shape == "cloth" and self.mass > 0:
            raise ValueError(f"object {self.name!r}: a cloth is visual only; give it mass 0")
        return self


class TableSpec(BaseModel):
    """The table: a box whose top face is the plane z = 0, centred on the origin."""

    size: tuple[float, float] = (1.6, 1.2)
    thickness: float = 0.05
    height: float = 0.75
    """Height of the table top above the floor (the floor is at ``z = -height``)."""
    friction: float = 0.7
    rgba: tuple[float, float, float, float] = TABLE_RGBA


class LightSpec(BaseModel):
    """Lighting for the TinyRenderer: a directional light plus ambient terms."""

    direction: Vec3 = (0.4, 0.3, 1.0)
    """Direction towards the light (world frame)."""
    color: Vec3 = (1.0, 1.0, 1.0)
    ambient: float = 0.55
    diffuse: float = 0.55
    specular: float = 0.05
    shadow: bool = False
    """Shadows cost render time and can be mistaken for objects; off by default."""


class CameraBounds(BaseModel):
    """Where the floating camera may go. A move past a bound is clamped."""

    x: tuple[float, float] = (-1.5, 1.5)
    y: tuple[float, float] = (-1.2, 1.2)
    z: tuple[float, float] = (0.03, 1.6)
    pitch: tuple[float, float] = (-90.0, 45.0)

    @model_validator(mode="after")
    def _ordered(self) -> CameraBounds:
        for name in ("x", "y", "z", "pitch"):
            lo, hi = getattr(self, name)
            if lo > hi:
                raise ValueError(f"camera bound {name}: lower {lo} exceeds upper {hi}")
        return self

    def contains(self, pose: Pose) -> bool:
        """Whether ``pose`` lies within every bound."""
        return (
            self.x[0] <= pose.x <= self.x[1]
            and self.y[0] <= pose.y <= self.y[1]
            and self.z[0] <= pose.z <= self.z[1]
            and self.pitch[0] <= pose.pitch <= self.pitch[1]
        )


class SceneChange(BaseModel):
    """A change applied to the scene after its reference images were rendered.

    Used by temporal tasks (Unobserved Change): the reference images show the scene before, the
    episode starts after. ``remove`` takes the object off the table.
    """

    object: str
    position: Vec3 | None = None
    orientation: Quat | None = None
    color: str | None = None
    remove: bool = False


class SceneSpec(BaseModel):
    """A complete, rebuildable tabletop scene."""

    version: int = 1
    table: TableSpec = Field(default_factory=TableSpec)
    objects: list[ObjectSpec] = Field(default_factory=list)
    camera: Pose = Field(default_factory=lambda: Pose(x=-0.9, y=0.0, z=0.35, yaw=0.0, pitch=-15.0))
    """The initial camera pose."""
    bounds: CameraBounds = Field(default_factory=CameraBounds)
    fov: float = 60.0
    """Vertical field of view in degrees."""
    light: LightSpec = Field(default_factory=LightSpec)
    gravity: float = -9.81
    reference_cameras: list[Pose] = Field(default_factory=list)
    """Poses from which task reference images are rendered (before ``changes``)."""
    reference_light: LightSpec | None = None
    """The light reference images are rendered under, when it differs from ``light``."""
    reference_changes: list[list[SceneChange]] = Field(default_factory=list)
    """Per reference camera, changes applied to the stored scene just for that image (the scene
    is rebuilt afterwards), e.g. a robot shown at points of its drive."""
    changes: list[SceneChange] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
    """Family-specific settings that are not objects (documented by the family)."""

    @model_validator(mode="after")
    def _unique_names(self) -> SceneSpec:
        names = [o.name for o in self.objects]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"object names must be unique; repeated: {', '.join(dupes)}")
        known = set(names)
        for ch in [*self.changes, *(c for group in self.reference_changes for c in group)]:
            if ch.object not in known:
                raise ValueError(f"scene change names unknown object {ch.object!r}")
        return self

    def object(self, name: str) -> ObjectSpec:
        """The object called ``name``; ``KeyError`` listing the names if there is none."""
        for o in self.objects:
            if o.name == name:
                return o
        raise KeyError(f"no object {name!r} in the scene; objects: {', '.join(self.names())}")

    def names(self) -> list[str]:
        """Object names in spec order."""
        return [o.name for o in self.objects]

    def movable(self) -> list[str]:
        """Names of objects that manipulation actions may move."""
        return [o.name for o in self.objects if o.movable and o.mass > 0]

    @classmethod
    def from_question(cls, scene: dict[str, Any]) -> SceneSpec:
        """Validate ``Question.scene``; a clear error when it is not a tabletop scene."""
        if not scene:
            raise ValueError("the question has an empty scene; it was not generated for the tabletop env")
        return cls.model_validate(scene)


def object_name(color: str, category: str, index: int | None = None) -> str:
    """The visible name of an object: ``red_cube``, or ``red_cube_2`` when colours repeat."""
    base = f"{color}_{category.replace(' ', '_')}"
    return base if index is None else f"{base}_{index}"
