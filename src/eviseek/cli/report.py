"""``eviseek report``: the paper's tables, figures and per-episode CSV from run directories."""

from __future__ import annotations

from pathlib import Path

import typer

from eviseek.cli.errors import number
from eviseek.eval.config import PAPER_SEED


def report(
    run_dirs: list[Path] = typer.Argument(..., help="One or more run directories written by `eviseek eval`."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Output folder (default RUN_DIR/report; required for several runs)."
    ),
    resamples: int = typer.Option(
        200_000, "--resamples", min=1, help="Paired-bootstrap resamples per comparison."
    ),
    seed: int = typer.Option(
        PAPER_SEED, "--seed", help="Seed of the paired bootstrap (default: the paper's, 20261012)."
    ),
    compare: str = typer.Option(
        "paper",
        "--compare",
        help="The comparisons Holm-corrected together: 'paper' (EviSeek against each baseline per run, "
        "the paper's family), 'all' (every pair of agents in a run and each agent across runs) or "
        "pairs of system labels written A:B,C:D (A minus B).",
    ),
    confidence: float = typer.Option(
        0.95, "--confidence", callback=number(above=0, below=1), help="Confidence level of the intervals."
    ),
    episodes: bool = typer.Option(
        True, "--episodes/--no-episodes", help="Write one viewer page per episode and link to it."
    ),
    plugin: list[str] = typer.Option(
        [],
        "--plugin",
        help="Module or .py file registering a run's benchmark, if its own moved (repeatable)",
    ),
) -> None:
    """Write index.html (self-contained), report.md, results.csv and summary.json."""
    from eviseek.cli.errors import EXIT_USAGE, fail, os_error, require_folder
    from eviseek.errors import SettingError
    from eviseek.eval.families import CompareError
    from eviseek.eval.report import build_report

    require_folder(out)
    try:
        files = build_report(
            run_dirs,
            out,
            n_resamples=resamples,
            seed=seed,
            confidence=confidence,
            episodes=episodes,
            compare=compare,
            plugins=plugin,
        )
    except (CompareError, SettingError) as exc:  # a wrong --compare, a benchmark's missing plugin
        fail(str(exc), EXIT_USAGE)
    except (FileNotFoundError, ValueError) as exc:  # what load_run raises for a missing run
        fail(str(exc))
    except OSError as exc:  # a read-only run directory, a full disk
        target = out or (run_dirs[0] / "report")
        fail(os_error(exc, f"write the report to {target}") + " (pass --out FOLDER)")
    overall = next(r for r in files.data.accuracy if r.level == "overall")
    for label, acc in overall.acc.items():
        shown = "n/a" if acc is None else f"{acc:.1f}%"
        typer.echo(f"{label:<40} accuracy {shown} over {overall.n[label]} questions")
    settings = files.data.settings
    typer.echo(
        f"paired comparisons: {len(files.data.comparisons)}, Holm family {settings['family']} "
        f"({settings['family_description']}), bootstrap seed {settings['seed']}"
    )
    for note in files.data.warnings:
        typer.echo(f"note: {note}")
    typer.echo(f"report:  {files.html}")
    typer.echo(f"markdown: {files.markdown}")
    typer.echo(f"csv:     {files.csv}")
    if files.episode_pages:
        typer.echo(f"episode pages: {len(files.episode_pages)} under {files.out_dir / 'episodes'}")
