"""Environments: the Env protocol, the registry and the built-in environments.

Built-in ids are registered here without importing their heavy dependencies. The two bridges to
simulators that render on a GPU (OmniGibson for ESI-Bench, Habitat for EXPRESS-Bench) declare one
GPU per instance, so the Ray backend places their episode actors on GPU nodes.
"""

from eviseek import env_ids
from eviseek.envs.base import (
    AsyncEnv,
    Env,
    SupportGradingEnv,
    TaskHooks,
    ThreadedEnv,
    as_async,
    question_from_options,
    register_task_hooks,
    task_hooks,
)
from eviseek.envs.registry import env_resources, make, register, registered

__all__ = [
    "AsyncEnv",
    "Env",
    "SupportGradingEnv",
    "TaskHooks",
    "ThreadedEnv",
    "as_async",
    "env_resources",
    "make",
    "question_from_options",
    "register",
    "register_task_hooks",
    "registered",
    "task_hooks",
]

register(env_ids.IMAGE_ZOOM, "eviseek.envs.image.env:ImageZoomEnv")
register(env_ids.TABLETOP, "eviseek.envs.tabletop.env:TabletopEnv")
register(env_ids.HOUSE, "eviseek.envs.house.env:HouseEnv")
register(env_ids.ESIBENCH, "eviseek.envs.esibench.env:ESIBenchEnv", resources={"GPU": 1})
register(env_ids.EXPRESS, "eviseek.envs.express.env:ExpressEnv", resources={"GPU": 1})
# ESI-Bench's per-task prompting and stopping (the Single-model agent's ``esibench_hooks``).
register_task_hooks("esibench", "eviseek.envs.esibench.hooks:ESIBenchTaskHooks.for_question")
