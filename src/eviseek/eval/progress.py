"""A live progress line for evaluation runs: done/total, accuracy so far, tokens and an ETA.

Shown only on a terminal (or when asked for); in tests, pipes and CI logs it stays silent.
"""

from __future__ import annotations

import sys
from typing import Any

from eviseek.types import EpisodeResult


class RunProgress:
    """Counts finished episodes and, when enabled, draws a rich progress bar on stderr."""

    def __init__(
        self, total: int, already_done: int, prior: list[EpisodeResult], enabled: bool | None
    ) -> None:
        self.total = total
        self.done = already_done
        self.correct = sum(1 for r in prior if r.correct)
        self.failed = sum(1 for r in prior if r.error is not None)
        self.tokens = sum((r.total_tokens or 0) for r in prior)
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> RunProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]eval"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("acc {task.fields[acc]}"),
                TextColumn("fail {task.fields[failed]}"),
                TextColumn("tok {task.fields[tokens]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(
                "eval", total=self.total, completed=self.done, **self._fields()
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    @property
    def accuracy(self) -> float | None:
        """Correct over finished episodes so far (failed ones count as incorrect)."""
        return self.correct / self.done if self.done else None

    def _fields(self) -> dict[str, str]:
        acc = self.accuracy
        return {
            "acc": "-" if acc is None else f"{100 * acc:.1f}%",
            "failed": str(self.failed),
            "tokens": _human(self.tokens),
        }

    def update(self, result: EpisodeResult) -> None:
        """Count one finished episode."""
        self.done += 1
        self.correct += int(bool(result.correct))
        self.failed += int(result.error is not None)
        self.tokens += result.total_tokens or 0
        if self._progress is not None:
            self._progress.update(self._task, advance=1, **self._fields())


def _human(n: int) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)
