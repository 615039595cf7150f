"""``--backend ray``: episodes run in Ray actors, results come back to the driver's store.

Each actor is an asyncio actor holding the run's agents, its own model client and its own
environments, and runs many episodes at once (their model calls overlap, as in the local
runner). The driver sends ``(agent, question, seed)`` and gets the unscored trajectory back,
images included; it then scores, saves and commits exactly as the local runner does, so the
run directory and its resume guarantees are the same whichever backend ran it. Actors may sit
on any machine of a Ray cluster; only the driver writes to the run directory.

The API key is never shipped: each actor reads the variable named by ``--api-key-env`` from its
own environment (a local Ray instance inherits the driver's).
"""

from __future__ import annotations

import asyncio
import math
import os
import traceback
from typing import Any

from eviseek._lazy import require
from eviseek.errors import EviseekError
from eviseek.eval.config import RunConfig
from eviseek.types import EpisodeResult, Question, Trajectory


class EpisodeActor:
    """The body of a Ray actor: builds agents, model and environments once, runs episodes."""

    def __init__(self, config_json: str) -> None:
        from eviseek.eval.envpool import import_plugins
        from eviseek.eval.runner import LocalExecutor, build_agents, make_env_provider, model_from_config

        self.config = RunConfig.model_validate_json(config_json)
        import_plugins(self.config.plugins)
        # The actor is already a process of its own; its environments run in its threads (or on
        # the env server of --env-url), and it runs episodes exactly as the local runner does.
        self.local = LocalExecutor(
            build_agents(self.config),
            model_from_config(self.config),
            make_env_provider(self.config.model_copy(update={"env_workers": 0})),
            self.config.timeout_s,
        )

    async def run(self, agent: str, question: Question, seed: int) -> Trajectory:
        """Run one episode (see :func:`eviseek.eval.runner.run_episode`)."""
        return await self.local.run(agent, question, seed)

    async def ping(self) -> int:
        """The actor's process id (readiness check)."""
        return os.getpid()

    async def close(self) -> None:
        """Close the actor's environments."""
        await self.local.close()


class RayExecutor:
    """Sends episodes to a set of :class:`EpisodeActor` actors on a Ray cluster.

    Connects to ``config.ray_address`` (or starts a local instance) unless Ray is already
    initialised, in which case the caller's instance is used and left running.
    """

    def __init__(
        self,
        config: RunConfig,
        *,
        num_actors: int | None = None,
        cpus_per_actor: float = 1.0,
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.config = config.model_copy(
            update={"plugins": [os.path.abspath(p) if p.endswith(".py") else p for p in config.plugins]}
        )
        self.num_actors = num_actors
        self.cpus_per_actor = cpus_per_actor
        self.init_kwargs = dict(init_kwargs or {})
        self._ray: Any = None
        self._actors: list[Any] = []
        self._load: list[int] = []
        self._owns_ray = False
        self._started: asyncio.Lock | None = None

    async def start(self) -> None:
        """Connect to Ray and start the actors (waits until they are ready)."""
        await self._start()

    async def _start(self) -> None:
        if self._started is None:
            self._started = asyncio.Lock()
        async with self._started:
            if self._actors:
                return
            ray = require("ray", "ray", "the Ray evaluation backend")
            self._ray = ray
            if not ray.is_initialized():
                kwargs = {"include_dashboard": False, "log_to_driver": False, **self.init_kwargs}
                if self.config.ray_address:
                    kwargs["address"] = self.config.ray_address
                ray.init(**kwargs)  # in the main thread: Ray installs signal handlers
                self._owns_ray = True
            n = self.num_actors
            if n is None:
                cpus = float(ray.cluster_resources().get("CPU", 1.0))
                n = max(1, int(cpus // self.cpus_per_actor))
            per_actor = max(1, math.ceil(self.config.concurrency / n))
            actor_cls = ray.remote(EpisodeActor)
            self._actors = [
                actor_cls.options(
                    num_cpus=self.cpus_per_actor, max_concurrency=per_actor, max_restarts=2
                ).remote(self.config.model_dump_json())
                for _ in range(n)
            ]
            self._load = [0] * n
            # Fail early (bad plugin, missing key) instead of on every episode.
            try:
                await asyncio.gather(*(a.ping.remote() for a in self._actors))
            except ray.exceptions.RayError as exc:
                raise EviseekError(f"the Ray episode actors failed to start: {exc}") from None

    async def run(self, agent: str, question: Question, seed: int) -> Trajectory:
        """Run one episode on the least-loaded actor."""
        await self._start()
        ray = self._ray
        i = min(range(len(self._actors)), key=self._load.__getitem__)
        self._load[i] += 1
        ref = self._actors[i].run.remote(agent, question, seed)
        try:
            # The actor enforces the episode timeout; this guard catches an actor whose event
            # loop is blocked by a simulator call that never returns.
            traj: Trajectory = await asyncio.wait_for(ref, self.config.timeout_s + 60.0)
            return traj
        except asyncio.TimeoutError:
            ray.cancel(ref, force=True)
            return _failed(
                agent, question, f"Ray actor gave no answer within {self.config.timeout_s + 60:g}s"
            )
        except ray.exceptions.RayTaskError as exc:
            # The actor lets only fatal errors out of an episode (see runner.is_fatal).
            cause = exc.as_instanceof_cause()
            if isinstance(cause, EviseekError):
                raise cause from None
            return _failed(agent, question, f"{type(cause).__name__}: {cause}")
        except ray.exceptions.RayError as exc:  # actor died, node lost, object lost
            return _failed(
                agent, question, f"{type(exc).__name__}: {str(exc).splitlines()[0]}", traceback.format_exc()
            )
        finally:
            self._load[i] -= 1

    async def close(self) -> None:
        """Stop the actors, and the Ray instance if this executor started it."""
        if self._ray is None:
            return
        ray = self._ray
        for actor in self._actors:
            ray.kill(actor)
        self._actors = []
        if self._owns_ray:
            await asyncio.to_thread(ray.shutdown)


def _failed(agent: str, question: Question, error: str, detail: str = "") -> Trajectory:
    traj = Trajectory(episode_id=os.urandom(6).hex(), question_id=question.id, agent=agent)
    traj.log("episode_failed", error, data={"traceback": detail} if detail else {})
    traj.result = EpisodeResult(question_id=question.id, agent=agent, error=error)
    return traj
