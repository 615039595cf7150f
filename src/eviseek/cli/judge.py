"""``eviseek judge``: grade the visual support of a run's answers with an LLM judge.

Grades go to ``RUN_DIR/support.jsonl`` (re-running resumes); ``eviseek report`` then shows the
C/GW/P/N decomposition for episodes whose environment gave no exact support grade.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from eviseek.cli.errors import POSITIVE
from eviseek.types.rundir import RunDir

if TYPE_CHECKING:
    from eviseek.eval.express import JudgePrompt


# Long because Typer declares each flag as a parameter with its help text: the signature is the
# flag table (about 55 lines); the body is about 40.
def judge(
    run_dir: Path = typer.Argument(..., help="A run directory written by `eviseek eval`."),
    model: str = typer.Option(..., "--model", "-m", help="Judge model, provider/name, e.g. openai/gpt-5.5"),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible server URL"),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Name of the environment variable holding the API key"
    ),
    agents: str | None = typer.Option(
        None, "--agents", help="Comma-separated agents to grade (default: all)"
    ),
    concurrency: int = typer.Option(4, "--concurrency", "-c", min=1, help="Judge requests at once"),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Grade again episodes that already have a grade"
    ),
    save_inputs: bool = typer.Option(
        True, "--save-inputs/--no-save-inputs", help="Keep the numbered images sent, under RUN_DIR/judge/"
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", callback=POSITIVE, help="Seconds per judge request"
    ),
    model_arg: list[str] = typer.Option(
        [],
        "--model-arg",
        help="Provider argument KEY=VALUE (repeatable). The paper's judge: api=responses and "
        "reasoning_effort=low. openai/ judges get image_format=jpeg, jpeg_quality=90 by default.",
    ),
    protocol: str = typer.Option(
        "support",
        "--protocol",
        help="support: visual support of the answer-time images (appendix B, to support.jsonl); "
        "express: EXPRESS-Bench's grounding 0/0.5/1 and answer score 1-5 from the last image "
        "(to express.jsonl; `eviseek score` then shows C, C*, E_path and d_T)",
    ),
    express_root: Path | None = typer.Option(
        None,
        "--express-root",
        help="With --protocol express: the root of your EXPRESS-Bench checkout; its own judge prompt "
        "(prompt/evaluation.txt) is used. Without it, eviseek's prompt. Each grade names the prompt.",
    ),
) -> None:
    """Grade each episode's answer-time images 1 / 0.5 / 0 without showing the judge the prediction
    (or, with --protocol express, grade its answer EXPRESS-Bench's way)."""
    import asyncio

    from eviseek.cli.errors import EXIT_ERROR, BadSetting, fail
    from eviseek.cli.eval import _pairs
    from eviseek.cli.models import model_kwargs
    from eviseek.eval.judge import judge_model_args, judge_run
    from eviseek.models import get_model

    chosen = [a.strip() for a in agents.split(",") if a.strip()] if agents else None
    if protocol not in ("support", "express"):
        raise BadSetting(f"unknown --protocol {protocol!r}; use 'support' or 'express'")
    if express_root is not None and protocol != "express":
        raise BadSetting("--express-root applies to --protocol express only")
    if protocol == "express":
        from eviseek.eval.express import load_express_prompt

        # Read before any grading: a missing checkout (exit 1) or a prompt file that does not
        # parse (exit 2) stops the command with one line, and nothing is graded.
        prompt = load_express_prompt(express_root) if express_root is not None else None
        _judge_express(run_dir, model, base_url, api_key_env, timeout, chosen, concurrency, overwrite, prompt)
        return
    try:
        settings = judge_model_args(model, _pairs(model_arg, "--model-arg"))
        m = get_model(model, **model_kwargs(model, base_url, api_key_env, timeout), **settings)
        grades = asyncio.run(
            judge_run(
                run_dir,
                m,
                agents=chosen,
                concurrency=concurrency,
                overwrite=overwrite,
                save_inputs=save_inputs,
            )
        )
    except BadSetting:
        raise  # a bad flag: the boundary exits 2
    except (FileNotFoundError, ValueError) as exc:  # what load_run raises for a missing run
        fail(str(exc), EXIT_ERROR)
    graded = [g for g in grades if g.grade is not None]
    failed = [g for g in grades if g.grade is None]
    counts = {v: sum(1 for g in graded if g.grade == v) for v in (1.0, 0.5, 0.0)}
    typer.echo(
        f"graded {len(graded)} episode(s): {counts[1.0]} x 1, {counts[0.5]} x 0.5, {counts[0.0]} x 0"
        + (f"; {len(failed)} without a usable grade (run again to retry)" if failed else "")
    )
    typer.echo(f"grades:  {RunDir(run_dir).support_file}")


def _judge_express(
    run_dir: Path,
    model: str,
    base_url: str | None,
    api_key_env: str | None,
    timeout: float | None,
    agents: list[str] | None,
    concurrency: int,
    overwrite: bool,
    prompt: JudgePrompt | None,
) -> None:
    import asyncio

    from eviseek.cli.errors import EXIT_ERROR, BadSetting, fail
    from eviseek.cli.models import model_kwargs
    from eviseek.eval.express import judge_run_express
    from eviseek.models import get_model

    try:
        m = get_model(model, **model_kwargs(model, base_url, api_key_env, timeout))
        grades = asyncio.run(
            judge_run_express(
                run_dir, m, agents=agents, concurrency=concurrency, overwrite=overwrite, prompt=prompt
            )
        )
    except BadSetting:
        raise  # a bad flag: the boundary exits 2
    except (FileNotFoundError, ValueError) as exc:  # what load_run raises for a missing run
        fail(str(exc), EXIT_ERROR)
    graded = [g for g in grades if g.score is not None]
    failed = len(grades) - len(graded)
    typer.echo(
        f"graded {len(graded)} episode(s) EXPRESS-Bench's way"
        + (f"; {failed} without a usable grade (run again to retry)" if failed else "")
    )
    used = (
        f"EXPRESS-Bench's ({prompt.path}, sha256 {prompt.sha256[:12]})"
        if prompt is not None
        else "eviseek's (no --express-root)"
    )
    typer.echo(f"judge prompt: {used}")
    typer.echo(f"grades:  {RunDir(run_dir).express_file}")
