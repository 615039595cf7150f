"""The evaluation runner: many episodes at once, every finished one committed, resumable.

Episodes run as asyncio tasks so their model calls overlap (``concurrency`` at a time);
simulators live in worker processes (:mod:`eviseek.eval.envpool`), or, with the Ray backend, in
Ray actors (:mod:`eviseek.eval.ray_backend`). For each episode the runner:

1. leases an environment and runs the agent under a timeout;
2. asks the environment to grade the answer-time frames when it is a support grader;
3. scores the answer with :func:`eviseek.eval.scoring.score_trajectory`;
4. saves the trajectory under ``RUN_DIR/episodes/<agent>/<question_id>/``, *then* commits the
   row to ``results.sqlite``.

A row exists only for an episode whose trajectory is on disk, and a rerun of the same command
skips every episode with a row, so none runs twice and none is lost. An episode that raises or
times out is recorded with its reason and counted incorrect; the run goes on. Failures a person
must fix (a wrong API key, a missing extra, a bad setting) stop the run instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import os
import shutil
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from eviseek.agents.base import Agent
from eviseek.agents.registry import make_agent
from eviseek.agents.registry import register_agent as register_agent  # plugins written for the old home
from eviseek.errors import ConfigError, EviseekError, MissingExtraError, ModelConfigError
from eviseek.eval.config import RunConfig, check_resumable, load_config, save_config
from eviseek.eval.datasets import load_dataset, questions_digest, write_questions
from eviseek.eval.envpool import (
    EnvProvider,
    LeasedEnv,
    ProcessEnvProvider,
    ThreadEnvProvider,
    default_env_workers,
    import_plugins,
    question_env_id,
)
from eviseek.eval.progress import RunProgress
from eviseek.eval.recover import saved_results_for
from eviseek.eval.scoring import RunSummary, score_trajectory, summarize
from eviseek.eval.store import EPISODES_DIR, ResultsStore, episode_dir
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


LOCK_FILE = ".lock"


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
        from eviseek.envs.remote import RemoteEnv, token_from_env

        url, token, timeout = config.env_url, token_from_env(config.env_token_env), config.timeout_s
        return ThreadEnvProvider(lambda env_id: RemoteEnv(url, token=token, env_id=env_id, timeout_s=timeout))
    if config.env_workers == 0:
        return ThreadEnvProvider()
    # No more simulator processes than CPUs, nor than episodes that can run at once.
    n = config.env_workers or min(default_env_workers(), config.concurrency)
    return ProcessEnvProvider(n, plugins=config.plugins, call_timeout_s=config.timeout_s)


# --------------------------------------------------------------------------------------------
# A whole run


@dataclass
class EvalOutcome:
    """What a call to :func:`evaluate` did."""

    run_dir: Path
    total: int
    """Episodes in the run (questions x agents)."""
    skipped: int
    """Episodes already finished by an earlier session."""
    ran: int
    failed: int
    """Episodes of this session that ended in an error."""
    elapsed_s: float
    summary: RunSummary
    recovered: int = 0
    """Finished episodes that had no row in ``results.sqlite`` and were committed from their
    saved trajectories instead of being run again."""


@contextlib.contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on the run directory (released by the OS even after ``kill -9``)."""
    import fcntl

    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / LOCK_FILE, "a+") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"another eviseek eval is writing to {run_dir}; wait for it to finish or use another --out"
            ) from None
        yield


def select_questions(config: RunConfig, questions: Sequence[Question] | None) -> list[Question]:
    """The run's questions: the dataset (or those given), cut to ``limit``, checked."""
    qs = list(questions) if questions is not None else load_dataset(config.dataset)
    if config.limit is not None:
        qs = qs[: config.limit]
    from eviseek.envs.registry import registered

    known = set(registered())
    for q in qs:
        env_id = question_env_id(q)
        if config.backend == "local" and not config.env_url and env_id not in known:
            raise ConfigError(
                f"question {q.id!r} needs environment {env_id!r}, which is not registered here; "
                f"registered: {', '.join(sorted(known)) or 'none'} (a --plugin may register it)"
            )
    return qs


def prepare_run_dir(run_dir: Path, config: RunConfig, questions: list[Question]) -> RunConfig:
    """Create the run directory, or check that ``config`` may resume the run it holds."""
    from eviseek import __version__

    config = config.model_copy(
        update={"questions_sha256": questions_digest(questions), "eviseek_version": __version__}
    )
    if (run_dir / "run.json").exists():
        saved = load_config(run_dir)
        check_resumable(saved, config, run_dir)
        config = config.model_copy(update={"created_at": saved.created_at})
    else:
        write_questions(run_dir, questions)
    save_config(config, run_dir)  # last: run.json marks a fully prepared run directory
    return config


class _Breaker:
    """Stops a run whose episodes all fail (a server that went down), instead of recording
    thousands of failures; those recorded can be retried with ``retry_failed``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.streak = 0

    def record(self, result: EpisodeResult) -> None:
        self.streak = self.streak + 1 if result.error is not None else 0
        if self.streak >= self.limit:
            raise EviseekError(
                f"{self.streak} episodes in a row failed (last: {result.error}); stopping. Fix the "
                "cause and rerun the same command with --retry-failed to run them again"
            )


async def evaluate(
    config: RunConfig,
    run_dir: str | Path,
    *,
    questions: Sequence[Question] | None = None,
    agents: dict[str, Agent] | None = None,
    model: Model | None = None,
    envs: EnvProvider | None = None,
    executor: EpisodeExecutor | None = None,
    progress: bool | None = None,
    retry_failed: bool = False,
    max_failure_streak: int | None = None,
    check_model: bool = False,
) -> EvalOutcome:
    """Run (or resume) an evaluation into ``run_dir`` and return what happened.

    ``agents``, ``model``, ``envs`` and ``executor`` default to what ``config`` describes;
    tests and programs may pass their own. ``retry_failed`` runs again the episodes whose
    stored row records a failure, replacing those rows. ``check_model`` sends one short request
    to a remote model before the first episode (see :func:`preflight_model`).
    """
    started = time.perf_counter()
    run_dir = Path(run_dir)
    import_plugins(config.plugins)
    qs = select_questions(config, questions)
    with run_lock(run_dir):
        config = prepare_run_dir(run_dir, config, qs)
        with ResultsStore(run_dir) as store:
            done = store.done_keys()
            # Episodes whose trajectory was saved but whose row is missing (a deleted or emptied
            # store, or a kill between the save and the commit) finished: commit them, never
            # re-run them (a paid API would bill them twice).
            recovered = saved_results_for(
                run_dir, [(name, q.id) for q in qs for name in config.agents if (name, q.id) not in done]
            )
            if recovered:
                store.add_many(recovered)
                done = store.done_keys()
            redo = store.failed_keys() if retry_failed else set()
            todo = [
                (name, q)
                for q in qs  # question-major: a partial run holds paired results across agents
                for name in config.agents
                if (name, q.id) not in done or (name, q.id) in redo
            ]
            total = len(qs) * len(config.agents)
            if executor is None:
                env_ids = {question_env_id(q) for _, q in todo}
                executor = _default_executor(config, agents, model, envs, env_ids)
            if check_model and todo:
                local = executor.model if isinstance(executor, LocalExecutor) else model
                await preflight_model(config, local)
            prior = [r for r in store.results() if (r.agent, r.question_id) not in redo]
            limit = max_failure_streak or max(20, 2 * config.concurrency)
            ran, failed = await _run_all(
                config,
                run_dir,
                store,
                executor,
                todo,
                total,
                prior,
                progress,
                bool(redo),
                _Breaker(limit),
            )
            summary = summarize(store.results(), config.agents)
    return EvalOutcome(
        run_dir=run_dir,
        total=total,
        skipped=total - len(todo),
        ran=ran,
        failed=failed,
        elapsed_s=time.perf_counter() - started,
        summary=summary,
        recovered=len(recovered),
    )


REMOTE_PROVIDERS = ("openai",)
"""Providers behind a server that can be down, refuse the key, or not know the model name."""


async def preflight_model(config: RunConfig, model: Model | None = None) -> None:
    """Send one short text request to a remote model, as ``eviseek models check`` does.

    A server that is down, a wrong key or an unknown model name then stops the run at once with
    one line, instead of every episode being recorded as failed. Local providers (scripted,
    reference, hf) are not checked: they have no server, and a scripted model's replies are
    counted.
    """
    if config.model.split("/", 1)[0] not in REMOTE_PROVIDERS:
        return
    from eviseek.errors import ModelError
    from eviseek.types import ChatMessage, GenerateConfig

    own = model is None
    m = model_from_config(config) if model is None else model
    # Retries of this one request are not worth a warning each: it either ends in the one-line
    # error below or succeeds. Warnings during the run itself are untouched.
    quiet = logging.getLogger("eviseek.models")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        await m.generate(
            [ChatMessage.user("Reply with the word OK.")],
            GenerateConfig(max_tokens=16, temperature=0.0, stage="check"),
        )
    except ModelError as exc:
        raise type(exc)(f"model check before the first episode failed: {exc}") from None
    finally:
        quiet.setLevel(level)
        close = getattr(m, "aclose", None)
        if own and close is not None:
            await close()


def _default_executor(
    config: RunConfig,
    agents: dict[str, Agent] | None,
    model: Model | None,
    envs: EnvProvider | None,
    env_ids: set[str],
) -> EpisodeExecutor:
    if config.backend == "ray":
        if agents is not None or model is not None or envs is not None:
            raise ConfigError(
                "the Ray backend builds agents, model and environments on its workers; pass a RunConfig only"
            )
        from eviseek.eval.ray_backend import RayExecutor

        return RayExecutor(config, env_ids=env_ids)  # actors are placed by what these envs declare
    return LocalExecutor(
        agents if agents is not None else build_agents(config),
        model if model is not None else model_from_config(config),
        envs if envs is not None else make_env_provider(config),
        config.timeout_s,
    )


class _Committer:
    """Saves finished episodes and commits their rows without holding up the episode slots.

    Trajectories are saved in worker threads as they arrive; rows whose trajectory is on disk
    are committed in groups, one SQLite transaction (one fsync) per group. Episodes finishing
    together (they do, when the model answers at a steady pace) then cost one commit rather
    than one each, so slots go straight back to running episodes. At most ``max_pending``
    episodes wait to be saved, which bounds the memory their images take.
    """

    def __init__(
        self,
        run_dir: Path,
        store: ResultsStore,
        *,
        replace: bool,
        max_pending: int,
        on_commit: Callable[[EpisodeResult], None],
    ) -> None:
        self.run_dir = run_dir
        self.store = store
        self.replace = replace
        self.on_commit = on_commit
        # Own threads for disk work, so environment calls (run in the default executor) never
        # queue behind fsyncs. One thread commits, so groups form while it is busy.
        self._save_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="eviseek-save")
        self._commit_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eviseek-commit")
        self._slots = asyncio.Semaphore(max_pending)
        self._ready: asyncio.Queue[EpisodeResult | BaseException | None] = asyncio.Queue()
        self._saving: set[asyncio.Task[None]] = set()
        self.task = asyncio.create_task(self._commit_loop())

    async def submit(self, traj: Trajectory, question: Question) -> None:
        """Queue an episode for saving and committing; waits only when too many are queued."""
        await self._slots.acquire()
        task = asyncio.create_task(self._save(traj, question))
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)

    async def _save(self, traj: Trajectory, question: Question) -> None:
        try:
            result = score_trajectory(traj, question)
            traj.result = result
            directory = episode_dir(self.run_dir, result.agent, result.question_id)
            await asyncio.get_running_loop().run_in_executor(self._save_pool, traj.save, directory)
            self._ready.put_nowait(result)
        except BaseException as exc:  # a disk problem: the commit loop stops the run with it
            self._ready.put_nowait(exc)

    async def _commit_loop(self) -> None:
        closing = False
        while not closing:
            batch: list[EpisodeResult] = []
            item = await self._ready.get()
            while True:
                if item is None:
                    closing = True
                elif isinstance(item, BaseException):
                    raise item
                else:
                    batch.append(item)
                if self._ready.empty():
                    break
                item = self._ready.get_nowait()
            if batch:
                await asyncio.get_running_loop().run_in_executor(
                    self._commit_pool, functools.partial(self.store.add_many, batch, replace=self.replace)
                )
                for result in batch:
                    self._slots.release()
                    self.on_commit(result)

    async def close(self) -> None:
        """Wait until every submitted episode is saved and committed."""
        await asyncio.gather(*list(self._saving))
        self._ready.put_nowait(None)
        await self.task
        self.shutdown()

    def shutdown(self) -> None:
        """Stop the disk threads (after :meth:`close`, or when the run is abandoned)."""
        self._save_pool.shutdown(wait=True)
        self._commit_pool.shutdown(wait=True)


def _clear_episode_dirs(run_dir: Path, todo: list[tuple[str, Question]]) -> None:
    root = run_dir / EPISODES_DIR
    if not root.exists():
        return
    for name, question in todo:
        directory = episode_dir(run_dir, name, question.id)
        if directory.exists():
            shutil.rmtree(directory, ignore_errors=True)


async def _run_all(
    config: RunConfig,
    run_dir: Path,
    store: ResultsStore,
    executor: EpisodeExecutor,
    todo: list[tuple[str, Question]],
    total: int,
    prior: list[EpisodeResult],
    show: bool | None,
    replace: bool,
    breaker: _Breaker,
) -> tuple[int, int]:
    queue = iter(todo)
    counts = {"ran": 0, "failed": 0}

    async def worker(committer: _Committer) -> None:
        for name, question in queue:
            traj = await executor.run(name, question, episode_seed(config.seed, question.id))
            await committer.submit(traj, question)

    # Folders left by attempts killed before their commit (or by failed episodes about to be
    # retried): start those episodes from clean folders.
    await asyncio.to_thread(_clear_episode_dirs, run_dir, todo)

    try:
        if todo:
            await executor.start()
        with RunProgress(total, total - len(todo), prior, show) as bar:

            def on_commit(result: EpisodeResult) -> None:
                counts["ran"] += 1
                counts["failed"] += int(result.error is not None)
                bar.update(result)
                breaker.record(result)

            committer = _Committer(
                run_dir, store, replace=replace, max_pending=2 * config.concurrency, on_commit=on_commit
            )
            workers = {
                asyncio.create_task(worker(committer)) for _ in range(min(config.concurrency, len(todo)))
            }
            watched: set[asyncio.Task[None]] = {*workers, committer.task}
            try:
                # Until every worker is done, or any task (a worker, or the committer) fails.
                while workers & watched:
                    done, watched = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
                    for t in done:
                        if t.exception() is not None:
                            raise t.exception()  # type: ignore[misc]
                await committer.close()
            finally:
                for t in [*workers, committer.task]:
                    t.cancel()
                await asyncio.gather(*workers, committer.task, return_exceptions=True)
                await asyncio.to_thread(committer.shutdown)
    finally:
        await executor.close()
    return counts["ran"], counts["failed"]


def run_eval(config: RunConfig, run_dir: str | Path, **kwargs: Any) -> EvalOutcome:
    """Synchronous :func:`evaluate`."""
    return asyncio.run(evaluate(config, run_dir, **kwargs))
