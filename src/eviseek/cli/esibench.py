"""``eviseek esibench``: ESI-Bench's question counts and the import of its official results."""

from __future__ import annotations

from pathlib import Path

import typer

from eviseek.cli.errors import number

app = typer.Typer(no_args_is_help=True)


@app.command("stats")
def stats(
    path: Path = typer.Argument(
        ..., help="An ESI-Bench checkout, its dataset/json_clean folder or a questions.jsonl"
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the counts as JSON"),
) -> None:
    """Questions per subcategory and family in the paper's evaluation set, beside the paper's #Q."""
    from eviseek.eval.esibench import PAPER_COUNTS, count_subcategories

    rows = count_subcategories(path)
    if as_json:
        import json

        typer.echo(json.dumps([r.model_dump() for r in rows], indent=1))
        return
    families: dict[str, list[int]] = {}
    width = max(len(f"{r.family} / {r.subcategory}") for r in rows)
    typer.echo(f"{'family / subcategory':<{width}}  records  questions  paper  excluded")
    for r in rows:
        paper = "-" if r.paper is None else str(r.paper)
        mark = "" if r.paper == r.questions else "  <- differs from the paper"
        why = ", ".join(f"{k}={v}" for k, v in sorted(r.excluded.items()))
        name = f"{r.family} / {r.subcategory}"
        typer.echo(f"{name:<{width}}  {r.records:>7}  {r.questions:>9}  {paper:>5}  {why}{mark}")
        tot = families.setdefault(r.family, [0, 0, 0])
        tot[0] += r.records
        tot[1] += r.questions
        tot[2] += r.paper or 0
    typer.echo("")
    for family, (f_recs, f_qs, f_paper) in families.items():
        typer.echo(f"{family:<{width}}  {f_recs:>7}  {f_qs:>9}  {f_paper:>5}")
    recs = sum(r.records for r in rows)
    qs = sum(r.questions for r in rows)
    paper_total = sum(r.paper or 0 for r in rows)
    typer.echo(f"{'total':<{width}}  {recs:>7}  {qs:>9}  {paper_total:>5}")
    if qs != paper_total and len(rows) == len(PAPER_COUNTS):
        typer.echo(
            f"note: {qs} questions here, {paper_total} in the paper. The paper drops 6 Unobserved Change "
            "records whose reference images fail to render; the records identify 4 of them (3 the official "
            "code skips, 1 whose render lacks a box's views). The other 2 can only be found from the image "
            "files: with the images next to the records, a blank or undecodable reference image excludes "
            "its record.",
            err=True,
        )


@app.command("prompts")
def prompts(
    path: Path = typer.Argument(..., help="An ESI-Bench checkout (its task modules supply the task text)"),
    qid: str = typer.Option(
        ..., "--id", help="The question: ESI-Bench's id (0123) or eviseek's (esibench-0123)"
    ),
    agents: list[str] = typer.Option(
        [],
        "--agent",
        help="Agent spec (repeatable); default: passive:paper, single-model, eviseek:paper",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the requests as JSON"),
) -> None:
    """The first request each agent would send on a question, without a simulator.

    Shows the system and user text (images as placeholders), the call's stage, the actions on
    offer (as the bridge offers them) and which ESI-Bench hooks supplied the task text.
    """
    from eviseek.cli.errors import BadSetting
    from eviseek.eval.esibench.prompts import UnknownQuestionError, first_requests

    try:
        question, requests = first_requests(path, qid, list(agents) or None)  # others: the boundary
    except UnknownQuestionError as exc:
        raise BadSetting(str(exc)) from None  # a wrong id is a bad value (exit 2)
    if as_json:
        import json

        typer.echo(json.dumps([r.model_dump(mode="json") for r in requests], indent=1))
        return
    typer.echo(f"question {question.id} ({question.family} / {question.subcategory}): {question.text}")
    for r in requests:
        typer.echo("")
        typer.echo(f"=== {r.agent}: first request" + (f" (stage {r.stage})" if r.stage else "") + " ===")
        if r.error:
            typer.echo(f"error: {r.error}")
        for part, where in r.hooks.items():
            typer.echo(f"task text, {part}: {where}")
        typer.echo(f"task actions: {', '.join(r.task_actions) or '(none beyond the camera)'}")
        typer.echo(f"offered actions: {', '.join(r.offered_actions)}")
        for m in r.messages:
            typer.echo(f"--- {m.role} ---")
            typer.echo(m.text)


@app.command("import")
def import_command(
    results_root: Path = typer.Argument(..., help="The official pipeline's --results-root folder"),
    questions: str = typer.Option(
        ..., "--questions", help="The ESI-Bench records answered (a checkout or json_clean)"
    ),
    out: Path = typer.Option(..., "--out", "-o", help="The eviseek run directory to create"),
    agent: str = typer.Option("esibench-official", "--agent", help="The agent name the run records"),
    step_images: list[Path] = typer.Option(
        [],
        "--step-images",
        help="A folder the step images may be copied from besides the results root: the official "
        "--step-image-root, or where its images moved (repeatable)",
    ),
    max_answer_mb: float = typer.Option(
        16.0, "--max-answer-mb", callback=number(above=0, below=1e6), help="Largest answer file, MiB"
    ),
    max_image_mb: float = typer.Option(
        32.0, "--max-image-mb", callback=number(above=0, below=1e6), help="Largest step image file, MiB"
    ),
    max_image_mpx: float = typer.Option(
        64.0,
        "--max-image-mpx",
        callback=number(above=0, below=1e6),
        help="Most pixels in one step image, in Mpx (2^20), read from its header before decoding",
    ),
) -> None:
    """Turn official ``<qid>_answer.json`` files into an eviseek run (score/report/judge/view work on it).

    A bad answer file is reported and skipped, whatever is wrong with it; the run appears at
    --out only when the import has finished."""
    from eviseek.cli.errors import fail, os_error, require_folder
    from eviseek.eval.esibench import load_with_exclusions, parse_spec
    from eviseek.eval.esibench.results import ImportLimits, MiB, import_results

    require_folder(out)
    limits = ImportLimits(
        answer_bytes=int(max_answer_mb * MiB),
        image_bytes=int(max_image_mb * MiB),
        image_pixels=max(1, int(max_image_mpx * MiB)),
    )
    try:
        path, options = parse_spec(questions.removeprefix("esibench:"))
        if "images=" not in questions:
            options.images = "skip"  # the answers are scored from text; reference images are optional
        kept, dropped = load_with_exclusions(path, options)
        report = import_results(
            results_root, kept, out, agent=agent, step_roots=step_images, excluded=dropped, limits=limits
        )
    except OSError as exc:  # a read-only or full disk: the partial import stays in <out>.importing
        fail(os_error(exc, f"write the run {out}"))
    for problem in report.problems:
        typer.echo(f"skipped {problem}", err=True)
    typer.echo(f"imported {report.imported} answer file(s) for {report.questions} question(s) into {out}")
    if report.official_skips:
        typer.echo(
            f"{len(report.official_skips)} file(s) record a question the official task skipped", err=True
        )
    if report.disagreements:
        typer.echo(
            f"note: {len(report.disagreements)} answer(s) score differently from the file's own 'correct' "
            f"(e.g. {', '.join(report.disagreements[:5])}); see docs/esibench.md",
            err=True,
        )
    if report.problems:
        typer.echo(f"{len(report.problems)} file(s) skipped (listed above)", err=True)
