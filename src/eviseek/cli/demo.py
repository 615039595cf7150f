"""``eviseek demo``: the three agents side by side on a few tabletop questions, then a report.

With no flags it needs no GPU and no API key: the model is ``reference/tabletop``, a pixel-only
reference policy (not a VLM) that plays every agent stage. ``--model openai/NAME --base-url URL``
runs the same comparison with a real vision-language model. The episodes run through the
evaluation harness, so an interrupted demo resumes where it stopped when run again with the same
``--out``, and ``eviseek report`` / ``eviseek view`` work on the folder afterwards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from eviseek.eval.benchmark import NAVIGATION_BUDGET, TABLETOP_BUDGET

DEFAULT_AGENTS = "passive,single-model,eviseek"
HOUSE_AGENTS = "blind,passive,single-model,eviseek-nav,frontier"
"""The house demo's systems: the paper's EXPRESS-Bench comparison (section 5.5)."""
ENVS = ("tabletop", "house")


def interleave(questions: list[Any]) -> list[Any]:
    """Questions reordered round-robin over subcategories (first of each, then second of each...),
    so that ``--limit N`` still shows N different kinds of question."""
    groups: dict[str, list[Any]] = {}
    for q in questions:
        groups.setdefault(q.subcategory or "", []).append(q)
    out: list[Any] = []
    depth = max((len(g) for g in groups.values()), default=0)
    for i in range(depth):
        out += [g[i] for g in groups.values() if i < len(g)]
    return out


def _default_out(model: str, env: str = "tabletop") -> Path:
    name = model.replace("/", "-").replace(":", "-")
    return Path("runs") / "demo" / (name if env == "tabletop" else f"{env}-{name}")


def _judge_house(
    run_dir: Path, model_id: str, base_url: str | None, key_env: str | None, workers: int
) -> None:
    """Grade the run's answers EXPRESS-Bench's way (resumes: graded episodes are skipped)."""
    import asyncio

    from eviseek.cli.models import model_kwargs
    from eviseek.eval.express import judge_run_express
    from eviseek.models import get_model

    judge = get_model(model_id, **model_kwargs(model_id, base_url, key_env, None))
    grades = asyncio.run(judge_run_express(run_dir, judge, concurrency=workers))
    graded = sum(1 for g in grades if g.score is not None)
    typer.echo(f"judge: {graded} new EXPRESS-Bench grade(s) from {model_id}")


# Long because Typer declares each flag as a parameter with its help text: the signature is the
# flag table (about 40 lines); the body is about 70.
def demo(
    model: str = typer.Option(
        "reference", "--model", "-m", help="reference (built-in pixel policy, not a VLM) or openai/NAME"
    ),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible server URL"),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Name of the environment variable holding the API key"
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Run directory (default runs/demo/<model>); rerunning resumes it"
    ),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Only N questions (spread over the subcategories)"
    ),
    env: str = typer.Option(
        "tabletop", "--env", help="tabletop, or house (navigation: EXPRESS-Bench's agents and metrics)"
    ),
    split: str = typer.Option("dev", "--split", help="Split to draw questions from (dev or test)"),
    agents: str | None = typer.Option(
        None, "--agents", help=f"Comma-separated agents (default {DEFAULT_AGENTS}; house: {HOUSE_AGENTS})"
    ),
    budget: int | None = typer.Option(
        None,
        "--budget",
        min=1,
        help=f"Primitive steps per episode (default {TABLETOP_BUDGET}; house: {NAVIGATION_BUDGET})",
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", "-c", min=1, help="Episodes at once (default 2 for reference, 8 for a server)"
    ),
    env_workers: int | None = typer.Option(
        None, "--env-workers", min=0, help="Simulator processes (0: threads here; default one per CPU)"
    ),
    episodes: bool = typer.Option(True, "--episodes/--no-episodes", help="Write a viewer page per episode"),
    progress: bool | None = typer.Option(
        None, "--progress/--no-progress", help="Show a progress bar (default: on in a terminal)"
    ),
) -> None:
    """Run Passive, Single-model and EviSeek on tabletop questions (or, with --env house, the
    navigation agents on house questions); print the comparison and a report path."""
    from eviseek import __version__
    from eviseek.cli.errors import EXIT_FAILED_EPISODES, EXIT_INTERRUPTED, BadSetting, fail
    from eviseek.cli.eval import failures_line
    from eviseek.cli.models import model_kwargs
    from eviseek.eval.config import RunConfig, default_budget
    from eviseek.eval.datasets import load_dataset
    from eviseek.eval.report import build_report
    from eviseek.eval.runner import run_eval
    from eviseek.models.registry import provider_of, resolve_model_id

    if env not in ENVS:
        raise BadSetting(f"unknown --env {env!r}; use one of: {', '.join(ENVS)}")
    house = env == "house"
    agents = agents or (HOUSE_AGENTS if house else DEFAULT_AGENTS)
    dataset = f"{env}:{split}"
    budget = budget or default_budget(dataset)
    model_id = resolve_model_id(model)
    run_dir = out if out is not None else _default_out(model_id, env)
    try:
        # The same checks as `eviseek models check`: a named key variable must exist (never printed).
        model_kwargs(model_id, base_url, api_key_env, None)
        provider = provider_of(model_id)
        questions = interleave(load_dataset(dataset))
        if limit is not None:
            questions = questions[:limit]
        config = RunConfig(
            agents=[a.strip() for a in agents.split(",") if a.strip()],
            model=model_id,
            # The run directory holds the chosen questions, so `eviseek eval --out DIR` resumes it too.
            dataset=str(run_dir.resolve()),
            budget=budget,
            # A model on a server overlaps its calls; a local one shares these CPUs with the envs.
            concurrency=concurrency or (8 if provider.remote else 2),
            env_workers=env_workers,
            base_url=base_url,
            api_key_env=api_key_env,
            eviseek_version=__version__,
        )
        n = len(questions) * len(config.agents)
        typer.echo(
            f"eviseek demo: {len(config.agents)} agents x {len(questions)} {env} questions "
            f"({n} episodes) with {model_id}" + ("" if provider.remote else f" - {provider.description}")
        )
        typer.echo(f"run directory: {run_dir}")
        # As `eval` does: a model server that is down or refuses the request stops the demo here
        # (one line, exit 1) instead of failing every episode.
        outcome = run_eval(config, run_dir, questions=questions, progress=progress, check_model=True)
        typer.echo(
            f"{outcome.ran} episode(s) run, {outcome.skipped} already done, {outcome.failed} failed "
            f"in {outcome.elapsed_s:.1f}s"
        )
        if house:
            # EXPRESS-Bench's metrics need the judge's grades; the same model plays the judge.
            _judge_house(run_dir, model_id, base_url, api_key_env, config.concurrency)
        files = build_report([run_dir], None, n_resamples=20_000, episodes=episodes)
    except KeyboardInterrupt:
        fail(f"interrupted; finished episodes are kept in {run_dir}. Rerun to resume.", EXIT_INTERRUPTED)
    print_comparison(files.data)
    if house:
        from eviseek.cli.score import print_express
        from eviseek.eval.express import express_rows

        print_express(express_rows(run_dir))
    typer.echo(f"HTML report: {files.html.resolve()}")
    if files.episode_pages:
        typer.echo(
            f"episode pages: {len(files.episode_pages)} under {(files.out_dir / 'episodes').resolve()}"
        )
    failed = sum(a.failed for a in outcome.summary.agents)
    if failed:  # the tables above count them as incorrect; a script must not read this as success
        rerun = f"run them again with `eviseek eval --out {run_dir} --retry-failed`"
        fail(failures_line(run_dir, failed, outcome.total, rerun), EXIT_FAILED_EPISODES)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def print_comparison(data: Any) -> None:
    """Print accuracy per family per agent, support-weighted accuracy and cost from report data."""
    from rich.console import Console
    from rich.table import Table

    console = Console(soft_wrap=True)
    if not console.is_terminal:
        console = Console(soft_wrap=True, width=140)  # a pipe or a log: do not squeeze to 80 columns
    labels = [s.label for s in data.systems]
    acc = Table(title="Accuracy by family (%)", title_justify="left")
    acc.add_column("family")
    acc.add_column("n", justify="right")
    for label in labels:
        acc.add_column(label, justify="right")
    for row in data.accuracy:
        if row.level not in ("family", "overall"):
            continue
        n = max(row.n.values(), default=0)
        style = "bold" if row.level == "overall" else None
        acc.add_row(row.name, str(n), *[_pct(row.acc.get(label)) for label in labels], style=style)
    console.print(acc)
    overall = next(r for r in data.support if r.level == "overall")
    sup = Table(
        title="Support-weighted accuracy and cost (per episode)",
        title_justify="left",
        caption="C: correct and visually supported (support-weighted accuracy); GW: supported but wrong; "
        "P: correct without support; N: neither. Support is graded exactly by the simulator.",
        caption_justify="left",
    )
    for col in ("agent", "acc", "C", "GW", "P", "N", "steps", "calls", "tokens", "answer imgs", "wall s"):
        sup.add_column(col, justify="left" if col == "agent" else "right")
    accuracy = next((r for r in data.accuracy if r.level == "overall"), None)
    for label in labels:
        d = overall.parts.get(label)
        u = data.resources.get(label)
        sup.add_row(
            label,
            _pct(accuracy.acc.get(label) if accuracy else None),
            *[_pct(getattr(d, k)) if d is not None else "-" for k in ("C", "GW", "P", "N")],
            *(
                [
                    _pct(u.steps),
                    _pct(u.calls),
                    "-" if u.tokens is None else f"{u.tokens:.0f}",
                    _pct(u.images),
                    "-" if u.wall_time_s is None else f"{u.wall_time_s:.2f}",
                ]
                if u is not None
                else ["-"] * 5
            ),
        )
    console.print(sup)
