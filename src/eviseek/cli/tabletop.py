"""``eviseek tabletop``: generate question sets, render views for debugging, report first-view support."""

from __future__ import annotations

import re
from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True)

_ACTION = re.compile(r"^\s*([a-z_]+)\s*(?:\((.*)\))?\s*$")


def parse_actions(text: str) -> list[tuple[str, dict[str, str]]]:
    """Parse ``"turn_left,move_up,pick_up(object=red_cube)"`` into (name, args) pairs.

    Commas inside parentheses separate arguments, not actions.
    """
    items: list[str] = []
    depth = 0
    cur = ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        items.append(cur)
    out = []
    for item in items:
        if not item.strip():
            continue
        m = _ACTION.match(item)
        if not m:
            raise typer.BadParameter(
                f"cannot read action {item!r}; write e.g. turn_left or put_on(object=a, target=b)"
            )
        args: dict[str, str] = {}
        if m.group(2):
            for part in m.group(2).split(","):
                if "=" not in part:
                    raise typer.BadParameter(
                        f"argument {part.strip()!r} in {item!r} needs the form key=value"
                    )
                k, v = part.split("=", 1)
                args[k.strip()] = v.strip()
        out.append((m.group(1), args))
    return out


@app.command("generate")
def generate(
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write questions.jsonl and images/ into"),
    n_per_subcategory: int = typer.Option(
        2, "--n-per-subcategory", "-n", min=1, help="Questions per subcategory"
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Generator seed (the dev split uses 1000, test 2000)"),
    subcategory: list[str] | None = typer.Option(
        None, "--subcategory", "-s", help="Only these subcategories (slug or name); repeatable"
    ),
    width: int = typer.Option(320, "--width", min=16, max=8192, help="Rendered image width in pixels"),
    height: int = typer.Option(240, "--height", min=16, max=8192, help="Rendered image height in pixels"),
) -> None:
    """Generate questions deterministically: same seed and counts give identical files."""
    from eviseek.cli.errors import require_folder
    from eviseek.envs.tabletop.generate import generate_questions
    from eviseek.types.question_file import GENERATED_IMAGE_DIR, QUESTIONS_FILE, write_questions

    require_folder(out)
    qs = generate_questions(n_per_subcategory, seed, subcategories=subcategory, width=width, height=height)
    write_questions(out, qs, image_dir=GENERATED_IMAGE_DIR)
    typer.echo(f"wrote {len(qs)} questions to {out / QUESTIONS_FILE}")


@app.command("render")
def render(
    question_file: Path = typer.Argument(..., help="questions.jsonl (or its directory)"),
    qid: str = typer.Option(..., "--id", help="Question id"),
    actions: str = typer.Option(
        "", "--actions", "-a", help='e.g. "turn_left,move_up,pick_up(object=red_cube)"'
    ),
    out: Path = typer.Option(Path("view.png"), "--out", "-o", help="PNG file to write"),
    width: int = typer.Option(320, "--width", min=16, max=8192, help="Rendered image width in pixels"),
    height: int = typer.Option(240, "--height", min=16, max=8192, help="Rendered image height in pixels"),
) -> None:
    """Render a question's view after a sequence of actions to a PNG; print each action's feedback.

    When the last action rendered frames on the way (a slide), they are written beside the PNG as
    ``<name>-frame<k>.png``, oldest first."""
    from eviseek.envs.tabletop.env import TabletopEnv
    from eviseek.errors import SettingError
    from eviseek.types import Action
    from eviseek.types.question_file import read_questions_by_id

    if out.suffix.lower() != ".png":
        raise SettingError(f"--out {out} must name a .png file (the view is written as PNG)")
    questions = read_questions_by_id(question_file)
    if qid not in questions:
        shown = ", ".join(list(questions)[:5])
        raise typer.BadParameter(f"no question {qid!r} in {question_file}; ids include: {shown}")
    steps = parse_actions(actions)
    env = TabletopEnv(width=width, height=height, max_steps=10_000)
    obs, _ = env.reset(options={"question": questions[qid]})
    legal = [spec.name for spec in env.legal_actions()]
    unknown = [name for name, _ in steps if name not in legal]
    if unknown:
        env.close()
        raise SettingError(
            f"unknown action {unknown[0]!r} for question {qid}; legal actions: {', '.join(legal)}"
        )
    for name, args in steps:
        res = env.step(Action(name=name, args=args))
        obs = res.observation
        # The summary starts with the operation's name; add the call only when it says more.
        call, summary = Action(name=name, args=args).text(), res.feedback.summary()
        typer.echo(summary if call == res.feedback.operation else f"{call} -> {summary}")
    support = env.visual_support([obs.frame_id])
    motion = obs.action_frames
    env.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    obs.image.to_pil().save(out)
    for k, frame in enumerate(motion, 1):
        path = out.with_name(f"{out.stem}-frame{k}{out.suffix or '.png'}")
        frame.image.to_pil().save(path)
        typer.echo(f"wrote {path} (frame {k} of {len(motion) + 1} of the last action, id {frame.frame_id})")
    assert obs.pose is not None
    typer.echo(f"pose: {obs.pose.describe()}")
    typer.echo(f"support of this view alone: {support}")
    typer.echo(f"wrote {out}")


@app.command("stats")
def stats(
    split: str | None = typer.Option(None, "--split", help="dev or test (or give --questions)"),
    questions: Path | None = typer.Option(
        None, "--questions", "-q", help="questions.jsonl instead of a split"
    ),
) -> None:
    """Per subcategory: the share of questions whose initial view already has full support."""
    from eviseek.envs.tabletop.generate import load_split
    from eviseek.envs.tabletop.stats import initial_support_table
    from eviseek.types.question_file import read_questions

    if (split is None) == (questions is None):
        raise typer.BadParameter("give exactly one of --split or --questions")
    qs = load_split(split) if split is not None else read_questions(questions)  # type: ignore[arg-type]
    rows = initial_support_table(qs)
    typer.echo(f"{'subcategory':<28} {'n':>4} {'full':>6} {'mean':>6}")
    for r in rows:
        typer.echo(f"{r.subcategory:<28} {r.n:>4} {r.full_share:>6.2f} {r.mean_support:>6.2f}")


@app.command("families")
def families() -> None:
    """List the task families and subcategories."""
    from eviseek.envs.tabletop.families import all_families

    for fam in all_families():
        typer.echo(f"{fam.slug:<28} {fam.family} / {fam.subcategory}")
