"""The layout of a run directory, in one place, and the one atomic file writer.

Every file name of a run directory is defined here and nowhere else; commands, the runner, the
judges, the benchmarks and the viewer reach the files through :class:`RunDir`::

    RUN_DIR/run.json          the run configuration (written last: it marks a prepared run)
    RUN_DIR/questions.jsonl   the questions evaluated (images under question_images/)
    RUN_DIR/results.sqlite    one row per finished (agent, question_id)
    RUN_DIR/.lock             held by the one process writing the run
    RUN_DIR/episodes/<agent>/<question_id>/trajectory.json   (+ images/)
    RUN_DIR/support.jsonl     appendix-B support grades (``eviseek judge``)
    RUN_DIR/express.jsonl     EXPRESS-Bench grades (``eviseek judge --protocol express``)
    RUN_DIR/judge/<agent>/<question_id>/   the numbered images a judge was sent

It lives in ``types`` so every layer may use it; reading the results back for analysis is
:func:`eviseek.eval.rundir.load_run`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eviseek.errors import ConfigError
from eviseek.types.atomic import atomic_file, write_atomic
from eviseek.types.question_file import QUESTIONS_FILE, RUN_IMAGE_DIR

RUN_FILE = "run.json"
STORE_FILE = "results.sqlite"
LOCK_FILE = ".lock"
EPISODES_DIR = "episodes"
TRAJECTORY_FILE = "trajectory.json"
SUPPORT_FILE = "support.jsonl"
EXPRESS_FILE = "express.jsonl"
JUDGE_DIR = "judge"

__all__ = [
    "EPISODES_DIR",
    "EXPRESS_FILE",
    "JUDGE_DIR",
    "LOCK_FILE",
    "QUESTIONS_FILE",
    "RUN_FILE",
    "RUN_IMAGE_DIR",
    "STORE_FILE",
    "SUPPORT_FILE",
    "TRAJECTORY_FILE",
    "RunDir",
    "atomic_file",
    "safe_name",
    "write_atomic",
]


_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}")


def safe_name(name: str) -> str:
    """``name`` if it is a safe single path component, else a sanitised form plus a short hash.

    The hash keeps two ids that sanitise alike (``a/b`` and ``a:b``) in different folders.
    """
    if _SAFE_NAME.fullmatch(name) and ".." not in name:
        return name
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:80] or "id"
    return f"{cleaned}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


class RunDir:
    """One run directory: where each of its files is, and reading/writing ``run.json``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    def __fspath__(self) -> str:
        return str(self.path)

    @property
    def run_file(self) -> Path:
        return self.path / RUN_FILE

    @property
    def questions_file(self) -> Path:
        return self.path / QUESTIONS_FILE

    @property
    def store_file(self) -> Path:
        return self.path / STORE_FILE

    @property
    def lock_file(self) -> Path:
        return self.path / LOCK_FILE

    @property
    def episodes_dir(self) -> Path:
        return self.path / EPISODES_DIR

    @property
    def support_file(self) -> Path:
        return self.path / SUPPORT_FILE

    @property
    def express_file(self) -> Path:
        return self.path / EXPRESS_FILE

    @property
    def prompts_dir(self) -> Path:
        return self.path / PROMPTS_DIR

    def exists(self) -> bool:
        """True when ``run.json`` is there: the run directory was fully prepared."""
        return self.run_file.exists()

    def require(self) -> RunDir:
        """This run directory; :class:`ConfigError` when it has no ``run.json``."""
        if not self.run_file.exists():
            raise ConfigError(
                f"{self.path} is not a run directory: {RUN_FILE} is missing "
                f"(run `eviseek eval --out {self.path}` first)"
            )
        return self

    def episode_dir(self, agent: str, question_id: str) -> Path:
        """``episodes/<agent>/<question_id>/``: where an episode's trajectory and images go."""
        # One join rather than three (``episodes_dir`` and each ``/``): pathlib parses a path
        # for every one, and the runner asks for a folder per finished episode.
        return self.path.joinpath(EPISODES_DIR, safe_name(agent), safe_name(question_id))

    def trajectory_file(self, agent: str, question_id: str) -> Path:
        return self.episode_dir(agent, question_id) / TRAJECTORY_FILE

    def trajectory_files(self) -> list[Path]:
        """Every saved ``episodes/<agent>/<question_id>/trajectory.json``, sorted."""
        if not self.episodes_dir.is_dir():
            return []
        return sorted(self.episodes_dir.glob(f"*/*/{TRAJECTORY_FILE}"))

    def judge_dir(self, episode_dir: Path) -> Path:
        """``judge/<agent>/<question_id>/``: the numbered images a judge was sent for one episode."""
        return self.path / JUDGE_DIR / episode_dir.parent.name / episode_dir.name

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the run's exclusive lock (``.lock``; the OS releases it even after ``kill -9``).

        Raises :class:`ConfigError` at once when another process holds it.
        """
        import fcntl

        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.lock_file, "a+") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ConfigError(
                    f"another eviseek eval is writing to {self.path}; "
                    "wait for it to finish or use another --out"
                ) from None
            yield

    def read_config(self) -> dict[str, Any]:
        """``run.json`` as a JSON object; :class:`ConfigError` when it is missing or damaged."""
        path = self.require().run_file
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path} is not valid JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{path} must hold a JSON object (the run configuration)")
        return data

    def write_config(self, text: str) -> Path:
        """Write ``run.json`` (already serialised) atomically."""
        return write_atomic(self.run_file, text)


PROMPTS_DIR = "prompts"
"""The exact prompt templates a run used (``templates/``) and each agent's first rendered request
(``first/<agent>.md``)."""
