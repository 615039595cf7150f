"""One PyBullet camera render (RGB, metric depth, body-id segmentation), shared by the envs.

The caller passes its PyBullet module and client; nothing here imports PyBullet.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from eviseek.envs import view
from eviseek.types import Pose


class OwnedClient:
    """Mixin of a world that owns one PyBullet client (``p`` the module, ``client`` its id):
    ``close`` disconnects it once, and a world dropped without ``close`` disconnects when
    collected, so a failed episode does not leak a physics server."""

    p: Any
    client: int

    def close(self) -> None:
        """Disconnect the client (idempotent)."""
        if self.client >= 0:
            with contextlib.suppress(Exception):  # already gone
                self.p.disconnect(physicsClientId=self.client)
            self.client = -1

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            self.close()


@dataclass
class Frame:
    """One rendered view: pixels plus the privileged buffers."""

    rgb: np.ndarray
    depth: np.ndarray
    segmentation: np.ndarray
    reflection: np.ndarray | None = None
    """Body ids seen in a mirror at each pixel (-1 where no mirror shows a body); ``None`` when
    no mirror face is in view (the tabletop's mirrors fill it, see ``tabletop/sim/optics.py``)."""


@dataclass
class Lighting:
    """TinyRenderer lighting: a directional light plus ambient, diffuse and specular terms."""

    direction: tuple[float, float, float]
    color: tuple[float, float, float] = (1.0, 1.0, 1.0)
    ambient: float = 0.55
    diffuse: float = 0.5
    specular: float = 0.05
    shadow: bool = False


def render_frame(
    p: Any,
    client: int,
    pose: Pose,
    *,
    fov: float,
    width: int,
    height: int,
    renderer: str = "tiny",
    light: Lighting | None = None,
    near: float = view.NEAR,
    far: float = view.FAR,
) -> Frame:
    """Render ``pose`` (vertical ``fov`` in degrees) in PyBullet client ``client``."""
    kwargs: dict[str, Any] = {
        "viewMatrix": view.view_matrix(pose),
        "projectionMatrix": view.projection_matrix(fov, width, height, near=near, far=far),
        "renderer": p.ER_BULLET_HARDWARE_OPENGL if renderer == "egl" else p.ER_TINY_RENDERER,
        "physicsClientId": client,
    }
    if renderer == "tiny" and light is not None:
        kwargs.update(
            lightDirection=list(light.direction),
            lightColor=list(light.color),
            lightAmbientCoeff=light.ambient,
            lightDiffuseCoeff=light.diffuse,
            lightSpecularCoeff=light.specular,
            shadow=int(light.shadow),
        )
    _, _, rgb, depth, seg = p.getCameraImage(width, height, **kwargs)
    rgb_arr = np.asarray(rgb, dtype=np.uint8).reshape(height, width, 4)[:, :, :3]
    buffer = np.asarray(depth, dtype=np.float32).reshape(height, width)
    depth_arr = view.depth_to_metric(buffer, near=near, far=far)
    seg_arr = np.asarray(seg, dtype=np.int32).reshape(height, width)
    return Frame(rgb=np.ascontiguousarray(rgb_arr), depth=depth_arr.astype(np.float32), segmentation=seg_arr)
