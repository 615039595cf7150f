"""The bridge to ESI-Bench's own simulator and task hooks (github.com/ESI-Bench/ESI-Bench, MIT).

Imports nothing heavy at module level: ESI-Bench's pipeline (and so OmniGibson) is imported from
``$ESI_BENCH_ROOT`` when an environment or hook object is built.
"""

from eviseek.envs.esibench.env import ENV_ID, ESIBenchEnv, action_command, feedback_of, pose_of
from eviseek.envs.esibench.hooks import ESIBenchTaskHooks
from eviseek.envs.esibench.simulator import ESIBenchSimulator

__all__ = [
    "ENV_ID",
    "ESIBenchEnv",
    "ESIBenchSimulator",
    "ESIBenchTaskHooks",
    "action_command",
    "feedback_of",
    "pose_of",
]
