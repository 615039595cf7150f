"""What every LLM-judge protocol shares: the prompt, the asking, the reply, the run.

Two protocols grade saved episodes with a model: the appendix-B visual-support judge
(:mod:`eviseek.eval.judge`) and EXPRESS-Bench's answer judge (:mod:`eviseek.eval.express.judge`).
Both render a Jinja prompt whose system and user parts are split by a marker line and whose
images stand as placeholders; both ask once per output budget until a reply parses and was not cut
off; both read a JSON object out of a reply that may wrap it in prose or a code fence; and both
grade a whole run directory, appending one grade per episode to a JSONL file so that a re-run
resumes. That machinery lives here once; each protocol keeps its prompt, its reply schema and its
grade record.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from eviseek.models.base import Model, generate_recorded
from eviseek.types import ChatMessage, GenerateConfig, Image, ImagePart, Question, TextPart, Trajectory, Usage
from eviseek.types.rundir import TRAJECTORY_FILE, RunDir

FIRST_MAX_TOKENS = 4096
RETRY_MAX_TOKENS = 8192
GRADES = (0.0, 0.5, 1.0)
USER_SPLIT = "=== user ==="
"""The line of a judge template that ends its system part and starts its user part."""
_MARK = re.compile("\x00IMG(\\d+)\x00")
V = TypeVar("V")
G = TypeVar("G", bound=BaseModel)


# --------------------------------------------------------------------------- prompt


@cache
def judge_template(name: str) -> Any:
    """The Jinja template ``name`` from ``eviseek/eval/templates`` (loaded once)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("eviseek.eval", "templates"),
        autoescape=False,  # a plain-text prompt, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template(name)


def image_mark(index: int) -> str:
    """The placeholder a template writes where ``images[index]`` goes (see :func:`prompt_messages`)."""
    return f"\x00IMG{index}\x00"


def prompt_messages(
    text: str, images: Sequence[Image], detail: Literal["auto", "low", "high"] = "auto"
) -> list[ChatMessage]:
    """A rendered judge prompt as a system message and a user message of text and images.

    ``text`` is split at the :data:`USER_SPLIT` line; in the user part each
    :func:`image_mark` placeholder becomes ``images[index]``, and the text between placeholders
    becomes text parts (blank stretches dropped, surrounding newlines trimmed).
    """
    system, _, user = text.partition(USER_SPLIT)
    parts: list[TextPart | ImagePart] = []
    pos = 0
    for m in _MARK.finditer(user):
        chunk = user[pos : m.start()].strip("\n")
        if chunk.strip():
            parts.append(TextPart(text=chunk))
        parts.append(ImagePart(image=images[int(m.group(1))], detail=detail))
        pos = m.end()
    tail = user[pos:].strip("\n")
    if tail.strip():
        parts.append(TextPart(text=tail))
    return [ChatMessage(role="system", content=system.strip()), ChatMessage(role="user", content=parts)]


def reference_answer(question: Question) -> str:
    """The reference answer as a judge reads it (several accepted answers joined by 'or')."""
    gt = question.ground_truth
    if gt is None:
        raise ValueError(
            f"question {question.id!r} has no ground_truth; the support judge needs the reference answer"
        )
    if isinstance(gt, list):
        return " or ".join(f'"{g}"' for g in gt) if len(gt) > 1 else str(gt[0])
    return str(gt)


# --------------------------------------------------------------------------- replies

_GRADE_TOKEN = re.compile(r"(?<![\d.])(?:0?\.5|0\.50*|1(?:\.0+)?|0(?:\.0+)?)(?![\d.])")


def resolve_grade(value: Any) -> float | None:
    """A grade in {0, 0.5, 1} from what the judge wrote; several grades resolve to the lowest.

    ``1``, ``"0.5"``, ``"0.5-1"`` (-> 0.5), ``"0 or 0.5"`` (-> 0), ``"half"`` (-> 0.5). Anything
    else (``2``, ``"high"``) gives ``None``.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        v = float(value)
        return v if v in GRADES else None
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    found = [float(t) for t in _GRADE_TOKEN.findall(text)]
    if "half" in text:
        found.append(0.5)
    found = [g for g in found if g in GRADES]
    return min(found) if found else None


def json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (tolerating code fences and surrounding prose)."""
    stripped = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", stripped, re.S)
    if fence:
        stripped = fence.group(1).strip()
    decoder = json.JSONDecoder()
    for start in [m.start() for m in re.finditer(r"\{", stripped)]:
        try:
            obj, _ = decoder.raw_decode(stripped[start:])
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


class JudgeAnswer(BaseModel, Generic[V]):
    """What :func:`ask_judge` got: the parsed value (``None`` if none) and the record of asking."""

    value: V | None = None
    reason: str = ""
    attempts: int = 0
    outputs: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None


async def ask_judge(
    model: Model,
    messages: list[ChatMessage],
    config: GenerateConfig,
    budgets: Sequence[int],
    parse: Callable[[str], tuple[V | None, str, str | None]],
) -> JudgeAnswer[V]:
    """Ask a judge, once per output budget, until a reply parses and was not cut off.

    ``parse(text)`` returns ``(value, reason, problem)``. A reply cut off at the token limit that
    still parses is kept unless a longer retry does better. Raises only on infrastructure
    failure (:class:`ModelError`).
    """
    out: JudgeAnswer[V] = JudgeAnswer()
    problem: str | None = None
    for attempt, budget in enumerate(budgets, 1):
        cfg = config.model_copy(update={"max_tokens": budget})
        completion, call = await generate_recorded(model, messages, cfg)
        out.attempts = attempt
        out.outputs.append(completion.text)
        out.usage = out.usage + call.usage
        value, reason, problem = parse(completion.text)
        if value is not None and completion.finish_reason != "length":
            out.value, out.reason = value, reason
            return out
        if value is not None:
            out.value, out.reason = value, reason
            problem = "reply was cut off at the token limit"
        elif completion.finish_reason == "length":
            problem = f"reply was cut off at {budget} tokens ({problem})"
    if out.value is None:
        out.error = f"no usable grade after {len(budgets)} attempts: {problem}"
    return out


class AskedRecord(Protocol):
    """The fields every protocol's grade keeps about the asking (see :func:`record_asking`)."""

    attempts: int
    outputs: list[str]
    usage: Usage
    error: str | None


def record_asking(grade: AskedRecord, asked: JudgeAnswer[Any]) -> None:
    """Copy onto ``grade`` how the judge was asked: attempts, raw replies and usage, and the error
    when no reply gave a value. What a value means stays with the protocol that asked."""
    grade.attempts, grade.outputs, grade.usage = asked.attempts, asked.outputs, asked.usage
    if asked.value is None:
        grade.error = asked.error


# --------------------------------------------------------------------------- runs


def load_questions(run_dir: str | Path) -> dict[str, Question]:
    """``RUN_DIR/questions.jsonl`` as a dict keyed by question id."""
    from eviseek.types.question_file import QUESTIONS_FILE, read_questions_by_id

    return read_questions_by_id(
        Path(run_dir) / QUESTIONS_FILE,
        missing_hint="a run directory keeps the evaluated questions there (written by `eviseek eval`); "
        "without it the reference answers are unknown",
    )


def load_grades(path: Path, model: type[G]) -> dict[tuple[str, str], G]:
    """A judge's JSONL grades keyed by (agent, question_id); later lines win; torn lines skipped.

    ``model`` must have ``agent`` and ``question_id`` fields (every judge protocol's grade does).
    """
    out: dict[tuple[str, str], G] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            g = model.model_validate_json(line)
        except ValueError:
            continue  # a torn last line from an interrupted run: that episode is judged again
        out[(g.agent, g.question_id)] = g  # type: ignore[attr-defined]
    return out


def run_trajectories(
    run_dir: str | Path, agents: Sequence[str] | None = None
) -> list[tuple[Trajectory, Path]]:
    """Every saved trajectory of a run (or of ``agents``) with its episode folder.

    Folder names may be sanitised ids; the trajectory itself says which agent and question.
    """
    episodes = RunDir(run_dir).episodes_dir
    if not episodes.is_dir():
        raise FileNotFoundError(
            f"{episodes} not found: is {run_dir} a run directory written by `eviseek eval`?"
        )
    out = []
    for path in sorted(episodes.rglob(TRAJECTORY_FILE)):
        traj = Trajectory.load(path)
        if agents is None or traj.agent in agents:
            out.append((traj, path.parent))
    return out


def append_record(path: Path, record: BaseModel) -> None:
    """Append ``record`` as one JSON line and sync it, so a finished grade survives a crash."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(record.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())


@dataclass(frozen=True)
class GradeFile(Generic[G]):
    """One protocol's grades in a run directory: ``RUN_DIR/name``, one ``model`` record a line.

    ``graded`` tells a saved grade that holds a usable verdict from one whose earlier attempt
    gave none (the second kind is judged again on a re-run).
    """

    name: str
    model: type[G]
    graded: Callable[[G], bool]

    def load(self, run_dir: str | Path) -> dict[tuple[str, str], G]:
        """The grades keyed by (agent, question_id); later lines win (see :func:`load_grades`)."""
        return load_grades(Path(run_dir) / self.name, self.model)

    async def judge_run(
        self,
        run_dir: str | Path,
        grade_one: Callable[[Question, Trajectory, Path], Awaitable[G]],
        *,
        agents: Sequence[str] | None = None,
        concurrency: int = 4,
        overwrite: bool = False,
    ) -> list[G]:
        """Grade every saved episode of a run (or of ``agents``), appending to this file.

        An episode whose saved grade passes ``graded`` is skipped unless ``overwrite``; one whose
        earlier attempt gave no usable grade is tried again. ``grade_one(question, trajectory,
        episode_folder)`` grades one episode; at most ``concurrency`` run at once, and each
        grade is appended as soon as it is in.
        """
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        run = Path(run_dir)
        episodes = run_trajectories(run, agents)
        questions = load_questions(run)
        done = {} if overwrite else self.load(run)
        todo: list[tuple[Trajectory, Path]] = []
        for traj, folder in episodes:
            previous = done.get((traj.agent, traj.question_id))
            if previous is not None and self.graded(previous):
                continue
            todo.append((traj, folder))
        missing = sorted({t.question_id for t, _ in todo if t.question_id not in questions})
        if missing:
            raise ValueError(
                f"{len(missing)} episode(s) answer questions missing from questions.jsonl, e.g. {missing[:5]}"
            )
        sem = asyncio.Semaphore(concurrency)
        out_path = run / self.name

        async def one(traj: Trajectory, ep: Path) -> G:
            async with sem:
                grade = await grade_one(questions[traj.question_id], traj, ep)
                append_record(out_path, grade)
                return grade

        return list(await asyncio.gather(*(one(t, ep) for t, ep in todo)))
