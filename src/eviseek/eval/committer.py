"""Saving finished episodes and committing their rows (see :class:`Committer`).

A row is committed only after the episode's trajectory is on disk, so a row always has its
trajectory; the runner (:mod:`eviseek.eval.runner`) relies on that to resume and recover.
"""

from __future__ import annotations

import asyncio
import functools
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from eviseek.eval.benchmark import benchmarks
from eviseek.eval.prompt_record import save_first_prompt
from eviseek.eval.scoring import score_trajectory
from eviseek.eval.store import ResultsStore
from eviseek.types import EpisodeResult, Question, Trajectory
from eviseek.types.rundir import RunDir


class Committer:
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
        dataset: str | None = None,
    ) -> None:
        self.run_dir = run_dir
        self._layout = RunDir(run_dir)
        self.dataset = dataset
        """The run's dataset spec, which names the benchmark that scores its episodes."""
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
        self._first_saved: set[str] = set()
        # The first lookup of a benchmark imports the built-in ones (about 70 ms): do it now,
        # before the episodes start, rather than on the event loop when the first one ends.
        benchmarks()
        self.task = asyncio.create_task(self._commit_loop())

    async def submit(self, traj: Trajectory, question: Question) -> None:
        """Queue an episode for saving and committing; waits only when too many are queued."""
        await self._slots.acquire()
        task = asyncio.create_task(self._save(traj, question))
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)

    async def _save(self, traj: Trajectory, question: Question) -> None:
        try:
            result = score_trajectory(traj, question, dataset=self.dataset)
            traj.result = result
            directory = self._layout.episode_dir(result.agent, result.question_id)
            await asyncio.get_running_loop().run_in_executor(self._save_pool, traj.save, directory)
            if result.agent not in self._first_saved:  # the run's record of its first prompts
                self._first_saved.add(result.agent)
                await asyncio.get_running_loop().run_in_executor(
                    self._save_pool, save_first_prompt, self.run_dir, traj
                )
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


def clear_episode_dirs(run_dir: Path, todo: list[tuple[str, Question]]) -> None:
    """Remove the episode folders of ``todo`` (left by attempts killed before their commit, or by
    failed episodes about to be retried), so those episodes start from clean folders."""
    run = RunDir(run_dir)
    if not run.episodes_dir.exists():
        return
    for name, question in todo:
        directory = run.episode_dir(name, question.id)
        if directory.exists():
            shutil.rmtree(directory, ignore_errors=True)
