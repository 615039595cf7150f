"""``eviseek house``: generate house question sets with a seed and render a question's view."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True)


@app.command("generate")
def generate(
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write questions.jsonl into"),
    seed: int = typer.Option(
        0, "--seed", min=0, help="Generator seed (house:dev uses 3000, house:test 4000)"
    ),
    n_per_kind: int = typer.Option(3, "--n-per-kind", "-n", min=1, help="Questions per kind"),
    kind: list[str] | None = typer.Option(None, "--kind", "-k", help="Only these kinds (slugs); repeatable"),
    split: str | None = typer.Option(
        None, "--split", help="Write a named split (dev or test) instead; --seed and -n are ignored"
    ),
    n_rooms: int = typer.Option(6, "--rooms", min=2, help="Rooms per house (the splits use 6)"),
    first: int | None = typer.Option(
        None, "--first", min=1, help="With --split: keep the first N questions of each kind (a sample)"
    ),
) -> None:
    """Generate house questions deterministically: the same seed and counts give identical files."""
    from eviseek.cli.errors import require_folder
    from eviseek.envs.house import generate_questions, load_split
    from eviseek.types.question_file import QUESTIONS_FILE, write_questions

    require_folder(out)
    if split is not None:
        qs = load_split(split)
        if first is not None:
            taken: dict[str, int] = {}
            kept = []
            for q in qs:
                kind_of = str(q.metadata.get("slug"))
                taken[kind_of] = taken.get(kind_of, 0) + 1
                if taken[kind_of] <= first:
                    kept.append(q)
            qs = kept
    else:
        qs = generate_questions(n_per_kind, seed, kinds=kind, n_rooms=n_rooms)
    write_questions(out, qs, image_dir=None)
    typer.echo(f"wrote {len(qs)} questions to {out / QUESTIONS_FILE}")


@app.command("render")
def render(
    question_file: Path = typer.Argument(..., help="questions.jsonl (or its directory)"),
    qid: str = typer.Option(..., "--id", help="Question id"),
    actions: str = typer.Option("", "--actions", "-a", help='e.g. "turn_left,move_forward,move_forward"'),
    out: Path = typer.Option(Path("view.png"), "--out", "-o", help="PNG file to write"),
    width: int = typer.Option(320, "--width", min=16, max=8192, help="Rendered image width in pixels"),
    height: int = typer.Option(240, "--height", min=16, max=8192, help="Rendered image height in pixels"),
    look: bool = typer.Option(False, "--look", help="Also allow look_up/look_down (ours, not the paper's)"),
) -> None:
    """Render a question's view after a sequence of actions to a PNG; print each action's feedback."""
    from eviseek.cli.tabletop import parse_actions
    from eviseek.envs.house import HouseEnv
    from eviseek.errors import SettingError
    from eviseek.types import Action
    from eviseek.types.question_file import read_questions_by_id

    if out.suffix.lower() != ".png":
        raise SettingError(f"--out {out} must name a .png file (the view is written as PNG)")
    hint = "write one with `eviseek house generate --out DIR`, or point at a run directory"
    questions = read_questions_by_id(question_file, missing_hint=hint)
    if qid not in questions:
        shown = ", ".join(list(questions)[:5])
        raise typer.BadParameter(f"no question {qid!r} in {question_file}; ids include: {shown}")
    steps = parse_actions(actions)
    env = HouseEnv(width=width, height=height, max_steps=10_000, look=look)
    try:
        obs, _ = env.reset(options={"question": questions[qid]})
        legal = [spec.name for spec in env.legal_actions()]
        unknown = [name for name, _ in steps if name not in legal]
        if unknown:
            raise SettingError(
                f"unknown action {unknown[0]!r} for question {qid}; legal actions: {', '.join(legal)}"
            )
        for name, args in steps:
            res = env.step(Action(name=name, args=args))
            obs = res.observation
            typer.echo(res.feedback.summary())
        support = env.visual_support([obs.frame_id])
        room = env.oracle.room_of_agent()
    finally:
        env.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    obs.image.to_pil().save(out)
    assert obs.pose is not None
    typer.echo(f"pose: {obs.pose.describe()} (in the {room})")
    typer.echo(f"support of this view alone: {support}")
    typer.echo(f"wrote {out}")
