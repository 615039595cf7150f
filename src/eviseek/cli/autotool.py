"""``eviseek autotool``: run a dual-mode zoom-in model on a high-resolution benchmark."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True)


@app.command("eval")
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
    temperature: float = typer.Option(0.0, "--temperature", help="Sampling temperature"),
    max_tokens: int = typer.Option(2048, "--max-tokens", min=1, help="Reply length cap per model call"),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible server URL"),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Name of the environment variable holding the API key"
    ),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds per model request"),
    image_format: str = typer.Option(
        "png", "--image-format", help="openai/ only: png (lossless) or jpeg (tens of times faster to encode)"
    ),
) -> None:
    """Evaluate a model with AutoTool's protocol; print accuracy, tool-on share, calls, tokens, latency."""
    from eviseek.autotool.evaluate import AutoToolEvalConfig, run_eval
    from eviseek.cli.models import model_kwargs
    from eviseek.errors import EviseekError
    from eviseek.models import get_model

    if force_mode not in (None, "tool_on", "tool_off"):
        typer.echo(f"error: --force-mode must be tool_on or tool_off, not {force_mode!r}", err=True)
        raise typer.Exit(2)
    if force_how not in ("token", "instruction"):
        typer.echo(f"error: --force-how must be token or instruction, not {force_how!r}", err=True)
        raise typer.Exit(2)
    run_dir = out or Path("runs") / f"autotool-{dataset.split(':', 1)[0]}"
    agent_config = {
        "max_turns": max_turns,
        "force_mode": force_mode,
        "force_how": force_how,
        "max_pixels": max_pixels,
        "generate": {"temperature": temperature, "max_tokens": max_tokens, "seed": seed},
    }
    done = {"n": 0}

    def progress(result) -> None:  # type: ignore[no-untyped-def]
        done["n"] += 1
        mark = "error" if result.error else ("ok" if result.correct else "wrong")
        typer.echo(f"[{done['n']}] {result.question_id}: {result.mode or '-'} {mark}", err=True)

    try:
        cfg = AutoToolEvalConfig(
            model=model,
            dataset=dataset,
            limit=limit,
            seed=seed,
            shuffle_vstar=vstar_shuffle,
            agent_config=agent_config,
            budget=max_turns,
            concurrency=concurrency,
            base_url=base_url,
            api_key_env=api_key_env,
        )
        kwargs = model_kwargs(model, base_url, api_key_env, timeout)
        if model.startswith("openai/"):
            # The env already caps the shown image; the provider must not shrink it again, or the
            # model's box coordinates would refer to a frame the program does not know.
            kwargs["max_pixels"] = max_pixels
            kwargs["image_format"] = image_format
        m = get_model(model, **kwargs)
        summary = asyncio.run(run_eval(cfg, run_dir, m, on_episode=progress))
    except (EviseekError, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(summary.table())
    typer.echo(f"run directory: {run_dir}")
    typer.echo(
        json.dumps({"accuracy": summary.overall.accuracy, "tool_on_share": summary.overall.tool_on_share})
    )
