"""One episode of an evaluation: building the run's agents and model, running an episode under a
timeout without ever raising for its failure, and the executors that run episodes (here, with
environments from an :class:`~eviseek.eval.envpool.EnvProvider`; Ray's is in
:mod:`eviseek.eval.ray_backend`). The run around them is :mod:`eviseek.eval.runner`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import time
import traceback
from typing import Any, Protocol

from eviseek.agents.base import Agent
from eviseek.agents.registry import make_agent
from eviseek.errors import ConfigError, EviseekError, MissingExtraError, ModelConfigError, SettingError
from eviseek.eval.config import RunConfig
from eviseek.eval.envpool import EnvProvider, LeasedEnv, ThreadEnvProvider
from eviseek.eval.envprocess import ProcessEnvProvider, default_env_workers
from eviseek.models.base import Model
from eviseek.types import EpisodeResult, Question, Trajectory

FATAL_ERRORS: tuple[type[BaseException], ...] = (MissingExtraError, ConfigError)
"""Raised inside an episode, these stop the run: retrying other questions cannot help.

:class:`~eviseek.errors.ModelConfigError` (a request the server refused: bad key, URL, model name,
or a 400) is one of them until the model has answered once in the run; after that a refusal is
about that episode (say, a prompt over the context length) and is recorded like any failure."""


def is_fatal(exc: BaseException, *, model_proven: bool) -> bool:
    """Whether ``exc`` raised inside an episode must stop the run (see :data:`FATAL_ERRORS`)."""
    if isinstance(exc, ModelConfigError):
        return not model_proven
    return isinstance(exc, FATAL_ERRORS)


def build_agent(name: str, **config: Any) -> Agent:
    """An agent by name or spec from the agent registry (:func:`eviseek.agents.make_agent`)."""
    return make_agent(name, **config)


def build_agents(config: RunConfig) -> dict[str, Agent]:
    """The run's agents keyed by the names given in ``config.agents``."""
    return {name: build_agent(name, budget=config.budget, **config.agent_config) for name in config.agents}


def model_from_config(config: RunConfig) -> Model:
    """Build the run's model; the API key is read from the named environment variable."""
    from eviseek.models.registry import get_model, provider_kwargs

    kwargs = provider_kwargs(
        config.model, base_url=config.base_url, api_key_env=config.api_key_env, extra=config.model_args
    )
    return get_model(config.model, **kwargs)


def episode_seed(run_seed: int, question_id: str) -> int:
    """The environment seed of a question: the same for every agent (paired comparisons) and
    independent of scheduling order."""
    digest = hashlib.sha256(f"{run_seed}:{question_id}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


# --------------------------------------------------------------------------------------------
# One episode


def _failed_trajectory(agent: str, question: Question, model: str, error: str, detail: str) -> Trajectory:
    traj = Trajectory(episode_id=os.urandom(6).hex(), question_id=question.id, agent=agent, model=model)
    traj.log("episode_failed", error, data={"traceback": detail} if detail else {})
    traj.result = EpisodeResult(question_id=question.id, agent=agent, model=model, error=error)
    return traj


async def run_episode(
    agent_name: str,
    agent: Agent,
    question: Question,
    model: Model,
    envs: EnvProvider,
    *,
    seed: int,
    timeout_s: float,
    model_proven: bool = False,
) -> Trajectory:
    """Run one episode and return its trajectory, never raising for an episode failure.

    The returned ``trajectory.result`` carries the raw answer, the failure reason (if any), the
    visual support grade and the wall time; it is not scored yet. Fatal errors (see
    :func:`is_fatal`; ``model_proven`` says whether the model has answered in this run) propagate.
    """
    started = time.perf_counter()
    env: LeasedEnv | None = None
    healthy = False
    support: float | None = None
    try:
        env = await envs.lease(question)
        lease = env

        async def episode() -> tuple[Trajectory, float | None]:
            traj = await agent.run(lease, question, model, seed=seed)
            grade = None
            if lease.supports_visual_support and traj.result is not None and traj.result.error is None:
                grade = float(await lease.visual_support(list(traj.answer_frame_ids)))
            return traj, grade

        traj, support = await asyncio.wait_for(episode(), timeout_s)
        if traj.result is None:
            raise EviseekError(f"agent {agent_name!r} returned a trajectory without a result")
        healthy = True
    except asyncio.TimeoutError:
        traj = _failed_trajectory(agent_name, question, model.name, f"timed out after {timeout_s:g}s", "")
    except Exception as exc:
        if is_fatal(exc, model_proven=model_proven):
            raise
        traj = _failed_trajectory(
            agent_name, question, model.name, f"{type(exc).__name__}: {exc}", traceback.format_exc()
        )
    finally:
        if env is not None:
            with contextlib.suppress(Exception):
                await envs.release(env, healthy=healthy)
    assert traj.result is not None
    traj.agent = agent_name
    traj.result.agent = agent_name
    traj.result.support = support
    traj.result.wall_time_s = time.perf_counter() - started
    return traj


class EpisodeExecutor(Protocol):
    """Runs episodes somewhere (this process, Ray actors) and hands back their trajectories."""

    async def start(self) -> None:
        """Start workers before the first episode."""
        ...

    async def run(self, agent: str, question: Question, seed: int) -> Trajectory:
        """See :func:`run_episode`."""
        ...

    async def close(self) -> None:
        """Release workers."""
        ...


class LocalExecutor:
    """Episodes in this process: agents and the model here, simulators in an env provider."""

    def __init__(self, agents: dict[str, Agent], model: Model, envs: EnvProvider, timeout_s: float) -> None:
        self.agents = agents
        self.model = model
        self.envs = envs
        self.timeout_s = timeout_s
        self.model_proven = False

    async def start(self) -> None:
        """Start the environment workers."""
        await self.envs.start()

    async def run(self, agent: str, question: Question, seed: int) -> Trajectory:
        """Run one episode here."""
        traj = await run_episode(
            agent,
            self.agents[agent],
            question,
            self.model,
            self.envs,
            seed=seed,
            timeout_s=self.timeout_s,
            model_proven=self.model_proven,
        )
        if traj.calls and any(c.error is None for c in traj.calls):
            self.model_proven = True
        return traj

    async def close(self) -> None:
        """Stop the environment workers and close the model's HTTP clients (a model without
        ``aclose``, such as the reference policy, holds none)."""
        try:
            await self.envs.close()
        finally:
            aclose = getattr(self.model, "aclose", None)
            if aclose is not None:
                await aclose()


def make_env_provider(config: RunConfig) -> EnvProvider:
    """Worker processes sized to the machine, threads when ``env_workers == 0``, or sessions on
    the env server at ``env_url`` (each driven from a thread: the simulator is elsewhere)."""
    if config.env_url:
        if config.image_size is not None:
            raise SettingError(
                "--image-size cannot be used with --env-url: the env server's environments render at "
                "the size the server was started with"
            )
        from eviseek.envs.remote import RemoteEnv, token_from_env
        from eviseek.envs.remote.client import EnvServerBusy

        url, token, timeout = config.env_url, token_from_env(config.env_token_env), config.timeout_s
        images = config.env_images
        # A full server (503) is waited out by the provider, within the episode timeout, without
        # holding a worker thread; finished environments are closed so their sessions free up.
        return ThreadEnvProvider(
            lambda env_id: RemoteEnv(
                url, token=token, env_id=env_id, timeout_s=timeout, images=images, wait_s=0
            ),
            reuse=False,
            busy=(EnvServerBusy,),
            busy_wait_s=timeout,
        )
    sized = env_size_kwargs(config)
    if config.env_workers == 0:
        if not sized:
            return ThreadEnvProvider()
        from eviseek.envs.registry import make

        return ThreadEnvProvider(lambda env_id: make(env_id, **sized))
    # No more simulator processes than CPUs, nor than episodes that can run at once.
    n = config.env_workers or min(default_env_workers(), config.concurrency)
    return ProcessEnvProvider(n, plugins=config.plugins, call_timeout_s=config.timeout_s, env_kwargs=sized)


def env_size_kwargs(config: RunConfig) -> dict[str, int]:
    """``width`` and ``height`` for every environment of the run (empty: their own defaults)."""
    if config.image_size is None:
        return {}
    width, height = config.image_size
    return {"width": width, "height": height}
