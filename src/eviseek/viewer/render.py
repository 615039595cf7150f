"""Write episode pages and a run's viewer to disk.

``write_episode_page`` turns one saved episode (``trajectory.json`` plus its ``images/``) into
one self-contained HTML page; ``write_run_viewer`` does it for every episode of a run directory
(``RUN_DIR/episodes/<agent>/<question_id>/``), writing ``RUN_DIR/report/episodes/<agent>/
<question_id>.html`` and an index of them at ``RUN_DIR/report/episodes/index.html``.
"""

from __future__ import annotations

import functools
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from eviseek._version import __version__
from eviseek.errors import ConfigError
from eviseek.types import Question, Trajectory
from eviseek.types.question_file import QUESTIONS_FILE, read_questions_by_id
from eviseek.types.reading import MAX_TRAJECTORY_BYTES, read_text_capped
from eviseek.types.rundir import EPISODES_DIR, TRAJECTORY_FILE, RunDir, write_atomic
from eviseek.viewer.images import ImageMode, ImageSourcer
from eviseek.viewer.view import NO_SUBTASK_COLOR, EpisodeView, build_episode_view

QUESTION_FILE = "question.json"
"""An episode folder may carry its own question record (e.g. one copied out of a run)."""


@functools.lru_cache(maxsize=1)
def _jinja_env() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("eviseek.viewer", "templates"),
        # Always on, whatever the file suffix: model replies, notes and answers are untrusted.
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def render_template(name: str, **context: Any) -> str:
    """Render one of the viewer's templates with autoescaping on."""
    return str(_jinja_env().get_template(name).render(version=__version__, **context))


# ---------------------------------------------------------------------------------------------
# Reading records.


def trajectory_path(trajectory_dir: str | Path) -> Path:
    """The ``trajectory.json`` of an episode folder (or the file itself); a clear error if absent."""
    path = Path(trajectory_dir)
    if path.is_dir():
        path = path / TRAJECTORY_FILE
    if not path.is_file():
        raise ConfigError(
            f"no {TRAJECTORY_FILE} at {path}: pass an episode folder "
            f"(RUN_DIR/episodes/<agent>/<question_id>) or the path of a {TRAJECTORY_FILE} file"
        )
    return path


def load_trajectory(trajectory_dir: str | Path) -> tuple[Trajectory, Path]:
    """Load a saved trajectory; returns it with the folder its image paths are relative to."""
    path = trajectory_path(trajectory_dir)
    try:
        data = json.loads(read_text_capped(path, MAX_TRAJECTORY_BYTES, "a trajectory"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    try:
        return Trajectory.model_validate(data), path.parent
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"{path} is not a trajectory record: {where}: {first['msg']} "
            f"({exc.error_count()} problem(s); was it written by Trajectory.save?)"
        ) from exc


def load_questions(path: str | Path) -> dict[str, Question]:
    """Read a ``questions.jsonl`` (or the one in a directory) into a dict by id."""
    return read_questions_by_id(path)


def find_question(episode_dir: Path, question_id: str) -> Question | None:
    """The question of an episode: ``question.json`` in its folder, else the run's ``questions.jsonl``.

    Looks up to four folders up, which covers ``RUN_DIR/episodes/<agent>/<question_id>``.
    """
    own = episode_dir / QUESTION_FILE
    if own.is_file():
        q = Question.model_validate_json(own.read_text(encoding="utf-8"))
        return q if q.id == question_id else None
    for parent in list(episode_dir.resolve().parents)[:4]:
        candidate = parent / QUESTIONS_FILE
        if candidate.is_file():
            return load_questions(candidate).get(question_id)
    return None


# ---------------------------------------------------------------------------------------------
# Pages.


def _render_episode(
    trajectory: Trajectory,
    base_dir: Path,
    out_path: Path,
    question: Question | None,
    *,
    images: ImageMode,
    max_side: int,
    links: list[tuple[str, str]] | None,
    source: str,
) -> EpisodeView:
    sourcer = ImageSourcer(base_dir, out_path, images, max_side=max_side)
    try:
        view = build_episode_view(trajectory, sourcer, question, links=links)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    html = render_template("episode.html.j2", view=view, no_subtask_color=NO_SUBTASK_COLOR, source=source)
    write_atomic(out_path, html)
    return view


def write_episode_page(
    trajectory_dir: str | Path,
    out_path: str | Path,
    question: Question | None = None,
    *,
    images: ImageMode = "embed",
    max_side: int = 480,
    links: list[tuple[str, str]] | None = None,
) -> Path:
    """Write the HTML page of one saved episode and return its path.

    Args:
        trajectory_dir: the episode folder (holding ``trajectory.json`` and ``images/``), or the
            ``trajectory.json`` file itself.
        out_path: the ``.html`` file to write (parent folders are created).
        question: the episode's :class:`Question`; when omitted it is looked up in the folder's
            ``question.json`` or the run's ``questions.jsonl``. Without one the page shows only
            the question id and the verdict recorded in the run.
        images: ``"embed"`` puts JPEG thumbnails (longest side ``max_side``) in the page as data
            URIs, so the single file is all there is; ``"copy"`` copies the full-resolution files
            to ``<page stem>_files/`` next to the page and links them relatively.
        links: (label, href) pairs shown at the top, e.g. the run index.
    """
    trajectory, base_dir = load_trajectory(trajectory_dir)
    out = Path(out_path)
    if out.is_dir():
        raise ConfigError(f"{out} is a folder; pass the path of the .html file to write")
    if question is None:
        question = find_question(base_dir, trajectory.question_id)
    _render_episode(
        trajectory,
        base_dir,
        out,
        question,
        images=images,
        max_side=max_side,
        links=links,
        source=f"{base_dir.name}/{TRAJECTORY_FILE}",
    )
    return out


class _IndexRow(BaseModel):
    question_id: str
    family: str
    agent: str
    href: str
    answer: str | None
    truth: str | None
    correct: bool | None
    support_label: str
    steps: int
    calls: int
    tokens: int | None
    images_in_answer: int


def run_viewer_index(run_dir: str | Path) -> Path:
    """Where :func:`write_run_viewer` writes the list of a run's episode pages."""
    return Path(run_dir) / "report" / "episodes" / "index.html"


def episode_page_path(run_dir: str | Path, episode_dir: str | Path) -> Path:
    """The page of ``RUN_DIR/episodes/<agent>/<qid>``: ``RUN_DIR/report/episodes/<agent>/<qid>.html``."""
    rel = Path(episode_dir).resolve().relative_to(RunDir(run_dir).episodes_dir.resolve())
    return Path(run_dir) / "report" / "episodes" / rel.parent / f"{rel.name}.html"


def _href(target: Path, page: Path) -> str:
    return Path(os.path.relpath(target.resolve(), page.parent.resolve())).as_posix()


def write_run_viewer(run_dir: str | Path, *, images: ImageMode = "embed", max_side: int = 480) -> list[Path]:
    """Write a page for every episode of a run, plus an index; return the episode pages' paths.

    Pages go to ``RUN_DIR/report/episodes/<agent>/<question_id>.html`` and link to the index
    (:func:`run_viewer_index`), to the run report (``report/index.html``) when it exists, and to
    the same question's pages under the other agents.
    """
    run = Path(run_dir)
    episodes_root = RunDir(run).episodes_dir
    if not episodes_root.is_dir():
        raise ConfigError(
            f"{run} is not a run directory: it has no {EPISODES_DIR}/ folder "
            f"(expected RUN_DIR/{EPISODES_DIR}/<agent>/<question_id>/{TRAJECTORY_FILE})"
        )
    questions: dict[str, Question] = {}
    if (run / QUESTIONS_FILE).is_file():
        questions = load_questions(run / QUESTIONS_FILE)

    loaded: list[tuple[Trajectory, Path, Path]] = []
    for tpath in sorted(episodes_root.rglob(TRAJECTORY_FILE)):
        trajectory, base_dir = load_trajectory(tpath)
        loaded.append((trajectory, base_dir, episode_page_path(run, base_dir)))

    by_question: dict[str, list[tuple[str, Path]]] = defaultdict(list)
    for trajectory, _, page in loaded:
        by_question[trajectory.question_id].append((trajectory.agent, page))

    index = run_viewer_index(run)
    report_index = run / "report" / "index.html"
    rows: list[_IndexRow] = []
    pages: list[Path] = []
    for trajectory, base_dir, page in loaded:
        links = [("all episodes", _href(index, page))]
        if report_index.is_file():
            links.append(("run report", _href(report_index, page)))
        links += [
            (f"{agent} on this question", _href(other, page))
            for agent, other in by_question[trajectory.question_id]
            if other != page
        ]
        question = questions.get(trajectory.question_id) or find_question(base_dir, trajectory.question_id)
        view = _render_episode(
            trajectory,
            base_dir,
            page,
            question,
            images=images,
            max_side=max_side,
            links=links,
            source=base_dir.relative_to(run).as_posix() + "/" + TRAJECTORY_FILE,
        )
        pages.append(page)
        rows.append(
            _IndexRow(
                question_id=trajectory.question_id,
                family=question.family if question is not None else "",
                agent=trajectory.agent,
                href=_href(page, index),
                answer=view.outcome.answer,
                truth=view.outcome.truth,
                correct=view.outcome.correct,
                support_label=view.outcome.support_label,
                steps=view.cost.steps,
                calls=view.cost.calls,
                tokens=view.cost.total_tokens,
                images_in_answer=view.cost.images_in_answer,
            )
        )

    rows.sort(key=lambda r: (r.question_id, r.agent))
    agents = sorted({r.agent for r in rows})
    html = render_template(
        "run_index.html.j2",
        title=f"Episodes of {run.resolve().name}",
        rows=rows,
        agents=agents,
        n_questions=len({r.question_id for r in rows}),
    )
    write_atomic(index, html)
    return pages
