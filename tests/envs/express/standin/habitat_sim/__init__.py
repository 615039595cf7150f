"""A stand-in for habitat-sim: the names and signatures eviseek's bridge calls, over a toy world.

The world is a 10 m x 10 m room (|x| <= 5, |z| <= 5 in Habitat's frame, y up) with a pillar at
x in [1, 2], z in [-3, -2]. Moves that would leave the free space do not happen and set
``previous_step_collided``. Geodesic distance is straight-line (the free space is nearly convex,
and tests keep paths clear of the pillar). Frames are coloured by position so they differ.
Every call is recorded in ``CALLS``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import agent

CALLS: list[tuple[str, Any]] = []
HALF = 5.0
PILLAR = (1.0, 2.0, -3.0, -2.0)


class SensorType:
    COLOR = "COLOR"
    DEPTH = "DEPTH"


class SimulatorConfiguration:
    def __init__(self) -> None:
        self.scene_id = ""
        self.scene_dataset_config_file = "default"


class CameraSensorSpec:
    def __init__(self) -> None:
        self.uuid = ""
        self.sensor_type = SensorType.COLOR
        self.resolution = [128, 128]
        self.position = [0.0, 0.0, 0.0]
        self.hfov = 90.0


class Configuration:
    def __init__(self, sim_cfg: SimulatorConfiguration, agents: list[agent.AgentConfiguration]) -> None:
        self.sim_cfg = sim_cfg
        self.agents = agents


@dataclass
class Quaternion:
    w: float = 1.0
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0


@dataclass
class AgentState:
    position: Any = field(default_factory=lambda: np.zeros(3, dtype=np.float32))
    rotation: Any = field(default_factory=Quaternion)


class ShortestPath:
    def __init__(self) -> None:
        self.requested_start = np.zeros(3)
        self.requested_end = np.zeros(3)
        self.geodesic_distance = float("inf")
        self.points: list[Any] = []


def free(x: float, z: float) -> bool:
    """Whether the agent may stand at (x, z)."""
    x0, x1, z0, z1 = PILLAR
    return abs(x) <= HALF and abs(z) <= HALF and not (x0 <= x <= x1 and z0 <= z <= z1)


class PathFinder:
    def __init__(self) -> None:
        self.navmesh: str | None = None

    def load_nav_mesh(self, path: str) -> bool:
        CALLS.append(("load_nav_mesh", path))
        self.navmesh = path
        return True

    def find_path(self, path: ShortestPath) -> bool:
        a, b = np.asarray(path.requested_start, float), np.asarray(path.requested_end, float)
        if not (free(a[0], a[2]) and free(b[0], b[2])):
            path.geodesic_distance = float("inf")
            return False
        path.geodesic_distance = float(math.hypot(b[0] - a[0], b[2] - a[2]))
        return True


class Agent:
    def __init__(self, sim: Simulator, cfg: agent.AgentConfiguration) -> None:
        self.sim = sim
        self.cfg = cfg
        self.state = AgentState()

    def set_state(self, state: AgentState) -> None:
        rot = state.rotation
        if isinstance(rot, (list, tuple, np.ndarray)):  # coefficients (x, y, z, w), as habitat-sim takes them
            x, y, z, w = (float(v) for v in rot)
            rot = Quaternion(w=w, x=x, y=y, z=z)
        CALLS.append(("set_state", (list(map(float, state.position)), (rot.w, rot.x, rot.y, rot.z))))
        self.state = AgentState(position=np.asarray(state.position, dtype=np.float32).copy(), rotation=rot)

    def get_state(self) -> AgentState:
        return AgentState(position=self.state.position.copy(), rotation=self.state.rotation)

    def heading(self) -> float:
        q = self.state.rotation
        return 2.0 * math.atan2(q.y, q.w)

    def turn(self, degrees: float) -> None:
        theta = self.heading() + math.radians(degrees)
        self.state.rotation = Quaternion(w=math.cos(theta / 2), y=math.sin(theta / 2))


class Simulator:
    def __init__(self, cfg: Configuration) -> None:
        scene = Path(cfg.sim_cfg.scene_id)
        if not scene.exists():
            raise RuntimeError(f"stand-in habitat_sim: no scene file {scene}")
        CALLS.append(("Simulator", str(scene)))
        self.cfg = cfg
        self.pathfinder = PathFinder()
        self.previous_step_collided = False
        self.agents: list[Agent] = []
        self.closed = False

    def initialize_agent(self, agent_id: int) -> Agent:
        a = Agent(self, self.cfg.agents[agent_id])
        self.agents.append(a)
        return a

    def step(self, action: str) -> dict[str, Any]:
        a = self.agents[0]
        spec = a.cfg.action_space[action]
        CALLS.append(("step", action))
        self.previous_step_collided = False
        if action == "move_forward":
            theta = a.heading()
            pos = a.state.position.astype(float)
            new = pos + spec.actuation.amount * np.array([-math.sin(theta), 0.0, -math.cos(theta)])
            if free(new[0], new[2]):
                a.state.position = new.astype(np.float32)
            else:
                self.previous_step_collided = True
        elif action in ("turn_left", "turn_right"):
            a.turn(spec.actuation.amount if action == "turn_left" else -spec.actuation.amount)
        return self.get_sensor_observations()

    def get_sensor_observations(self) -> dict[str, Any]:
        a = self.agents[0]
        x, _, z = (float(v) for v in a.state.position)
        colour = [int(128 + 12 * x) % 256, int(128 + 12 * z) % 256, int(math.degrees(a.heading())) % 256, 255]
        out: dict[str, Any] = {}
        for spec in a.cfg.sensor_specifications:
            h, w = spec.resolution
            if spec.sensor_type == SensorType.DEPTH:
                # A flat wall facing the camera at the free distance straight ahead.
                out[spec.uuid] = np.full((h, w), self.free_ahead(a), dtype=np.float32)
            else:
                out[spec.uuid] = np.full((h, w, 4), colour, dtype=np.uint8)
        return out

    def free_ahead(self, a: Agent) -> float:
        """Metres the agent could walk straight ahead (5 cm steps)."""
        theta = a.heading()
        x, _, z = (float(v) for v in a.state.position)
        d = 0.0
        while d < 20.0 and free(x - (d + 0.05) * math.sin(theta), z - (d + 0.05) * math.cos(theta)):
            d += 0.05
        return d

    def close(self) -> None:
        CALLS.append(("close", None))
        self.closed = True
