"""``eviseek score RUN_DIR``: re-score a finished (or partial) run offline, from its saved files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer


def _pct(x: float) -> str:
    return "-" if x != x else f"{100 * x:.1f}"  # NaN for an empty group


def _num(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def print_summary(summary: Any, *, by: str = "family") -> None:
    """Print per-agent accuracy (overall and per family or subcategory) and mean cost tables."""
    from rich.console import Console
    from rich.table import Table

    console = Console(soft_wrap=True)
    groups = sorted(
        {g for a in summary.agents for g in getattr(a, "families" if by == "family" else "subcategories")}
    )
    acc = Table(title="Accuracy (%)", title_justify="left")
    acc.add_column("agent")
    acc.add_column("n", justify="right")
    acc.add_column("overall", justify="right")
    for g in groups:
        acc.add_column(g, justify="right")
    acc.add_column("failed", justify="right")
    acc.add_column("support", justify="right")
    for a in summary.agents:
        table = a.families if by == "family" else a.subcategories
        cells = [_pct(table[g].accuracy) if g in table else "-" for g in groups]
        acc.add_row(
            a.agent, str(a.overall.n), _pct(a.overall.accuracy), *cells, str(a.failed), _num(a.support, 2)
        )
    console.print(acc)
    cost = Table(title="Mean cost per episode", title_justify="left")
    for col in (
        "agent",
        "steps",
        "calls",
        "input tok",
        "output tok",
        "reasoning tok",
        "answer images",
        "wall s",
    ):
        cost.add_column(col, justify="left" if col == "agent" else "right")
    for a in summary.agents:
        c = a.cost
        cost.add_row(
            a.agent,
            _num(c.steps),
            _num(c.calls),
            _num(c.input_tokens, 0),
            _num(c.output_tokens, 0),
            _num(c.reasoning_tokens, 0),
            _num(c.images_in_answer),
            _num(c.wall_time_s, 2),
        )
    console.print(cost)


def score(
    run_dir: Path = typer.Argument(..., help="A run directory written by eviseek eval"),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON"),
    by: str = typer.Option("family", "--by", help="Break accuracy down by 'family' or 'subcategory'"),
) -> None:
    """Re-score a run from its trajectories and questions.jsonl, without re-running anything."""
    from eviseek.errors import EviseekError
    from eviseek.eval.scoring import rescore_run

    if by not in ("family", "subcategory"):
        raise typer.BadParameter("--by must be 'family' or 'subcategory'")
    try:
        rescored = rescore_run(run_dir)
    except EviseekError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(rescored.summary.model_dump_json(indent=2))
    else:
        print_summary(rescored.summary, by=by)
    if rescored.changed:
        typer.echo(
            f"note: {len(rescored.changed)} episode(s) score differently from the live run "
            f"(the scorer changed since): {', '.join(rescored.changed[:10])}",
            err=True,
        )
    if rescored.missing:
        typer.echo(
            f"note: {len(rescored.missing)} trajectory file(s) are missing; their stored results were used",
            err=True,
        )
