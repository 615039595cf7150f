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
import contextlib
import logging
import math
import os
import traceback
from collections.abc import Iterable, Mapping
from typing import Any

from eviseek._lazy import require
from eviseek.errors import ConfigError, EviseekError
from eviseek.eval.config import RunConfig
from eviseek.types import EpisodeResult, Question, Trajectory

logger = logging.getLogger("eviseek.eval.ray")


class EpisodeActor:
    """The body of a Ray actor: builds agents, model and environments once, runs episodes."""

    def __init__(self, config_json: str) -> None:
        from eviseek.eval.envpool import import_plugins
        from eviseek.eval.episode import LocalExecutor, build_agents, make_env_provider, model_from_config

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


LOST_WORKER_RETRIES = 3
"""How many times an episode is sent again after the actor running it was lost (a node died)."""
REPLACEMENT_TIMEOUT_S = 600.0
"""How long the executor waits for a replacement actor when no actor is left."""


def actor_resources(
    declared: Mapping[str, Mapping[str, float]], flag: Mapping[str, float], *, default_cpus: float = 1.0
) -> tuple[dict[str, float], dict[str, str]]:
    """What one episode actor asks Ray for, and where each amount came from.

    ``declared`` maps the run's environment ids to what one instance of each declared (see
    :func:`eviseek.envs.registry.env_resources`). An actor hosts every kind of environment the
    run needs, so each resource is the most any of them declares; ``CPU`` is ``default_cpus``
    when none declares it. ``flag`` (``--ray-resource``) then replaces amounts of the same name:
    the operator's word wins over the registration (``GPU=0`` runs a GPU-declaring simulator
    on CPU nodes). Resources at 0 are left out. The second mapping names each amount's source:
    an env id, ``--ray-resource``, or ``default``.
    """
    need: dict[str, float] = {}
    source: dict[str, str] = {}
    for env_id in sorted(declared):
        for name, amount in declared[env_id].items():
            if amount > need.get(name, 0.0):
                need[name], source[name] = float(amount), env_id
    if "CPU" not in need:
        need["CPU"], source["CPU"] = default_cpus, "default"
    for name, amount in flag.items():
        need[name], source[name] = float(amount), "--ray-resource"
    kept = {name: amount for name, amount in need.items() if amount > 0}
    return kept, {name: source[name] for name in kept}


def actor_count(cluster: dict[str, float], per_actor: dict[str, float]) -> int:
    """How many actors needing ``per_actor`` resources the cluster's totals can hold (at least 1)."""
    fits = [int(cluster.get(name, 0.0) // amount) for name, amount in per_actor.items() if amount > 0]
    return max(1, min(fits)) if fits else 1


class RayExecutor:
    """Sends episodes to a set of :class:`EpisodeActor` actors on a Ray cluster.

    Connects to ``config.ray_address`` (or starts a local instance) unless Ray is already
    initialised, in which case the caller's instance is used and left running.

    Actors are placed by Ray's scheduler from their resource needs (:func:`actor_resources`):
    what the environments in ``env_ids`` declared at registration (the most of each resource
    over them; ``cpus_per_actor`` CPUs when none declares CPUs), with
    ``config.ray_actor_resources`` (``--ray-resource``) replacing amounts of the same name.
    With ``config.env_url`` the simulators live on the env server, so the actors ask only for
    CPUs and the flag's resources. When an actor is lost (its process or its node died), the
    episodes it was running are sent to the other actors (up to :data:`LOST_WORKER_RETRIES`
    times each) and a replacement actor is requested, which Ray starts wherever resources are
    free. Only the driver commits results, so a retried episode is stored once.
    """

    def __init__(
        self,
        config: RunConfig,
        *,
        num_actors: int | None = None,
        cpus_per_actor: float = 1.0,
        init_kwargs: dict[str, Any] | None = None,
        env_ids: Iterable[str] = (),
    ) -> None:
        self.config = config.model_copy(
            update={"plugins": [os.path.abspath(p) if p.endswith(".py") else p for p in config.plugins]}
        )
        self.num_actors = num_actors
        self.cpus_per_actor = cpus_per_actor
        self.env_ids = sorted(set(env_ids))
        self.init_kwargs = dict(init_kwargs or {})
        self._ray: Any = None
        self._actor_cls: Any = None
        self._options: dict[str, Any] = {}
        self._actors: list[Any] = []
        self._load: dict[Any, int] = {}
        self._replacements: set[asyncio.Task[None]] = set()
        self._pool_changed: asyncio.Event | None = None
        self._owns_ray = False
        self._started: asyncio.Lock | None = None
        self.lost_actors = 0
        """Actors lost during the run (for reports and tests)."""
        self.retried_episodes = 0

    async def start(self) -> None:
        """Connect to Ray and start the actors (waits until they are ready)."""
        await self._start()

    async def _start(self) -> None:
        if self._started is None:
            self._started = asyncio.Lock()
            self._pool_changed = asyncio.Event()
        async with self._started:
            if self._actor_cls is not None:
                return  # started (the pool may be empty for a while after losing actors)
            ray = require("ray", "ray", "the Ray evaluation backend")
            self._ray = ray
            if not ray.is_initialized():
                kwargs = {"include_dashboard": False, "log_to_driver": False, **self.init_kwargs}
                if self.config.ray_address:
                    kwargs["address"] = self.config.ray_address
                ray.init(**kwargs)  # in the main thread: Ray installs signal handlers
                self._owns_ray = True
            per_actor, source = actor_resources(
                self._declared(), self.config.ray_actor_resources, default_cpus=self.cpus_per_actor
            )
            cluster = ray.cluster_resources()
            short = [
                f"{k}={v:g} ({_source_words(source[k])})"
                for k, v in per_actor.items()
                if cluster.get(k, 0.0) < v
            ]
            if short:
                raise ConfigError(
                    f"no node of the Ray cluster offers what an episode actor needs ({', '.join(short)}); "
                    "start nodes with those resources (ray start --num-gpus / --resources), or set "
                    "another amount with --ray-resource KEY=AMOUNT (it overrides an environment's "
                    "declaration; GPU=0 drops a declared GPU)"
                )
            logger.info("each Ray episode actor asks for %s", per_actor)
            n = self.num_actors
            if n is None:
                n = actor_count(cluster, per_actor)
            custom = {k: v for k, v in per_actor.items() if k not in ("CPU", "GPU")}
            self._options = {
                "num_cpus": per_actor.get("CPU", 0),
                "num_gpus": per_actor.get("GPU", 0),
                "max_concurrency": max(1, math.ceil(self.config.concurrency / n)),
                "max_restarts": 0,  # a lost actor is replaced by the executor, wherever Ray finds room
            }
            if custom:
                self._options["resources"] = custom
            actor_cls = ray.remote(EpisodeActor)
            self._actor_cls = actor_cls
            actors = [self._new_actor() for _ in range(n)]
            # Fail early (bad plugin, missing key) instead of on every episode.
            try:
                await asyncio.wait_for(
                    asyncio.gather(*(a.ping.remote() for a in actors)), REPLACEMENT_TIMEOUT_S
                )
            except asyncio.TimeoutError:
                self._actor_cls = None
                raise EviseekError(
                    f"the Ray episode actors did not start within {REPLACEMENT_TIMEOUT_S:g}s "
                    "(is the cluster busy with other jobs?)"
                ) from None
            except ray.exceptions.RayError as exc:
                self._actor_cls = None
                raise EviseekError(f"the Ray episode actors failed to start: {exc}") from None
            self._actors = actors
            self._load = {a: 0 for a in actors}

    def _declared(self) -> dict[str, dict[str, float]]:
        """What each of the run's environments declared, when this run hosts them."""
        if self.config.env_url:
            return {}  # the simulators run on the env server; the actors only drive them
        from eviseek.envs.registry import env_resources, registered

        known = set(registered())
        # An id not registered here cannot be built by the actors either (they import the same
        # plugins): its episodes fail with the registry's error, so it adds no declaration.
        return {env_id: env_resources(env_id) for env_id in self.env_ids if env_id in known}

    def _new_actor(self) -> Any:
        return self._actor_cls.options(**self._options).remote(self.config.model_dump_json())

    def _lose(self, actor: Any, why: str) -> None:
        """Drop a lost actor from the pool and ask Ray for a replacement (once per actor)."""
        if actor not in self._load:
            return  # another episode on the same actor already reported it
        self._actors.remove(actor)
        del self._load[actor]
        self.lost_actors += 1
        logger.warning("Ray episode actor lost (%s); its episodes go to the other actors", why)
        with contextlib.suppress(Exception):
            self._ray.kill(actor, no_restart=True)
        task = asyncio.ensure_future(self._replace())
        self._replacements.add(task)
        task.add_done_callback(self._replacements.discard)

    async def _replace(self) -> None:
        actor = self._new_actor()
        try:
            # Pending until some node has the resources (a new node, or the lost one back).
            await asyncio.wait_for(actor.ping.remote(), REPLACEMENT_TIMEOUT_S)
        except (asyncio.TimeoutError, self._ray.exceptions.RayError) as exc:
            logger.warning("a replacement Ray actor did not start: %s", exc)
            with contextlib.suppress(Exception):
                self._ray.kill(actor, no_restart=True)
            return
        self._actors.append(actor)
        self._load[actor] = 0
        assert self._pool_changed is not None
        self._pool_changed.set()

    async def _pick(self) -> Any:
        """The least-loaded live actor, waiting for a replacement when none is left."""
        assert self._pool_changed is not None
        deadline = asyncio.get_running_loop().time() + REPLACEMENT_TIMEOUT_S
        while not self._actors:
            self._pool_changed.clear()
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0 or not self._replacements:
                raise EviseekError(
                    "every Ray episode actor was lost and none could be started again: the cluster "
                    "has no node with the resources an actor needs; add a node and rerun the same "
                    "command to resume"
                )
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._pool_changed.wait(), min(left, 5.0))
        return min(self._actors, key=self._load.__getitem__)

    async def run(self, agent: str, question: Question, seed: int) -> Trajectory:
        """Run one episode on the least-loaded actor; again elsewhere if that actor is lost."""
        await self._start()
        ray = self._ray
        lost: list[str] = []
        while True:
            actor = await self._pick()
            self._load[actor] += 1
            ref = actor.run.remote(agent, question, seed)
            try:
                # The actor enforces the episode timeout; this guard catches an actor whose event
                # loop is blocked by a simulator call that never returns.
                traj: Trajectory = await asyncio.wait_for(ref, self.config.timeout_s + 60.0)
                for why in lost:
                    traj.log("episode_retried", f"ran again after its Ray actor was lost: {why}")
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
                why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                self._lose(actor, why)
                lost.append(why)
                if len(lost) > LOST_WORKER_RETRIES:
                    return _failed(
                        agent,
                        question,
                        f"lost {len(lost)} Ray actors running this episode (last: {why})",
                        traceback.format_exc(),
                    )
                self.retried_episodes += 1
            finally:
                if actor in self._load:
                    self._load[actor] -= 1

    async def close(self) -> None:
        """Stop the actors, and the Ray instance if this executor started it."""
        if self._ray is None:
            return
        ray = self._ray
        for task in list(self._replacements):
            task.cancel()
        await asyncio.gather(*self._replacements, return_exceptions=True)
        for actor in self._actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        self._actors = []
        if self.lost_actors:
            logger.warning(
                "%d Ray actor(s) were lost during the run; %d episode(s) ran again elsewhere",
                self.lost_actors,
                self.retried_episodes,
            )
        if self._owns_ray:
            await asyncio.to_thread(ray.shutdown)


def _source_words(source: str) -> str:
    """Where an amount came from, for an error message."""
    words = {"--ray-resource": "from --ray-resource", "default": "the default"}
    return words.get(source, f"declared by {source}")


def _failed(agent: str, question: Question, error: str, detail: str = "") -> Trajectory:
    traj = Trajectory(episode_id=os.urandom(6).hex(), question_id=question.id, agent=agent)
    traj.log("episode_failed", error, data={"traceback": detail} if detail else {})
    traj.result = EpisodeResult(question_id=question.id, agent=agent, error=error)
    return traj
