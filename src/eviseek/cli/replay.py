"""``eviseek replay``: answer-only replays of a run's EviSeek episodes (the paper's memory ablations)."""

from __future__ import annotations

from pathlib import Path

import typer


def replay(
    run_dir: Path = typer.Argument(
        ..., help="A run directory written by `eviseek eval` with EviSeek episodes."
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Run directory for the replays (created, or resumed)."),
    variants: str = typer.Option(
        "board,no_board,no_selective_retention",
        "--variants",
        help="Answer memories to replay: board (the reference), no_board (Single-model's memory), "
        "no_selective_retention (frames sampled evenly).",
    ),
    model: str | None = typer.Option(
        None, "--model", "-m", help="provider/name of the answering model (default: the run's own)"
    ),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible server URL"),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Name of the environment variable holding the API key"
    ),
    model_arg: list[str] = typer.Option([], "--model-arg", help="Provider argument KEY=VALUE (repeatable)"),
    agent: str = typer.Option("eviseek", "--agent", help="Whose recorded episodes to replay"),
    concurrency: int = typer.Option(4, "--concurrency", "-c", min=1, help="Answering calls at once"),
    plugin: list[str] = typer.Option(
        [],
        "--plugin",
        help="Module or .py file registering the run's benchmark, if its own moved (repeatable)",
    ),
) -> None:
    """Re-ask only the answering call of every recorded episode, once per memory variant; then
    `eviseek report OUT` shows each variant's accuracy change against the board replay."""
    import asyncio

    from eviseek.cli.eval import _pairs
    from eviseek.cli.models import model_kwargs
    from eviseek.eval.replay import parse_variants, recorded_model, replay_run
    from eviseek.models import get_model

    # What goes wrong is the boundary's to report (eviseek.cli.errors): a bad flag exits 2, a
    # missing run 1.
    chosen = parse_variants(variants)
    recorded: dict[str, object] = {}
    if model is None:
        model, recorded = recorded_model(run_dir)
        base_url = base_url or recorded.get("base_url")  # type: ignore[assignment]
        api_key_env = api_key_env or recorded.get("api_key_env")  # type: ignore[assignment]
        typer.echo(f"answering with the run's own model, {model}", err=True)
    kwargs = model_kwargs(model, base_url, api_key_env, None)
    kwargs.update(dict(recorded.get("model_args") or {}))  # type: ignore[call-overload]
    kwargs.update(_pairs(model_arg, "--model-arg"))
    m = get_model(model, **kwargs)
    written = asyncio.run(
        replay_run(run_dir, out, m, chosen, agent=agent, concurrency=concurrency, plugins=plugin)
    )
    typer.echo(f"replayed {len(written)} answer(s) into {out} (variants: {', '.join(chosen)})")
    typer.echo(f"next: eviseek report {out}")
