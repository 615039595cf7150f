"""EXPRESS-Bench: its question files (``express:PATH``) and the thin Habitat bridge (not run here).

Nothing heavy is imported here; habitat-sim is imported when an :class:`ExpressEnv` is built.
"""

from eviseek.envs.express.dataset import ENV_ID, load_express, question_of
from eviseek.envs.express.env import ExpressEnv, pose_of
from eviseek.envs.express.habitat import HabitatBridge

__all__ = ["ENV_ID", "ExpressEnv", "HabitatBridge", "load_express", "pose_of", "question_of"]
