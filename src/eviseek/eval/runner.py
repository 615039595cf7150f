"""The evaluation runner: many episodes at once, every finished one committed, resumable.

Episodes run as asyncio tasks so their model calls overlap (``concurrency`` at a time);
simulators live in worker processes (:mod:`eviseek.eval.envpool`), or, with the Ray backend, in
Ray actors (:mod:`eviseek.eval.ray_backend`). For each episode the runner:

1. leases an environment and runs the agent under a timeout;
2. asks the environment to grade the answer-time frames when it is a support grader;
3. scores the answer with :func:`eviseek.eval.scoring.score_trajectory`;
4. saves the trajectory under ``RUN_DIR/episodes/<agent>/<question_id>/``, *then* commits the
   row to ``results.sqlite``.

One episode (steps 1-2, the agents, model and executors) is :mod:`eviseek.eval.episode`; saving
and committing (steps 3-4) is :mod:`eviseek.eval.committer`; this module runs the whole: the
run directory and its lock, resume and recovery, the failure circuit breaker, the model check.

A row exists only for an episode whose trajectory is on disk, and a rerun of the same command
skips every episode with a row, so none runs twice and none is lost. An episode that raises or
times out is recorded with its reason and counted incorrect; the run goes on. Failures a person
must fix (a wrong API key, a missing extra, a bad setting) stop the run instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eviseek.agents.base import Agent
from eviseek.agents.registry import register_agent as register_agent  # plugins written for the old home
from eviseek.errors import ConfigError, EviseekError, SettingError
from eviseek.eval.committer import Committer, clear_episode_dirs
from eviseek.eval.config import RunConfig, check_resumable, load_config, save_config
from eviseek.eval.datasets import load_dataset, questions_digest, write_questions
from eviseek.eval.envpool import EnvProvider, import_plugins, question_env_id
from eviseek.eval.episode import (
    FATAL_ERRORS,
    EpisodeExecutor,
    LocalExecutor,
    build_agent,
    build_agents,
    episode_seed,
    is_fatal,
    make_env_provider,
    model_from_config,
    run_episode,
)
from eviseek.eval.progress import RunProgress
from eviseek.eval.recover import saved_results_for
from eviseek.eval.scoring import RunSummary, summarize
from eviseek.eval.store import ResultsStore
from eviseek.models.base import Model
from eviseek.types import EpisodeResult, Question
from eviseek.types.rundir import LOCK_FILE, RunDir

__all__ = [
    "FATAL_ERRORS",
    "LOCK_FILE",
    "EpisodeExecutor",
    "EvalOutcome",
    "LocalExecutor",
    "build_agent",
    "build_agents",
    "check_settings",
    "episode_seed",
    "evaluate",
    "is_fatal",
    "make_env_provider",
    "model_from_config",
    "preflight_model",
    "prepare_run_dir",
    "register_agent",
    "run_episode",
    "run_eval",
    "run_lock",
    "select_questions",
]
"""The runner's public names; those of one episode live in :mod:`eviseek.eval.episode` and are
re-exported here, where plugins and programs written for the single module import them."""

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
    with RunDir(run_dir).lock():
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
    from eviseek.agents.registry import check_agent_envs

    check_agent_envs(config.agents, {question_env_id(q) for q in qs})
    if config.image_size is not None:
        from eviseek.envs.registry import resizable

        fixed = sorted({e for e in map(question_env_id, qs) if e in known and not resizable(e)})
        if fixed:
            w, h = config.image_size
            raise SettingError(
                f"--image-size {w}x{h}: {', '.join(fixed)} renders at its own size only; leave "
                "--image-size out for these questions"
            )
    return qs


def check_settings(config: RunConfig, *, model: bool = True, agents: bool = True) -> None:
    """Check the provider settings (``model``) and the agent specs and settings (``agents``) of
    ``config`` without building a model or touching the run directory, so that a bad value stops
    the run before its folder exists (and the corrected command then starts it afresh).

    A bad value raises :class:`~eviseek.errors.SettingError` (the command line exits 2); a key
    variable that is not set stays a :class:`ConfigError` (a missing resource)."""
    from eviseek.errors import SettingError
    from eviseek.models.registry import provider_kwargs, provider_of, resolve_model_id

    if model:
        try:
            provider = provider_of(config.model)
        except ConfigError as exc:
            raise SettingError(str(exc)) from None
        kwargs = provider_kwargs(
            config.model, base_url=config.base_url, api_key_env=config.api_key_env, extra=config.model_args
        )
        try:
            provider.parse_settings(resolve_model_id(config.model).split("/", 1)[1], kwargs)
        except ConfigError as exc:
            raise SettingError(str(exc)) from None
        except ValueError as exc:  # a plugin's settings model raised pydantic's own error
            raise SettingError(f"--model-arg for {config.model}: {exc}") from None
    if agents:
        try:
            build_agents(config)
        except ConfigError as exc:
            raise SettingError(str(exc)) from None


def prepare_run_dir(run_dir: Path, config: RunConfig, questions: list[Question]) -> RunConfig:
    """Create the run directory, or check that ``config`` may resume the run it holds."""
    from eviseek import __version__
    from eviseek._registration import replacements
    from eviseek.eval.benchmark import benchmark_names

    names = benchmark_names(questions)
    whole = len(names) == 1 and all(q.benchmark is not None for q in questions)
    config = config.model_copy(
        update={
            "questions_sha256": questions_digest(questions),
            "eviseek_version": __version__,
            "benchmark": names[0] if whole else None,
            "replaced": replacements(),
        }
    )
    if RunDir(run_dir).exists():
        saved = load_config(run_dir)
        if saved.questions_sha256 not in (None, config.questions_sha256) and saved.questions_sha256 == (
            questions_digest(questions, legacy=True)
        ):  # a run saved before questions recorded their benchmark: the same questions
            config = config.model_copy(update={"questions_sha256": saved.questions_sha256})
        check_resumable(saved, config, run_dir)
        config = config.model_copy(update={"created_at": saved.created_at})
    else:
        write_questions(run_dir, questions)
    from eviseek.eval.prompt_record import save_templates

    save_templates(run_dir)
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
    check_settings(config, model=model is None, agents=agents is None)  # before any folder is made
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


async def preflight_model(config: RunConfig, model: Model | None = None) -> None:
    """Send one short text request to a remote model, as ``eviseek models check`` does.

    A server that is down, a wrong key or an unknown model name then stops the run at once with
    one line, instead of every episode being recorded as failed. Local providers (scripted,
    reference, hf) are not checked: they have no server, and a scripted model's replies are
    counted.
    """
    from eviseek.models.registry import provider_of

    # Only a provider behind a server (Provider.remote) can be down, refuse the key, or not know
    # the model name.
    if not provider_of(config.model).remote:
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

    async def worker(committer: Committer) -> None:
        for name, question in queue:
            traj = await executor.run(name, question, episode_seed(config.seed, question.id))
            await committer.submit(traj, question)

    # Folders left by attempts killed before their commit (or by failed episodes about to be
    # retried): start those episodes from clean folders.
    await asyncio.to_thread(clear_episode_dirs, run_dir, todo)

    try:
        if todo:
            await executor.start()
        with RunProgress(total, total - len(todo), prior, show) as bar:

            def on_commit(result: EpisodeResult) -> None:
                counts["ran"] += 1
                counts["failed"] += int(result.error is not None)
                bar.update(result)
                breaker.record(result)

            committer = Committer(
                run_dir,
                store,
                replace=replace,
                max_pending=2 * config.concurrency,
                on_commit=on_commit,
                dataset=config.dataset,
            )
            slots = min(config.concurrency, len(todo))
            with _setup_frozen():
                workers = {asyncio.create_task(worker(committer)) for _ in range(slots)}
                try:
                    # Until every worker is done, or any task (a worker, or the committer) fails.
                    await _first_failure_or_all_done(workers, committer.task)
                    await committer.close()
                finally:
                    await _cancel_all({*workers, committer.task})
                    await asyncio.to_thread(committer.shutdown)
    finally:
        await executor.close()
    return counts["ran"], counts["failed"]


@contextlib.contextmanager
def _setup_frozen() -> Iterator[None]:
    """Keep what is alive when the episodes start (modules, clients, the questions: objects that
    outlive the run) out of the cyclic garbage collector's passes until they end.

    Episodes allocate fast enough to trigger a full collection every few seconds, and each one
    walked those objects too, with the event loop stopped: at 256 in flight
    (``benchmarks/inflight_scale.py --levels 256 --waves 2``, timed with ``gc.callbacks``) the
    full collection in mid-run walked 185,000 objects in about 85 ms, and 74,000 in 27-50 ms
    with these frozen. Garbage is collected first (about 50 ms, before the first episode), so
    none is held for the run; the objects are handed back when it ends. A process that froze
    objects of its own, or turned the collector off, is left as it is.
    """
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def _first_failure_or_all_done(workers: set[asyncio.Task[None]], other: asyncio.Task[None]) -> None:
    """Wait until every task of ``workers`` has ended, or raise the first failure of any of them
    or of ``other``.

    One callback per task and one future, rather than ``asyncio.wait`` in a loop: that re-arms a
    callback on every remaining task each time one ends, which with a few hundred episode slots
    ending together at the close of a run is tens of thousands of calls on the event loop.
    """
    ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    remaining = len(workers)

    def on_done(task: asyncio.Task[None]) -> None:
        nonlocal remaining
        if ended.done():
            return
        if task.cancelled():
            ended.cancel()
        elif task.exception() is not None:
            ended.set_exception(task.exception())  # type: ignore[arg-type]
        elif task in workers:
            remaining -= 1
            if remaining == 0:
                ended.set_result(None)

    if not workers:
        ended.set_result(None)
    for task in (*workers, other):
        task.add_done_callback(on_done)
    try:
        await ended
    finally:
        for task in (*workers, other):
            task.remove_done_callback(on_done)


async def _cancel_all(tasks: set[asyncio.Task[None]]) -> None:
    """Cancel ``tasks`` and wait until every one has ended.

    A task can swallow a cancellation: before Python 3.12, ``asyncio.wait_for`` drops it when the
    awaited episode finishes at the same moment (CPython gh-86296), so a worker would go on to its
    next episode and then wait for a commit slot that a stopped committer never frees, hanging
    the run. Cancelling again each round ends such a task at its next await.
    """
    pending = {t for t in tasks if not t.done()}
    while pending:
        for t in pending:
            t.cancel()
        _, pending = await asyncio.wait(pending, timeout=0.5)
    for t in tasks:  # retrieve every outcome, so none is logged as never retrieved
        if not t.cancelled():
            t.exception()


def run_eval(config: RunConfig, run_dir: str | Path, **kwargs: Any) -> EvalOutcome:
    """Synchronous :func:`evaluate`."""
    return asyncio.run(evaluate(config, run_dir, **kwargs))
