"""Bounds on a house that arrives from outside (an env server's client writes it), checked
before anything is built, as :mod:`eviseek.envs.tabletop.limits` does for the tabletop.

The bounds are ours, set well above every generated house and well below what makes a reset
slow: across the 224 generated ``dev`` and ``test`` questions the largest house has 6 rooms,
6 doorways, 36 wall slabs and 32 items, spans at most 13.5 m from the origin, and is 14 KB of JSON.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError

from eviseek.envs.house.spec import HouseSpec
from eviseek.errors import EnvArgumentError

MAX_COUNTS = {"rooms": 32, "doors": 64, "walls": 256, "items": 256}
MAX_REACH_M = 30.0
"""How far from the origin any coordinate may be, in metres (the occupancy grid of a house
spanning it all has about 1,200 x 1,200 cells at 5 cm)."""
MAX_SCENE_CHARS = 512 * 2**10
"""Characters of the scene's ``repr`` (about its JSON's length), at most."""


def checked_house(scene: Any, question_id: str = "") -> HouseSpec:
    """``Question.scene`` as a :class:`HouseSpec`, refused with :class:`EnvArgumentError` when it
    is not a house or is over a bound above; counts are checked before the spec is validated."""
    if not isinstance(scene, dict):
        raise EnvArgumentError(f"question {question_id!r} carries no house scene (not a JSON object)")
    for key, limit in MAX_COUNTS.items():
        value = scene.get(key)
        count = len(value) if isinstance(value, (list, dict)) else 0
        if count > limit:
            raise EnvArgumentError(f"a house may have {limit} {key}, this one has {count}")
    size = len(repr(scene))
    if size > MAX_SCENE_CHARS:
        raise EnvArgumentError(f"a house scene may take {MAX_SCENE_CHARS:,} characters, this one {size:,}")
    try:
        spec = HouseSpec.from_question(scene)
    except ValueError as exc:  # pydantic's ValidationError
        errors = exc.errors() if isinstance(exc, ValidationError) else []
        why = f"{'.'.join(map(str, errors[0]['loc']))}: {errors[0]['msg']}" if errors else str(exc)
        raise EnvArgumentError(f"question {question_id!r} carries no house scene: {why[:300]}") from None
    numbers = [
        *(v for r in spec.rooms for v in r.rect),
        *(v for w in spec.walls for v in (*w.rect, w.height)),
        *(v for d in spec.doors for v in (*d.centre, d.width)),
        *(v for it in spec.items for v in (*it.size, *it.position)),
        spec.start.x,
        spec.start.y,
        spec.start.z,
        spec.camera_height,
    ]
    if not all(math.isfinite(v) and abs(v) <= MAX_REACH_M for v in numbers):
        raise EnvArgumentError(
            f"every coordinate and size of a house must be finite and within {MAX_REACH_M:g} m"
        )
    return spec
