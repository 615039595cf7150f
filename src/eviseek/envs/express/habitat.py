"""The one class that calls habitat-sim, for EXPRESS-Bench's HM3D scenes.

NOT RUN HERE: habitat-sim has no installable build for our machines and HM3D is gated. The
bridge mirrors what EXPRESS-Bench's ``main.py`` sets up (an RGB camera of 90-degree horizontal
field of view at 1.5 m, the scene's ``.basis.glb`` with its navmesh, the HM3D scene dataset
config) with the EviSeek paper's navigation actions (Table 7: move 0.25 m, turn 30 degrees;
EXPRESS-Bench's own ``main.py`` teleports between waypoints and sets neither),
Habitat's tilt actions when asked for (ours), and a depth camera beside the colour one when the
agent declares an RGB-D sensor. Tests drive it through a stand-in module with habitat-sim's
names and signatures.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from eviseek.errors import EnvArgumentError, EnvError

_SCENE_ID = re.compile(r"[A-Za-z0-9_]+-[A-Za-z0-9_]+")
"""An HM3D scene folder name: digits, a dash, the scene's name; no path separator, no dots."""

ACTIONS = {
    "move_forward": ("move_forward", 0.25),
    "turn_left": ("turn_left", 30.0),
    "turn_right": ("turn_right", 30.0),
    "look_up": ("look_up", 30.0),
    "look_down": ("look_down", 30.0),
}
"""eviseek action -> (habitat-sim action name, amount in metres or degrees)."""
LOOK_ACTIONS = ("look_up", "look_down")
"""Offered only with ``look=True`` (ours: the paper's navigation interface, Table 7, has no tilt)."""
SENSOR = "color_sensor"
DEPTH_SENSOR = "depth_sensor"


def import_habitat() -> ModuleType:
    """``habitat_sim``, or an error that says it runs only where Habitat is installed."""
    try:
        return importlib.import_module("habitat_sim")
    except ImportError as exc:
        raise EnvError(
            "eviseek/Express-v0 needs habitat-sim and the HM3D scenes (not installable here): run it on a "
            "Habitat machine with `eviseek env serve --env eviseek/Express-v0 --env-arg scene_root=DIR` and "
            "point `eviseek eval --env-url` at it"
        ) from exc


class HabitatBridge:
    """One habitat-sim simulator, rebuilt when the scene changes."""

    def __init__(
        self,
        scene_root: str | Path,
        *,
        width: int = 512,
        height: int = 512,
        hfov: float = 90.0,
        camera_height: float = 1.5,
        habitat: ModuleType | None = None,
    ) -> None:
        self.scene_root = Path(scene_root)
        self.width, self.height, self.hfov, self.camera_height = width, height, hfov, camera_height
        self.hs = habitat if habitat is not None else import_habitat()
        self.sim: Any = None
        self.agent: Any = None
        self.scene_id: str | None = None
        self.depth = False
        """Whether the simulator carries a depth camera (rebuilt when this changes)."""

    def scene_files(self, scene_id: str) -> tuple[Path, Path]:
        """The ``.basis.glb`` and ``.basis.navmesh`` of an HM3D folder (EXPRESS-Bench's layout).

        ``scene_id`` is an HM3D folder name such as ``00800-TEEsavR23oF``, nothing else: over an
        env server a client writes it, and ``../`` in it loaded scenes from anywhere on the server.
        """
        if not isinstance(scene_id, str) or not _SCENE_ID.fullmatch(scene_id):
            raise EnvArgumentError(
                f"scene {str(scene_id)[:80]!r} is not an HM3D scene id (NNNNN-name, e.g. 00800-TEEsavR23oF)"
            )
        name = scene_id.split("-", 1)[1]
        folder = self.scene_root / scene_id
        if not folder.is_dir():
            # HM3D keeps scenes under train/ or val/; EXPRESS-Bench's runner looks at the root.
            hits = [p for p in (self.scene_root / "hm3d").glob(f"*/{scene_id}") if p.is_dir()]
            folder = hits[0] if hits else folder
        glb = folder / f"{name}.basis.glb"
        if not glb.exists():
            raise EnvError(f"scene {scene_id}: {glb} not found under scene_root {self.scene_root}")
        return glb, glb.with_suffix("").with_suffix(".basis.navmesh")

    def load(self, scene_id: str, *, depth: bool = False) -> None:
        """Build the simulator for ``scene_id`` (kept when the scene and the sensors are unchanged).

        ``depth``: add a depth camera of the same pose, size and field of view as the colour one.
        """
        if self.sim is not None and scene_id == self.scene_id and depth == self.depth:
            return
        self.close()
        hs = self.hs
        glb, navmesh = self.scene_files(scene_id)
        sim_cfg = hs.SimulatorConfiguration()
        sim_cfg.scene_id = str(glb)
        dataset = self.scene_root / "hm3d" / "hm3d_annotated_basis.scene_dataset_config.json"
        if dataset.exists():
            sim_cfg.scene_dataset_config_file = str(dataset)
        camera = hs.CameraSensorSpec()
        camera.uuid = SENSOR
        camera.sensor_type = hs.SensorType.COLOR
        camera.resolution = [self.height, self.width]
        camera.position = [0.0, self.camera_height, 0.0]
        camera.hfov = self.hfov
        sensors = [camera]
        if depth:
            ranger = hs.CameraSensorSpec()
            ranger.uuid = DEPTH_SENSOR
            ranger.sensor_type = hs.SensorType.DEPTH
            ranger.resolution = [self.height, self.width]
            ranger.position = [0.0, self.camera_height, 0.0]
            ranger.hfov = self.hfov
            sensors.append(ranger)
        agent_cfg = hs.agent.AgentConfiguration()
        agent_cfg.sensor_specifications = sensors
        agent_cfg.action_space = {
            name: hs.agent.ActionSpec(name, hs.agent.ActuationSpec(amount=amount))
            for name, amount in ACTIONS.values()
        }
        self.sim = hs.Simulator(hs.Configuration(sim_cfg, [agent_cfg]))
        if navmesh.exists():
            self.sim.pathfinder.load_nav_mesh(str(navmesh))
        self.agent = self.sim.initialize_agent(0)
        self.scene_id = scene_id
        self.depth = depth

    def place(self, position: list[float], rotation_wxyz: list[float]) -> None:
        """Put the agent at ``position`` facing ``rotation`` (w, x, y, z, as EXPRESS-Bench reads it)."""
        state = self.hs.AgentState()
        state.position = np.asarray(position, dtype=np.float32)
        w, x, y, z = rotation_wxyz
        state.rotation = [x, y, z, w]  # habitat-sim turns coefficient lists (x, y, z, w) into a quaternion
        self.agent.set_state(state)

    def act(self, name: str) -> bool:
        """Take one action; ``True`` when it collided (the agent was stopped by the scene)."""
        self.sim.step(ACTIONS[name][0])
        return bool(self.sim.previous_step_collided)

    def rgb(self) -> np.ndarray:
        """The camera's current RGB frame (``uint8``, HxWx3)."""
        obs = self.sim.get_sensor_observations()[SENSOR]
        return np.ascontiguousarray(np.asarray(obs)[:, :, :3], dtype=np.uint8)

    def depth_frame(self) -> np.ndarray | None:
        """The depth camera's frame (metres along the view axis, HxW ``float32``), if it has one."""
        if not self.depth:
            return None
        obs = self.sim.get_sensor_observations()[DEPTH_SENSOR]
        return np.asarray(obs, dtype=np.float32).reshape(self.height, self.width)

    def state(self) -> tuple[np.ndarray, tuple[float, float, float, float]]:
        """The agent's position (Habitat frame) and rotation (w, x, y, z)."""
        st = self.agent.get_state()
        q = st.rotation
        return np.asarray(st.position, dtype=float), (float(q.w), float(q.x), float(q.y), float(q.z))

    def geodesic(self, a: np.ndarray | list[float], b: np.ndarray | list[float]) -> float:
        """Shortest walking distance on the navmesh (``inf`` when unreachable)."""
        path = self.hs.ShortestPath()
        path.requested_start = np.asarray(a, dtype=np.float32)
        path.requested_end = np.asarray(b, dtype=np.float32)
        if not self.sim.pathfinder.find_path(path):
            return float("inf")
        return float(path.geodesic_distance)

    def close(self) -> None:
        """Release the simulator."""
        if self.sim is not None:
            self.sim.close()
        self.sim = self.agent = None
        self.scene_id = None
