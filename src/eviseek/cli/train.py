"""``eviseek train``: training jobs (AutoTool GRPO with TRL on one machine).

Only light imports here; the trainer loads torch, transformers and TRL when a command runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True)


def _parse_set(items: list[str]) -> dict[str, object]:
    """``--set grpo.max_steps=2`` items as dotted overrides (values read as JSON when they parse)."""
    from eviseek.errors import ConfigError

    out: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {item!r} must look like key.sub=value, e.g. --set grpo.max_steps=2")
        try:
            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


@app.command("autotool")
def autotool(
    config: Path = typer.Option(..., "--config", "-c", help="YAML or JSON training config (see examples/)."),
    output_dir: Path | None = typer.Option(None, "--output-dir", "-o", help="Override output_dir."),
    max_steps: int | None = typer.Option(None, "--max-steps", min=1, help="Override grpo.max_steps."),
    set_: list[str] = typer.Option(
        [], "--set", help="Override any setting: --set grpo.learning_rate=1e-6 (repeatable)."
    ),
    preset: str | None = typer.Option(
        None,
        "--preset",
        help="A row of the paper's component table or an ablation (text_only, always_tool, fixed_ratio, "
        "penalty, release, autotool, no_amb, no_penalty), applied before --set.",
    ),
    check: bool = typer.Option(False, "--check", help="Validate the config, print it and exit."),
    no_save: bool = typer.Option(False, "--no-save", help="Do not write the trained model."),
) -> None:
    """Train an AutoTool policy with GRPO (TRL): zoom tool in the rollouts, MSPO rewards, AMB."""
    from eviseek.cli.errors import EXIT_ERROR, BadSetting, fail
    from eviseek.errors import EviseekError
    from eviseek.train.autotool_config import load_config

    if not Path(config).is_file():  # a missing file is a missing resource (1), not a bad value (2)
        fail(f"config file {config} does not exist", EXIT_ERROR)
    try:
        overrides = _parse_set(set_)
        if output_dir is not None:
            overrides["output_dir"] = str(output_dir)
        if max_steps is not None:
            overrides["grpo.max_steps"] = max_steps
        cfg = load_config(config, overrides, preset=preset)
    except EviseekError as exc:  # the config file or a --set/--preset is wrong: a usage error (2)
        raise BadSetting(str(exc)) from exc
    if check:
        typer.echo(cfg.model_dump_json(indent=2))
        return
    from eviseek.train.trl_autotool import train_autotool

    summary = train_autotool(cfg, save=not no_save)  # errors while training exit 1, as in eval
    typer.echo(
        f"trained {summary.steps} GRPO steps in {summary.train_seconds:.1f} s "
        f"({summary.seconds_per_step:.2f} s/step); zoom calls {summary.tool_calls}, "
        f"crops returned {summary.tool_crops_returned}, crops in completions {summary.crops_in_completions}"
    )
    last = summary.amb_history[-1] if summary.amb_history else None
    if last is not None:
        typer.echo(
            f"AMB at step {last['step']}: ratio_on={last['ratio_on']} lambda_on={last['lambda_on']:.3f} "
            f"lambda_off={last['lambda_off']:.3f} released={last['released']}"
        )
    typer.echo(f"summary: {Path(summary.output_dir) / 'summary.json'}")
