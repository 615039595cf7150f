"""Multi-room houses for embodied question answering, generated on a CPU (``eviseek/House-v0``).

``eviseek.envs.make("eviseek/House-v0")`` builds a :class:`HouseEnv`; questions come from
:func:`load_split` (``dev``/``test``), :func:`generate_questions` or :func:`build_question`.
PyBullet is imported only when a simulator is built. See docs/house.md.
"""

from eviseek.envs.house.env import DEFAULT_MAX_STEPS, NAV_ACTIONS, HouseEnv, HouseOracle, nav_action_specs
from eviseek.envs.house.grid import AGENT_RADIUS, OccupancyGrid
from eviseek.envs.house.layout import generate_house
from eviseek.envs.house.questions import ENV_ID, KINDS, build_question
from eviseek.envs.house.seen import SeenMap
from eviseek.envs.house.spec import DoorSpec, HouseSpec, ItemSpec, RoomSpec, WallSpec
from eviseek.envs.house.splits import SPLITS, generate_questions, load_split

__all__ = [
    "AGENT_RADIUS",
    "DEFAULT_MAX_STEPS",
    "ENV_ID",
    "KINDS",
    "NAV_ACTIONS",
    "SPLITS",
    "DoorSpec",
    "HouseEnv",
    "HouseOracle",
    "HouseSpec",
    "ItemSpec",
    "OccupancyGrid",
    "RoomSpec",
    "SeenMap",
    "WallSpec",
    "build_question",
    "generate_house",
    "generate_questions",
    "load_split",
    "nav_action_specs",
]
