"""The configuration of an evaluation run, saved as ``RUN_DIR/run.json``.

A run directory belongs to one configuration. Resuming it with settings that would change the
results (another model, budget, seed, question set...) is refused, because the finished rows
and the new ones would no longer be comparable. Settings that only change how the run is
executed (concurrency, backend, timeouts, the server address) may differ between sessions.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from eviseek.errors import ConfigError
from eviseek.eval.benchmark import DEFAULT_BUDGET, benchmark_of, budget_of, record_benchmarks
from eviseek.types.question_file import QUESTIONS_FILE
from eviseek.types.rundir import RunDir

PAPER_SEED = 20261012
"""The paper's bootstrap seed (app. A, "Paired significance tests"); every bootstrap's default here."""

# Words that suggest a model argument is a credential. Such values must come from the environment
# (``--api-key-env``) so that they never land in run.json.
_SECRET_WORDS = ("key", "token", "secret", "password")


MIN_IMAGE_SIDE = 16
MAX_IMAGE_SIDE = 2048
"""Bounds on ``--image-size`` (ours: a renderer's cost grows with the pixels)."""


class RunConfig(BaseModel):
    """Everything that defines an evaluation run."""

    agents: list[str]
    """Agent names in the order given, e.g. ``["passive", "single-model", "eviseek"]``."""
    agent_config: dict[str, Any] = Field(default_factory=dict)
    """Extra keyword arguments passed to every agent factory."""
    model: str
    """``provider/name`` id of the model every agent uses."""
    model_args: dict[str, Any] = Field(default_factory=dict)
    """Non-secret provider keyword arguments (``delay_s``, ``path`` ...)."""
    dataset: str
    """The dataset spec given to :func:`eviseek.eval.datasets.load_dataset`."""
    limit: int | None = None
    """Only the first ``limit`` questions of the dataset, in dataset order."""
    budget: int = DEFAULT_BUDGET
    """Primitive environment steps allowed per episode (a new run takes its benchmark's)."""
    seed: int = 0
    image_size: tuple[int, int] | None = None
    """Frame width and height every environment renders at (``None``: each env's own default);
    only environments that can render at another size accept it (:func:`~eviseek.envs.registry.resizable`)."""
    questions_sha256: str | None = None
    """Hash of ``questions.jsonl``; a dataset whose contents changed cannot resume a run."""
    benchmark: str | None = None
    """The registered benchmark of the run's questions (``None``: they belong to none, or to
    several, and each question records its own). ``score``, ``report`` and ``replay`` look it up
    by this name; runs saved before it was recorded have none and are recognised once."""
    plugin_sha256: dict[str, str] = Field(default_factory=dict)
    """SHA-256 of each plugin file as the run was prepared, keyed as :attr:`plugins` records it
    in ``run.json`` (a path relative to the run directory)."""
    replaced: list[str] = Field(default_factory=list)
    """Registrations the plugins replaced with ``replace=True`` (a built-in benchmark, env,
    provider or agent), one line each: results made with them are not the built-in's."""

    # Execution settings: they may change between sessions of the same run.
    concurrency: int = 8
    timeout_s: float = 600.0
    backend: Literal["local", "ray"] = "local"
    env_workers: int | None = None
    """Simulator worker processes (``0`` runs environments in threads; ``None`` sizes to the CPUs)."""
    base_url: str | None = None
    api_key_env: str | None = None
    """The *name* of the environment variable holding the API key (the key is never saved)."""
    plugins: list[str] = Field(default_factory=list)
    """Modules or ``.py`` files imported before the run (they may register envs, agents, models,
    benchmarks). In memory a file is an absolute path; ``run.json`` records it relative to the
    run directory (:func:`save_config`), so a run folder moved with its plugin still finds it."""
    ray_address: str | None = None
    ray_actor_resources: dict[str, float] = Field(default_factory=dict)
    """Extra Ray resources each episode actor needs besides one CPU (``{"GPU": 1}``, or a custom
    resource that only simulator nodes advertise)."""
    env_url: str | None = None
    """An env server (``eviseek env serve``) hosting the environments, instead of this machine."""
    env_token_env: str | None = None
    """The *name* of the variable holding the env server's token (default ``EVISEEK_ENV_TOKEN``)."""
    env_images: Literal["png", "raw", "jpeg"] = "png"
    """How the env server sends frames: ``png`` (lossless; real networks), ``raw`` (no encoding
    cost; loopback and fast links) or ``jpeg`` (lossy, smallest; slow links)."""
    eviseek_version: str = ""
    created_at: float = Field(default_factory=time.time)

    @field_validator("image_size")
    @classmethod
    def _image_size_ok(cls, value: tuple[int, int] | None) -> tuple[int, int] | None:
        if value is not None and not all(MIN_IMAGE_SIDE <= v <= MAX_IMAGE_SIDE for v in value):
            raise ValueError(
                f"--image-size {value[0]}x{value[1]}: each side must be "
                f"{MIN_IMAGE_SIDE}-{MAX_IMAGE_SIDE} pixels"
            )
        return value

    @field_validator("agents")
    @classmethod
    def _agents_ok(cls, value: list[str]) -> list[str]:
        names = [a.strip() for a in value if a.strip()]
        if not names:
            raise ValueError("give at least one agent, e.g. --agents passive,eviseek")
        dupes = sorted({a for a in names if names.count(a) > 1})
        if dupes:
            raise ValueError(f"agent(s) listed twice: {', '.join(dupes)}")
        return names

    @field_validator("concurrency")
    @classmethod
    def _concurrency_ok(cls, value: int) -> int:
        if value < 1:
            raise ValueError("concurrency must be at least 1")
        return value

    @field_validator("budget")
    @classmethod
    def _budget_ok(cls, value: int) -> int:
        if value < 1:
            # Zero would leave the active agents no step at all; Passive takes none anyway.
            raise ValueError("budget must be at least 1 primitive step (--budget 1 or more)")
        return value

    @field_validator("timeout_s")
    @classmethod
    def _timeout_ok(cls, value: float) -> float:
        if not math.isfinite(value) or value <= 0:
            raise ValueError("timeout must be a positive, finite number of seconds")
        return value

    @field_validator("env_url")
    @classmethod
    def _env_url_ok(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from eviseek.envs.remote.client import check_env_url

        return check_env_url(value)

    @field_validator("ray_actor_resources")
    @classmethod
    def _resources_ok(cls, value: dict[str, float]) -> dict[str, float]:
        for key, amount in value.items():
            if not math.isfinite(amount) or amount < 0:
                raise ValueError(f"Ray resource {key} needs a finite, non-negative amount, got {amount:g}")
        return value

    @field_validator("limit")
    @classmethod
    def _limit_ok(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError("limit must be at least 1 (leave it out to run every question)")
        return value

    @field_validator("model_args")
    @classmethod
    def _no_secrets(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            if any(word in name.lower() for word in _SECRET_WORDS):
                raise ValueError(
                    f"model argument {name!r} looks like a credential and would be saved in run.json; "
                    "put it in an environment variable and pass --api-key-env NAME instead"
                )
        return value


def default_budget(dataset: str) -> int:
    """The step budget a dataset is run with unless one is given: its benchmark's
    (:mod:`eviseek.eval.benchmark`: 120 for ``house:...`` and ``express:...``, 30 for the others).
    A question file or directory takes the budget of the benchmark its questions record (a
    ``house generate`` file: 120; a plugin benchmark's file: the plugin's), and 30 when they
    record none or several."""
    benchmark = benchmark_of(dataset)
    if benchmark is not None:
        return benchmark.budget
    path = Path(dataset).expanduser()
    if path.is_file() or (path / QUESTIONS_FILE).is_file():
        from eviseek.types.question_file import read_questions

        questions = read_questions(path)
        record_benchmarks(questions)
        return budget_of(questions)
    return DEFAULT_BUDGET


RESULT_SETTINGS: tuple[str, ...] = (
    "agents",
    "agent_config",
    "model",
    "model_args",
    "dataset",
    "limit",
    "budget",
    "seed",
    "image_size",
    "questions_sha256",
)
"""Settings that change what an episode produces; they must match to resume a run."""


def config_differences(saved: RunConfig, new: RunConfig) -> list[str]:
    """One line per result-changing setting that differs between ``saved`` and ``new``."""
    out = []
    for name in RESULT_SETTINGS:
        a, b = getattr(saved, name), getattr(new, name)
        if a != b and name != "questions_sha256":
            out.append(f"{name}: the run directory has {a!r}, this command asks for {b!r}")
    # The questions' hash is derived: a changed dataset or limit already explains it, so it is
    # named (in words, never as two hashes) only when nothing else is.
    if saved.questions_sha256 != new.questions_sha256 and not out:
        out.append(
            "questions: the dataset's questions differ from those saved in the run's "
            "questions.jsonl (its files changed since the run started)"
        )
    return out


def check_resumable(saved: RunConfig, new: RunConfig, run_dir: str | Path) -> None:
    """Raise :class:`ConfigError` naming every differing setting if ``new`` cannot resume ``saved``."""
    diffs = config_differences(saved, new)
    if diffs:
        lines = "\n  ".join(diffs)
        raise ConfigError(
            f"{run_dir} holds a run with different settings, so it cannot be resumed:\n  {lines}\n"
            "Use the same settings to resume, or pass a new --out directory for a new run."
        )


def new_run_config(
    *,
    agents: list[str],
    model: str,
    dataset: str,
    budget: int | None = None,
    seed: int | None = None,
    **settings: Any,
) -> RunConfig:
    """The settings of a new run: what was given, else :class:`RunConfig`'s own defaults, with the
    step budget the dataset calls for (:func:`default_budget`). ``None`` means not given.

    The run's ``plugins`` are imported first, so that a plugin benchmark's budget applies."""
    given = {k: v for k, v in settings.items() if v is not None}
    if budget is None and given.get("plugins"):
        from eviseek.eval.envpool import import_plugins

        import_plugins(given["plugins"])
    if seed is not None:
        given["seed"] = seed
    return RunConfig(
        agents=agents,
        model=model,
        dataset=dataset,
        budget=default_budget(dataset) if budget is None else budget,
        **given,
    )


def resume_config(saved: RunConfig, *, plugins: list[str] | None = None, **settings: Any) -> RunConfig:
    """The settings to resume ``saved`` with: the saved ones, with every setting given again
    (``None`` means not given) on top.

    Result settings given again (``limit``, ``budget``, ``seed``, ``agent_config``...) are kept
    as given, so that :func:`check_resumable` refuses a resume that would change results by
    name, instead of the run silently going on with the saved values. Execution settings
    (concurrency, backend, timeouts) may change freely.
    """
    given = {k: v for k, v in settings.items() if v is not None and v != {}}
    return saved.model_copy(update={**given, "plugins": plugins or saved.plugins})


def save_config(config: RunConfig, run_dir: str | Path) -> Path:
    """Write ``run.json`` atomically (temporary file, fsync, rename), its plugin files recorded
    relative to the run directory with their SHA-256 (see :func:`plugin_records`)."""
    plugins, hashes = plugin_records(config.plugins, run_dir)
    saved = config.model_copy(update={"plugins": plugins, "plugin_sha256": hashes})
    return RunDir(run_dir).write_config(saved.model_dump_json(indent=2))


def plugin_records(plugins: list[str], run_dir: str | Path) -> tuple[list[str], dict[str, str]]:
    """``plugins`` as ``run.json`` records them: a module name as it is, a ``.py`` file as a path
    relative to the run directory, and the SHA-256 of each file that exists."""
    base = Path(run_dir).resolve()
    names: list[str] = []
    hashes: dict[str, str] = {}
    for plugin in plugins:
        if not plugin.endswith(".py"):
            names.append(plugin)
            continue
        path = Path(plugin).resolve()
        name = os.path.relpath(path, base)
        names.append(name)
        if path.is_file():
            hashes[name] = file_sha256(path)
    return names, hashes


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def resolve_plugins(plugins: list[str], run_dir: str | Path) -> list[str]:
    """A run's recorded plugins made importable: relative ``.py`` paths joined to the run
    directory (absolute ones, as runs saved before relative records hold, stay as they are)."""
    base = Path(run_dir).resolve()
    return [str(base / p) if p.endswith(".py") and not os.path.isabs(p) else p for p in plugins]


def load_config(run_dir: str | Path) -> RunConfig:
    """Read ``run.json`` from a run directory, with a clear error when it is missing or damaged.
    Plugin files come back as absolute paths (:func:`resolve_plugins`)."""
    run = RunDir(run_dir).require()
    try:
        config = RunConfig.model_validate(run.read_config())
    except ValueError as exc:
        raise ConfigError(f"{run.run_file} is not a valid run configuration: {exc}") from exc
    return config.model_copy(update={"plugins": resolve_plugins(config.plugins, run_dir)})
