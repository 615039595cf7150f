"""Bounds on a tabletop scene that arrives from outside, checked before anything is built.

A question's ``scene`` is data: over ``eviseek env serve`` any token holder writes it. Before
these checks a 2 MB scene of a few thousand objects cost the server about 20 s of CPU to build,
and an ``asset`` of ``../../x.urdf`` loaded any URDF file on the server. :func:`checked_scene`
refuses such a scene with a one-line :class:`~eviseek.errors.EnvArgumentError` (the caller's
mistake: an env server answers it with 400) before the simulator sees it.

The bounds are ours, set well above every generated scene and well below what makes a reset
slow: across the 832 generated ``dev`` and ``test`` questions the largest scene has 19 objects,
3 reference cameras and 3 changes, no object is longer than 1.2 m or further than 0.91 m from
the table's centre, and the longest scene is 7.6 KB of JSON.
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path, PurePosixPath
from typing import Any

from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.errors import EnvArgumentError

MAX_OBJECTS = 64
MAX_REFERENCE_CAMERAS = 16
MAX_CHANGES = 256
"""Scene changes in all: ``changes`` and every reference camera's ``reference_changes``."""
MAX_SIZE_M = 2.0
"""Longest side of one object (and of the table), in metres."""
MAX_REACH_M = 5.0
"""How far from the table's centre an object or a camera may be, along any axis."""
MAX_ASSET_SCALE = 10.0
MAX_SCENE_CHARS = 256 * 2**10
"""Characters of the scene's ``repr`` (about its JSON's length), at most."""


def checked_scene(scene: dict[str, Any]) -> SceneSpec:
    """``Question.scene`` as a :class:`SceneSpec`, refused when it is over a bound above or names
    an asset outside ``pybullet_data``; counts are checked before the spec is validated."""
    if not isinstance(scene, dict):
        raise EnvArgumentError("a tabletop scene must be a JSON object")
    _at_most("objects", _count(scene.get("objects")), MAX_OBJECTS)
    _at_most("reference_cameras", _count(scene.get("reference_cameras")), MAX_REFERENCE_CAMERAS)
    groups = scene.get("reference_changes")
    nested = sum(_count(g) for g in groups) if isinstance(groups, list) else 0
    _at_most("changes (reference changes included)", _count(scene.get("changes")) + nested, MAX_CHANGES)
    size = len(repr(scene))  # about the JSON's length, without a JSON encoder's work
    if size > MAX_SCENE_CHARS:
        raise EnvArgumentError(f"a tabletop scene may take {MAX_SCENE_CHARS:,} characters, this one {size:,}")
    try:
        spec = SceneSpec.from_question(scene)
    except ValueError as exc:
        raise EnvArgumentError(f"not a valid tabletop scene: {_first_line(exc)}") from None
    _check_extents(spec)
    for obj in spec.objects:
        if obj.shape == "asset":
            asset_path(obj.asset or "")
    return spec


def asset_path(name: str) -> str:
    """The file of the ``pybullet_data`` URDF called ``name``; :class:`EnvArgumentError` unless ``name``
    is a relative ``.urdf`` path naming a regular file inside ``pybullet_data`` (symlinks
    resolved), so no other file on the machine is ever loaded."""
    import pybullet_data

    refused = EnvArgumentError(
        f"asset {name[:200]!r} is not a URDF of pybullet_data (give a relative name such as "
        "'duck_vhacd.urdf')"
    )
    parts = PurePosixPath(name)
    if not name or "\0" in name or "\\" in name or parts.is_absolute() or ".." in parts.parts:
        raise refused
    if parts.suffix.lower() != ".urdf":
        raise refused
    root = Path(pybullet_data.getDataPath()).resolve()
    try:
        full = (root / parts).resolve(strict=True)
    except (OSError, RuntimeError):
        raise refused from None
    if not full.is_relative_to(root) or not full.is_file():
        raise refused
    return str(full)


def _check_extents(spec: SceneSpec) -> None:
    if (
        max(spec.table.size) > MAX_SIZE_M * 2
        or spec.table.thickness > MAX_SIZE_M
        or spec.table.height > MAX_SIZE_M
    ):
        raise EnvArgumentError(f"the table is larger than {MAX_SIZE_M * 2:g} x {MAX_SIZE_M:g} m")
    for obj in spec.objects:
        if not all(
            math.isfinite(v) for v in (*obj.size, *obj.position, *obj.orientation, obj.mass, obj.scale)
        ):
            raise EnvArgumentError(f"object {obj.name[:80]!r}: every number must be finite")
        if max(obj.size) > MAX_SIZE_M:
            raise EnvArgumentError(
                f"object {obj.name[:80]!r}: a side of {max(obj.size):g} m is over {MAX_SIZE_M:g} m"
            )
        if max(abs(v) for v in obj.position) > MAX_REACH_M:
            raise EnvArgumentError(
                f"object {obj.name[:80]!r}: placed more than {MAX_REACH_M:g} m from the table"
            )
        if not 0 < obj.scale <= MAX_ASSET_SCALE:
            raise EnvArgumentError(f"object {obj.name[:80]!r}: scale must be in (0, {MAX_ASSET_SCALE:g}]")
    cameras = [spec.camera, *spec.reference_cameras]
    for pose in cameras:
        values = (pose.x, pose.y, pose.z, pose.yaw, pose.pitch)
        if (
            not all(math.isfinite(v) for v in values)
            or max(abs(pose.x), abs(pose.y), abs(pose.z)) > MAX_REACH_M
        ):
            raise EnvArgumentError(f"a camera pose must be finite and within {MAX_REACH_M:g} m of the table")


def _count(value: Any) -> int:
    return len(value) if isinstance(value, (list, dict)) else 0


def _at_most(what: str, count: int, limit: int) -> None:
    if count > limit:
        raise EnvArgumentError(f"a tabletop scene may have {limit} {what}, this one has {count}")


def _first_line(exc: BaseException) -> str:
    """Pydantic's first problem with where it is, else the message's first line."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "value"
            return f"{where}: {first.get('msg', '')}"[:300]
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__
