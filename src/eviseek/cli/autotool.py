"""``eviseek autotool``: run a dual-mode zoom-in model on a high-resolution benchmark.

``eviseek autotool eval`` is a thin alias of ``eviseek eval --agents autotool``: it turns its
flags into the same :class:`~eviseek.eval.config.RunConfig` and runs it with the shared runner.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from eviseek.cli.errors import POSITIVE, number

if TYPE_CHECKING:
    from eviseek.autotool.metrics import EvalSummary
    from eviseek.eval.config import RunConfig
    from eviseek.eval.runner import EvalOutcome

app = typer.Typer(no_args_is_help=True)


@app.command("eval")
# Long because Typer declares each flag as a parameter with its help text: the signature is the
# flag table (about 50 lines); the body is about 60.
def eval_cmd(
    model: str = typer.Option(..., "--model", "-m", help="provider/name, e.g. openai/Qwen2.5-VL-7B-Instruct"),
    dataset: str = typer.Option(
        ...,
        "--dataset",
        "-d",
        help="NAME:PATH with NAME in vstar, hrbench4k, hrbench8k, pope, refcoco, refcoco+, refcocog, "
        "mathvista, mathverse, mathvision, wemath, dynamath, logicvista; or synthetic:N[:WIDTH]",
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N questions"),
    out: Path | None = typer.Option(None, "--out", help="Run directory (default runs/autotool-<dataset>)"),
    force_mode: str | None = typer.Option(
        None, "--force-mode", help="tool_on or tool_off: pin the mode instead of letting the model choose"
    ),
    vstar_shuffle: bool = typer.Option(
        True,
        "--vstar-shuffle/--no-vstar-shuffle",
        help="Shuffle V*'s options with --seed (default on: the source lists the correct one first)",
    ),
    force_how: str = typer.Option(
        "token", "--force-how", help="token (append the mode token) or instruction"
    ),
    max_turns: int = typer.Option(5, "--max-turns", min=1, help="Model calls per question"),
    max_pixels: int = typer.Option(
        1280 * 28 * 28, "--max-pixels", min=784, help="Pixel cap of the shown image"
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for option shuffling and sampling"),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Questions at once"),
    temperature: float = typer.Option(
        0.0, "--temperature", callback=number(at_least=0), help="Sampling temperature"
    ),
    max_tokens: int = typer.Option(2048, "--max-tokens", min=1, help="Reply length cap per model call"),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible server URL"),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Name of the environment variable holding the API key"
    ),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        callback=POSITIVE,
        help="openai/ only: seconds per model request (episodes time out after 600 s)",
    ),
    image_format: str = typer.Option(
        "png", "--image-format", help="openai/ only: png (lossless) or jpeg (tens of times faster to encode)"
    ),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run failed episodes again"),
    progress: bool | None = typer.Option(
        None, "--progress/--no-progress", help="Show a progress bar (default: on in a terminal)"
    ),
) -> None:
    """Evaluate a model with AutoTool's protocol; print accuracy, tool-on share, calls, tokens, latency.

    An alias of ``eviseek eval --agents autotool``: the same run directory, resume, lock, failure
    handling, exit codes (1 error, 2 bad flag, 3 failed episodes) and ``eviseek report``.
    """
    from eviseek.cli.errors import require_folder
    from eviseek.cli.eval import cli_errors, execute_run
    from eviseek.eval.config import new_run_config

    if force_mode not in (None, "tool_on", "tool_off"):
        typer.echo(f"error: --force-mode must be tool_on or tool_off, not {force_mode!r}", err=True)
        raise typer.Exit(2)
    if force_how not in ("token", "instruction"):
        typer.echo(f"error: --force-how must be token or instruction, not {force_how!r}", err=True)
        raise typer.Exit(2)
    run_dir = out or Path("runs") / f"autotool-{dataset.split(':', 1)[0]}"
    require_folder(run_dir)
    agent_config: dict[str, Any] = {
        "max_turns": max_turns,
        "force_mode": force_mode,
        "force_how": force_how,
        "max_pixels": max_pixels,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "seed": seed,
    }
    from eviseek.models.registry import provider_of

    with cli_errors(run_dir):
        model_args: dict[str, Any] = {}
        provider = provider_of(model)
        if provider.accepts("max_pixels") and provider.accepts("image_format"):
            # The env already caps the shown image; the provider must not shrink it again, or the
            # model's box coordinates would refer to a frame the program does not know.
            model_args.update(max_pixels=max_pixels, image_format=image_format)
        if provider.remote and timeout is not None:
            model_args["timeout_s"] = timeout  # the provider's per-request timeout
        config = new_run_config(
            agents=["autotool"],
            agent_config=agent_config,
            model=model,
            model_args=model_args,
            dataset=dataset_spec(dataset, seed=seed, vstar_shuffle=vstar_shuffle),
            limit=limit,
            budget=max_turns,
            seed=seed,
            concurrency=concurrency,
            base_url=base_url,
            api_key_env=api_key_env,
        )

    def autotool_table(outcome: EvalOutcome) -> None:
        summary = write_summary(outcome.run_dir, config)
        typer.echo(summary.table())
        typer.echo(
            json.dumps({"accuracy": summary.overall.accuracy, "tool_on_share": summary.overall.tool_on_share})
        )

    execute_run(config, run_dir, progress=progress, retry_failed=retry_failed, after=autotool_table)


SUMMARY_FILE = "autotool_summary.json"


def dataset_spec(dataset: str, *, seed: int, vstar_shuffle: bool) -> str:
    """The harness's dataset spec for ``--dataset``, ``--seed`` and ``--vstar-shuffle``: V*'s option
    shuffle and the synthetic images take the run's seed, as this command always did."""
    name = dataset.split(":", 1)[0].lower()
    options = []
    if name == "vstar" and not vstar_shuffle:
        options.append("shuffle=off")
    if name in ("vstar", "synthetic") and seed != 0 and "?" not in dataset:
        options.append(f"seed={seed}")
    if not options:
        return dataset
    return dataset + ("&" if "?" in dataset else "?") + "&".join(options)


def write_summary(run_dir: Path, config: RunConfig) -> EvalSummary:
    """Compute the run's AutoTool metrics and save them as ``RUN_DIR/autotool_summary.json``."""
    from eviseek.autotool.metrics import summarize
    from eviseek.eval.store import load_results
    from eviseek.types.question_file import read_questions

    questions = read_questions(run_dir)
    wanted = {q.id for q in questions}
    rows = [r for r in load_results(run_dir) if r.agent == "autotool" and r.question_id in wanted]
    summary = summarize(rows, questions, model=config.model, dataset=config.dataset)
    (run_dir / SUMMARY_FILE).write_text(summary.model_dump_json(indent=1), encoding="utf-8")
    return summary
