"""``eviseek benchmarks``: what benchmarks are registered here, and where each comes from."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True)


@app.command("list")
def list_benchmarks(
    plugin: list[str] = typer.Option(
        [], "--plugin", help="Module or .py file to import first (it may register benchmarks); repeatable"
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON"),
) -> None:
    """List the registered benchmarks (use them as --dataset NAME:ARG): the environment their
    questions run in, their step budget, their scoring rules and the module that registered them."""
    import json
    import os

    from eviseek.eval.benchmark import benchmarks
    from eviseek.eval.envpool import import_plugins

    import_plugins([os.path.abspath(p) if p.endswith(".py") else p for p in plugin])
    rows = [
        {
            "name": b.name,
            "env_id": b.env_id,
            "budget": b.budget,
            "scoring": b.scoring if b.rules is None else " | ".join(b.rules.names),
            "report_sections": list(b.report_sections),
            "registered_by": b.origin.describe(),
            "description": b.description,
        }
        for b in benchmarks().values()
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(soft_wrap=True)
    if not console.is_terminal:
        console = Console(soft_wrap=True, width=160)
    table = Table(title="Registered benchmarks (--dataset NAME:ARG)", title_justify="left")
    for column in ("name", "environment", "budget", "scoring", "sections", "registered by"):
        table.add_column(column, justify="right" if column == "budget" else "left")
    for row in rows:
        table.add_row(
            str(row["name"]),
            str(row["env_id"] or "(each question's)"),
            str(row["budget"]),
            str(row["scoring"]),
            ", ".join(row["report_sections"]) or "-",  # type: ignore[arg-type]
            str(row["registered_by"]),
        )
    console.print(table)
