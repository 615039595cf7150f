"""``eviseek eval``: run agents over a question set into a resumable run directory.

Re-running the same command resumes the run: finished episodes are skipped. ``eviseek eval
--out RUN_DIR`` alone resumes with the settings saved in ``RUN_DIR/run.json``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from eviseek.cli.errors import POSITIVE, env_url_option
from eviseek.eval.benchmark import NAVIGATION_BUDGET, TABLETOP_BUDGET
from eviseek.eval.config import RunConfig
from eviseek.types.rundir import RunDir

if TYPE_CHECKING:
    from eviseek.eval.runner import EvalOutcome

# Help texts quote RunConfig's own defaults, so they cannot drift from what a run uses.
_DEFAULT = {name: field.default for name, field in RunConfig.model_fields.items()}


# Flags that only change how a run executes: when resuming they may be given anew.
def _pairs(items: list[str], flag: str) -> dict[str, Any]:
    """``["k=v", ...]`` into a dict; values are read as JSON when they parse (numbers, lists)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{flag} expects KEY=VALUE, got {item!r}")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def parse_image_size(text: str) -> tuple[int, int]:
    """``"512x512"`` as ``(512, 512)``; a bad form or size is a bad flag (exit 2)."""
    from eviseek.eval.config import MAX_IMAGE_SIDE, MIN_IMAGE_SIDE

    w, sep, h = text.lower().strip().partition("x")
    if not (sep and w.strip().isdigit() and h.strip().isdigit()):
        raise typer.BadParameter(f"--image-size expects WIDTHxHEIGHT, e.g. 512x512; got {text!r}")
    size = (int(w), int(h))
    if not all(MIN_IMAGE_SIDE <= v <= MAX_IMAGE_SIDE for v in size):
        raise typer.BadParameter(
            f"--image-size {text}: each side must be {MIN_IMAGE_SIDE}-{MAX_IMAGE_SIDE} pixels"
        )
    return size


def _plugins(items: list[str]) -> list[str]:
    # Files are made absolute so workers started elsewhere (Ray, env workers) find them.
    return [os.path.abspath(p) if p.endswith(".py") else p for p in items]


# Long because Typer declares each flag as a parameter with its help text: the signature is the
# flag table (about 70 lines); the body is about 70.
def eval_command(
    out: Path = typer.Option(..., "--out", "-o", help="Run directory (created, or resumed if it exists)"),
    agents: str | None = typer.Option(None, "--agents", help="Comma-separated agents, e.g. passive,eviseek"),
    model: str | None = typer.Option(None, "--model", "-m", help="provider/name, e.g. openai/gpt-4o-mini"),
    dataset: str | None = typer.Option(
        None, "--dataset", "-d", help="tabletop:dev, tabletop:test, a directory or a .jsonl file"
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N questions"),
    budget: int | None = typer.Option(
        None,
        "--budget",
        min=1,
        help=f"Primitive steps per episode, at least 1 (default {TABLETOP_BUDGET}; {NAVIGATION_BUDGET} for "
        "house: and express: datasets)",
    ),
    seed: int | None = typer.Option(
        None, "--seed", help=f"Seed of each episode's environment (default {_DEFAULT['seed']})"
    ),
    image_size: str | None = typer.Option(
        None,
        "--image-size",
        help="Frame size WIDTHxHEIGHT every environment renders at, e.g. 512x512 (EXPRESS-Bench's); "
        "default: each environment's own. Refused for environments that render at one size only",
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", "-c", min=1, help=f"Episodes at once (default {_DEFAULT['concurrency']})"
    ),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        callback=POSITIVE,
        help=f"Seconds per episode before it fails (default {_DEFAULT['timeout_s']:g})",
    ),
    backend: str | None = typer.Option(
        None, "--backend", help=f"local or ray (default {_DEFAULT['backend']})"
    ),
    env_workers: int | None = typer.Option(
        None,
        "--env-workers",
        min=0,
        help="Simulator processes (0: threads in this process; default one per CPU)",
    ),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible server URL"),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Name of the environment variable holding the API key"
    ),
    model_arg: list[str] = typer.Option([], "--model-arg", help="Provider argument KEY=VALUE (repeatable)"),
    agent_arg: list[str] = typer.Option([], "--agent-arg", help="Agent setting KEY=VALUE (repeatable)"),
    plugin: list[str] = typer.Option(
        [], "--plugin", help="Module or .py file to import first (registers envs, agents, models)"
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="Ray cluster to join (default: start a local one)"
    ),
    ray_resource: list[str] = typer.Option(
        [],
        "--ray-resource",
        help="Ray resource each episode actor needs, KEY=AMOUNT (repeatable); overrides what the "
        "environment declares (GPU=0, sim=1)",
    ),
    env_url: str | None = typer.Option(
        None,
        "--env-url",
        help="Env server (eviseek env serve) hosting the environments, http://HOST:PORT",
        callback=env_url_option,
    ),
    env_token_env: str | None = typer.Option(
        None, "--env-token-env", help="Variable holding the env server's token (default EVISEEK_ENV_TOKEN)"
    ),
    env_images: str | None = typer.Option(
        None,
        "--env-images",
        help="How the env server sends frames: png (lossless, default), raw (no encoding cost; "
        "loopback or a fast link) or jpeg (lossy, smallest)",
    ),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run failed episodes again"),
    progress: bool | None = typer.Option(
        None, "--progress/--no-progress", help="Show a progress bar (default: on in a terminal)"
    ),
) -> None:
    """Evaluate agents on a question set; every finished episode is committed as it ends."""
    from eviseek import __version__
    from eviseek.cli.errors import require_folder, resource_amounts
    from eviseek.eval.config import load_config, new_run_config, resume_config

    if backend is not None and backend not in ("local", "ray"):
        raise typer.BadParameter("--backend must be 'local' or 'ray'")
    if env_images is not None and env_images not in ("png", "raw", "jpeg"):
        raise typer.BadParameter("--env-images must be png, raw or jpeg")
    require_folder(out)
    execution: dict[str, Any] = {
        "concurrency": concurrency,
        "timeout_s": timeout,
        "backend": backend,
        "env_workers": env_workers,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "ray_address": ray_address,
        "env_url": env_url,
        "env_token_env": env_token_env,
        "env_images": env_images,
    }
    if ray_resource:
        execution["ray_actor_resources"] = resource_amounts(
            _pairs(ray_resource, "--ray-resource"), "--ray-resource"
        )
    given = {k: v for k, v in execution.items() if v is not None}
    if image_size is not None:
        given["image_size"] = parse_image_size(image_size)
    if agents is None and model is None and dataset is None:
        if not RunDir(out).exists():
            raise typer.BadParameter("give --agents, --model and --dataset (or --out an existing run)")
        config = resume_config(
            load_config(out),
            limit=limit,
            budget=budget,
            seed=seed,
            agent_config=_pairs(agent_arg, "--agent-arg"),
            model_args=_pairs(model_arg, "--model-arg"),
            plugins=_plugins(plugin),
            **given,
        )
    else:
        missing = [f for f, v in (("--agents", agents), ("--model", model), ("--dataset", dataset)) if not v]
        if missing:
            raise typer.BadParameter(f"missing {', '.join(missing)}")
        assert agents is not None and model is not None and dataset is not None
        config = new_run_config(
            agents=agents.split(","),
            agent_config=_pairs(agent_arg, "--agent-arg"),
            model=model,
            model_args=_pairs(model_arg, "--model-arg"),
            dataset=dataset,
            limit=limit,
            budget=budget,
            seed=seed,
            plugins=_plugins(plugin),
            eviseek_version=__version__,
            **given,
        )
    execute_run(config, out, progress=progress, retry_failed=retry_failed)


def execute_run(
    config: RunConfig,
    out: Path,
    *,
    progress: bool | None,
    retry_failed: bool,
    after: Callable[[EvalOutcome], None] | None = None,
) -> EvalOutcome:
    """Run (or resume) ``config`` into ``out`` with the shared runner and print its summary;
    exit 3 when episodes failed (``after`` prints more first). ``eviseek eval`` and its aliases
    (``eviseek autotool eval``) end here."""
    from eviseek.cli.errors import EXIT_FAILED_EPISODES, fail
    from eviseek.cli.models import model_kwargs
    from eviseek.cli.score import print_summary
    from eviseek.eval.envpool import import_plugins
    from eviseek.eval.runner import run_eval

    import_plugins(config.plugins)  # a plugin may register the model's provider
    from eviseek.eval.runner import check_settings

    check_settings(config)  # a bad provider, setting or agent: exit 2 before the run folder exists
    # Same checks as `eviseek models check` (the key variable must exist); never printed.
    model_kwargs(config.model, config.base_url, config.api_key_env, None)
    if config.env_url:
        from eviseek.envs.remote.client import preflight

        # A missing token, or a server that is down or refuses the token, stops the run here
        # (exit 1, one line) instead of failing every episode.
        info = preflight(config.env_url, config.env_token_env, timeout_s=min(30.0, config.timeout_s))
        if config.env_images not in info.image_encodings:
            typer.echo(
                f"note: the env server sends no {config.env_images} images (it offers "
                f"{', '.join(info.image_encodings)}); it answers in png",
                err=True,
            )
    outcome = run_eval(config, out, progress=progress, retry_failed=retry_failed, check_model=True)
    print_summary(outcome.summary)
    if after is not None:
        after(outcome)
    if outcome.recovered:
        typer.echo(
            f"note: {outcome.recovered} finished episode(s) had no row in results.sqlite; their rows "
            "were rebuilt from the saved trajectories (not run again)",
            err=True,
        )
    typer.echo(
        f"{outcome.ran} episode(s) run, {outcome.skipped} already finished, {outcome.failed} failed; "
        f"{outcome.elapsed_s:.1f}s. Results in {outcome.run_dir}"
    )
    failed = sum(a.failed for a in outcome.summary.agents)
    if failed:
        fail(failures_line(outcome.run_dir, failed, outcome.total), EXIT_FAILED_EPISODES)
    return outcome


def failures_line(run_dir: Path, failed: int, total: int, rerun: str = "rerun with --retry-failed") -> str:
    """One line on the failed episodes of a run: how many, where each reason is, the first one."""
    from eviseek.eval.store import load_results

    first = next((r for r in load_results(run_dir) if r.error is not None), None)
    example = f"; first: {first.agent}/{first.question_id}: {first.error}" if first else ""
    if len(example) > 240:
        example = example[:237] + "..."
    return (
        f"{failed} of {total} episode(s) failed, counted as incorrect; each reason is in "
        f"{run_dir}/results.sqlite and the episode's trajectory.json (`eviseek report {run_dir}` "
        f"lists them){example}. Fix the cause and {rerun}"
    )
