"""A crash-safe store of finished episodes: ``RUN_DIR/results.sqlite``.

One row per finished ``(agent, question_id)`` holding the :class:`EpisodeResult` as JSON. SQLite in
WAL mode with ``synchronous=FULL`` makes every :meth:`ResultsStore.add` an atomic, durable
commit: after a ``kill -9`` (even in the middle of a write) the store holds exactly the rows
whose commit returned, never a half-written one. A failed episode is a finished episode too;
its row carries the failure reason in ``EpisodeResult.error``.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from eviseek.errors import ConfigError, EviseekError
from eviseek.types import EpisodeResult
from eviseek.types.rundir import EPISODES_DIR, STORE_FILE, RunDir, safe_name

__all__ = [
    "EPISODES_DIR",
    "STORE_FILE",
    "DuplicateResultError",
    "ResultsStore",
    "StoreDamagedError",
    "episode_dir",
    "load_results",
    "safe_name",
]

_SCHEMA_VERSION = 1
# SQLite's words for a file that is not a readable database, and for storage it cannot write.
_DAMAGE = re.compile(r"malformed|not a database|file is encrypted|corrupt", re.IGNORECASE)
_UNWRITABLE = re.compile(r"readonly database|read-only|unable to open database file", re.IGNORECASE)

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


def episode_dir(run_dir: str | Path, agent: str, question_id: str) -> Path:
    """``RUN_DIR/episodes/<agent>/<question_id>/``: where an episode's trajectory is saved."""
    return RunDir(run_dir).episode_dir(agent, question_id)


class StoreDamagedError(ConfigError):
    """``results.sqlite`` cannot be read (SQLite reports it malformed, or it is not a database)."""


class DuplicateResultError(EviseekError):
    """A result for this ``(agent, question_id)`` is already stored (an episode ran twice)."""


class ResultsStore:
    """Durable, append-mostly storage of episode results for one run directory.

    Safe to share between threads (one connection behind a lock). Only one writer process
    should use a run directory at a time; the runner takes a lock file to ensure that.
    """

    def __init__(self, run_dir: str | Path, *, create: bool = True, read_only: bool = False) -> None:
        """Open (or, with ``create``, create) the store of ``run_dir``.

        ``read_only`` opens an existing store without writing anything, so a finished run on
        read-only storage can still be scored and reported. A damaged file raises
        :class:`StoreDamagedError`, whose message says how to rebuild it.
        """
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / STORE_FILE
        self.read_only = read_only
        self._copy: tempfile.TemporaryDirectory[str] | None = None
        if (not create or read_only) and not self.path.exists():
            raise ConfigError(f"{self.run_dir} has no {STORE_FILE}: no episode of this run has finished")
        self._lock = threading.Lock()
        if read_only:
            self._conn = self._open_read_only()
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so each add is one transaction.
        self._conn = sqlite3.connect(
            str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False
        )
        try:
            with self._translated():
                mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise EviseekError(
                        f"SQLite refused WAL mode for {self.path} (got {mode!r}); "
                        "put the run directory on a local filesystem"
                    )
                # FULL: the WAL is fsynced at every commit, so a committed row survives power loss.
                self._conn.execute("PRAGMA synchronous=FULL")
                version = self._conn.execute("PRAGMA user_version").fetchone()[0]
                self._check_version(version)
                self._conn.execute(_SCHEMA)
                if version == 0:
                    self._conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
        except BaseException:
            self._conn.close()
            raise

    def _check_version(self, version: int) -> None:
        if version not in (0, _SCHEMA_VERSION):
            raise ConfigError(
                f"{self.path} has store schema version {version}; this eviseek reads version "
                f"{_SCHEMA_VERSION}. Use the eviseek version that wrote it."
            )

    def _open_read_only(self) -> sqlite3.Connection:
        """A connection that never writes to the run directory.

        SQLite's ``mode=ro`` still needs the WAL index (``-shm``) file, which it cannot create on
        read-only storage; then the file (and its WAL, if any) is read from a private copy.
        """
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        try:
            with self._translated():
                try:
                    version = conn.execute("PRAGMA user_version").fetchone()[0]
                    conn.execute("SELECT COUNT(*) FROM results").fetchone()
                except sqlite3.OperationalError as exc:
                    if "no such table" in str(exc):
                        raise  # an empty (0-byte) file: handled by the caller like a missing row set
                    conn.close()
                    conn = self._open_copy()
                    version = conn.execute("PRAGMA user_version").fetchone()[0]
                self._check_version(version)
        except sqlite3.OperationalError:
            conn.close()
            # No results table: a 0-byte or never-initialised file. Read it as an empty store.
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            conn.execute(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_copy(self) -> sqlite3.Connection:
        self._copy = tempfile.TemporaryDirectory(prefix="eviseek-store-")
        for suffix in ("", "-wal"):
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                shutil.copyfile(source, Path(self._copy.name, STORE_FILE + suffix))
        return sqlite3.connect(
            str(Path(self._copy.name, STORE_FILE)), isolation_level=None, check_same_thread=False
        )

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """Turn SQLite's errors about a damaged or unwritable file into one clear line."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            text = str(exc)
            if _DAMAGE.search(text):
                raise StoreDamagedError(
                    f"{self.path} is damaged ({text}); rebuild it from the saved trajectories with "
                    f"`eviseek score {self.run_dir} --rebuild` (the damaged file is kept aside)"
                ) from None
            if isinstance(exc, sqlite3.OperationalError) and _UNWRITABLE.search(text):
                raise ConfigError(
                    f"cannot write to {self.path} ({text}): the run directory is read-only; "
                    "copy the run to writable storage, or use `eviseek score`/`eviseek report "
                    "--out ELSEWHERE`, which only read it"
                ) from None
            raise  # a constraint, a lock: the caller's business

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (committed rows are already durable)."""
        with self._lock:
            self._conn.close()
            if self._copy is not None:
                self._copy.cleanup()
                self._copy = None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise EviseekError(f"{self.path} was opened read-only; open it without read_only to add rows")
        with self._lock, self._translated():
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
        with self._lock, self._translated():
            rows = self._conn.execute("SELECT agent, question_id FROM results").fetchall()
        return {(a, q) for a, q in rows}

    def failed_keys(self) -> set[tuple[str, str]]:
        """``(agent, question_id)`` of stored episodes that failed (their row has an error)."""
        with self._lock, self._translated():
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
        with self._lock, self._translated():
            rows = self._conn.execute(sql + " ORDER BY rowid", args).fetchall()
        return [EpisodeResult.model_validate_json(r[0]) for r in rows]

    def __len__(self) -> int:
        with self._lock, self._translated():
            return int(self._conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def integrity_check(self) -> str:
        """SQLite's own consistency check: ``"ok"`` for a healthy file."""
        with self._lock:
            return str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])


def load_results(run_dir: str | Path) -> list[EpisodeResult]:
    """Every stored result of a run directory, in commit order (the store is only read)."""
    with ResultsStore(run_dir, read_only=True) as store:
        return store.results()
