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
    if not console.is_terminal:
        console = Console(soft_wrap=True, width=140)  # a pipe or a log: do not squeeze to 80 columns
    groups = sorted(
        {g for a in summary.agents for g in getattr(a, "families" if by == "family" else "subcategories")}
    )
    # Groups as rows and agents as columns (the paper's Table 1 shape): it stays readable however
    # many families there are, where one column per family ran off an 80-column log.
    acc = Table(title="Accuracy (%)", title_justify="left")
    acc.add_column(by)
    acc.add_column("n", justify="right")
    for a in summary.agents:
        acc.add_column(a.agent, justify="right")
    for g in groups:
        tables = [a.families if by == "family" else a.subcategories for a in summary.agents]
        n = next((str(t[g].n) for t in tables if g in t), "-")
        acc.add_row(g, n, *[_pct(t[g].accuracy) if g in t else "-" for t in tables])
    first = summary.agents[0] if summary.agents else None
    acc.add_row(
        "Overall", str(first.overall.n) if first else "-", *[_pct(a.overall.accuracy) for a in summary.agents]
    )
    acc.add_row("failed episodes", "", *[str(a.failed) for a in summary.agents])
    if any(getattr(a, "missing", 0) for a in summary.agents):
        acc.add_row("missing episodes (incorrect)", "", *[str(a.missing) for a in summary.agents])
    acc.add_row("mean support", "", *[_num(a.support, 2) for a in summary.agents])
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


def print_express(rows: Any) -> None:
    """EXPRESS-Bench's table: agents as rows; C, C*, E_path (0-100) and d_T (metres), as in the paper."""
    from rich.console import Console
    from rich.table import Table

    console = Console(soft_wrap=True)
    if not console.is_terminal:
        console = Console(soft_wrap=True, width=140)
    t = Table(title="EXPRESS-Bench metrics (judge: express.jsonl)", title_justify="left")
    for col in ("agent", "n", "graded", "C", "C*", "E_path", "d_T (m)", "exact %", "path (m)"):
        t.add_column(col, justify="left" if col == "agent" else "right")
    for r in rows:
        dash = r.question_only  # a Blind system: the paper prints a dash for these columns
        t.add_row(
            r.agent,
            str(r.n),
            str(r.graded),
            "—" if dash else _num(r.C),
            _num(r.C_star),
            "—" if dash else _num(r.E_path),
            "—" if dash else _num(r.d_T, 2) + (f" (n={r.n_d_T})" if r.n_d_T < r.n else ""),
            _num(r.exact) + (f" (n={r.n_exact})" if r.n_exact else ""),
            _num(r.mean_path_m, 2),
        )
    console.print(t)
    from eviseek.eval.express.table import ended_text

    ends = Table(title="How episodes ended", title_justify="left")
    ends.add_column("agent")
    ends.add_column("ended")
    for r in rows:
        ends.add_row(r.agent, ended_text(r.ended))
    console.print(ends)
    if any(r.graded < r.n for r in rows):
        typer.echo(
            "note: C, C* and E_path cover judged episodes only; grade the rest with "
            "`eviseek judge RUN_DIR --protocol express --model ...`",
            err=True,
        )


def score(
    run_dir: Path = typer.Argument(..., help="A run directory written by eviseek eval"),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON"),
    by: str = typer.Option("family", "--by", help="Break accuracy down by 'family' or 'subcategory'"),
    rules: str | None = typer.Option(
        None,
        "--rules",
        help="Score ESI-Bench questions by this rule set: esibench:paper (app. A's normalisations) or "
        "esibench:official (the official code's rules); default: the one the run's questions record",
    ),
    rebuild: bool = typer.Option(
        False,
        "--rebuild",
        help="Write results.sqlite anew from the saved trajectories (the old file is kept aside)",
    ),
    plugin: list[str] = typer.Option(
        [],
        "--plugin",
        help="Module or .py file registering the run's benchmark, if its own moved (repeatable)",
    ),
) -> None:
    """Re-score a run from its trajectories and questions.jsonl, without re-running anything.

    Only reads the run directory (read-only storage is fine), except with --rebuild.
    """
    from eviseek.cli.errors import fail, os_error
    from eviseek.eval.scoring import rescore_run

    if by not in ("family", "subcategory"):
        raise typer.BadParameter("--by must be 'family' or 'subcategory'")
    try:
        if rebuild:
            from eviseek.eval.recover import rebuild_store

            done = rebuild_store(run_dir)
            aside = f"; the old file is kept as {done.moved_aside[0].name}" if done.moved_aside else ""
            typer.echo(
                f"rebuilt {done.path} with {done.rows} row(s) from the saved trajectories{aside}", err=True
            )
        rescored = rescore_run(run_dir, rules=rules, plugins=plugin)
    except OSError as exc:
        fail(os_error(exc, f"{'rebuild' if rebuild else 'read'} the run directory {run_dir}"))
    from eviseek.eval.express import express_rows

    rows = express_rows(run_dir)
    if as_json:
        import json

        payload = rescored.summary.model_dump(mode="json")
        if rows:
            payload["express"] = [r.model_dump(mode="json") for r in rows]
        payload["rules"] = rescored.rules
        typer.echo(json.dumps(payload, indent=2))
    else:
        print_summary(rescored.summary, by=by)
        if rows:
            print_express(rows)
        in_force = ", ".join(f"{name} ({n} question(s))" for name, n in sorted(rescored.rules.items()))
        typer.echo(f"scoring rules: {in_force}")
    print_notes(rescored, run_dir)


def print_notes(rescored: Any, run_dir: Path) -> None:
    """The notes of a re-scored run on stderr: its benchmark's (a plugin not imported or changed,
    questions recognised by content), rows read from trajectories, changed verdicts, missing files."""
    for note in rescored.notes:
        typer.echo(f"note: {note}", err=True)
    if rescored.unstored:
        where = {"missing": "there is no results.sqlite", "empty": "results.sqlite holds no row"}.get(
            rescored.store, "results.sqlite has no row for them"
        )
        typer.echo(
            f"note: {len(rescored.unstored)} finished episode(s) were read from their saved trajectories "
            f"({where}); `eviseek score {run_dir} --rebuild` writes them into the store",
            err=True,
        )
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
