"""A crash-safe store of finished episodes: ``RUN_DIR/results.sqlite``.

One row per finished ``(agent, question_id)`` holding the :class:`EpisodeResult` as JSON. SQLite in
WAL mode with ``synchronous=FULL`` makes every :meth:`ResultsStore.add` an atomic, durable
commit: after a ``kill -9`` (even in the middle of a write) the store holds exactly the rows
whose commit returned, never a half-written one. A failed episode is a finished episode too;
its row carries the failure reason in ``EpisodeResult.error``.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from eviseek.errors import ConfigError, EviseekError
from eviseek.types import EpisodeResult

STORE_FILE = "results.sqlite"
EPISODES_DIR = "episodes"
_SCHEMA_VERSION = 1
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    agent TEXT NOT NULL,
    question_id TEXT NOT NULL,
    result TEXT NOT NULL,
    correct INTEGER,
    error TEXT,
    finished_at REAL NOT NULL,
    PRIMARY KEY (agent, question_id)
)
"""


def safe_name(name: str) -> str:
    """``name`` if it is a safe single path component, else a sanitised form plus a short hash.

    The hash keeps two ids that sanitise alike (``a/b`` and ``a:b``) in different folders.
    """
    if _SAFE_NAME.fullmatch(name) and ".." not in name:
        return name
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:80] or "id"
    return f"{cleaned}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


def episode_dir(run_dir: str | Path, agent: str, question_id: str) -> Path:
    """``RUN_DIR/episodes/<agent>/<question_id>/``: where an episode's trajectory is saved."""
    return Path(run_dir, EPISODES_DIR, safe_name(agent), safe_name(question_id))


class DuplicateResultError(EviseekError):
    """A result for this ``(agent, question_id)`` is already stored (an episode ran twice)."""


class ResultsStore:
    """Durable, append-mostly storage of episode results for one run directory.

    Safe to share between threads (one connection behind a lock). Only one writer process
    should use a run directory at a time; the runner takes a lock file to ensure that.
    """

    def __init__(self, run_dir: str | Path, *, create: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / STORE_FILE
        if not create and not self.path.exists():
            raise ConfigError(f"{self.run_dir} has no {STORE_FILE}: no episode of this run has finished")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so each add is one transaction.
        self._conn = sqlite3.connect(
            str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False
        )
        try:
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise EviseekError(
                    f"SQLite refused WAL mode for {self.path} (got {mode!r}); "
                    "put the run directory on a local filesystem"
                )
            # FULL: the WAL is fsynced at every commit, so a committed row survives power loss too.
            self._conn.execute("PRAGMA synchronous=FULL")
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, _SCHEMA_VERSION):
                raise ConfigError(
                    f"{self.path} has store schema version {version}; this eviseek reads version "
                    f"{_SCHEMA_VERSION}. Use the eviseek version that wrote it."
                )
            self._conn.execute(_SCHEMA)
            if version == 0:
                self._conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
        except BaseException:
            self._conn.close()
            raise

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (committed rows are already durable)."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            # IMMEDIATE takes the write lock up front, so a concurrent writer waits instead of
            # failing half-way through.
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def add(self, result: EpisodeResult, *, replace: bool = False) -> None:
        """Commit one finished episode durably; returns only once the row is on disk.

        Raises :class:`DuplicateResultError` if the pair is already stored, unless ``replace``
        (used to re-run failed episodes).
        """
        try:
            self.add_many([result], replace=replace)
        except DuplicateResultError:
            raise DuplicateResultError(
                f"a result for agent {result.agent!r} and question {result.question_id!r} is already "
                f"stored in {self.path}; an episode must not run twice"
            ) from None

    def add_many(self, results: list[EpisodeResult], *, replace: bool = False) -> None:
        """Commit several finished episodes in one durable transaction (all or none)."""
        now = time.time()
        rows = [
            (
                r.agent,
                r.question_id,
                r.model_dump_json(),
                None if r.correct is None else int(r.correct),
                r.error,
                now,
            )
            for r in results
        ]
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        try:
            with self._transaction() as conn:
                conn.executemany(
                    f"{verb} INTO results (agent, question_id, result, correct, error, finished_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )
        except sqlite3.IntegrityError as exc:
            raise DuplicateResultError(
                f"one of {len(rows)} results is already stored in {self.path} "
                f"({', '.join(f'{r.agent}/{r.question_id}' for r in results[:5])}...); "
                "an episode must not run twice"
            ) from exc

    def done_keys(self) -> set[tuple[str, str]]:
        """``(agent, question_id)`` of every stored episode, failed ones included."""
        with self._lock:
            rows = self._conn.execute("SELECT agent, question_id FROM results").fetchall()
        return {(a, q) for a, q in rows}

    def failed_keys(self) -> set[tuple[str, str]]:
        """``(agent, question_id)`` of stored episodes that failed (their row has an error)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT agent, question_id FROM results WHERE error IS NOT NULL"
            ).fetchall()
        return {(a, q) for a, q in rows}

    def results(self, agent: str | None = None) -> list[EpisodeResult]:
        """Stored results in commit order, optionally for one agent."""
        sql = "SELECT result FROM results"
        args: tuple[str, ...] = ()
        if agent is not None:
            sql += " WHERE agent = ?"
            args = (agent,)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY rowid", args).fetchall()
        return [EpisodeResult.model_validate_json(r[0]) for r in rows]

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def integrity_check(self) -> str:
        """SQLite's own consistency check: ``"ok"`` for a healthy file."""
        with self._lock:
            return str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])


def load_results(run_dir: str | Path) -> list[EpisodeResult]:
    """Every stored result of a run directory, in commit order."""
    with ResultsStore(run_dir, create=False) as store:
        return store.results()
