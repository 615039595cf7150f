"""LLM-judge protocol for visual support (the paper's appendix B), for envs without exact masks.

For each scored episode the judge sees the question, its options, the reference answer and the
images that were attached to the answering call, never the system's prediction. Images are
taken in order with repeated identical files dropped, converted to RGB, shrunk (never enlarged)
to fit within 1365x768 and numbered in an upper-left label. The judge replies with a JSON object
holding a grade of 1 (every deciding fact visible), 0.5 (relevant content, a deciding fact
unresolved) or 0 (deciding evidence absent); a reply that names two grades ("0.5-1") is resolved
toward the lower one. A cut-off or unparseable reply is retried once with a larger output
budget; if that fails too, the grade stays unknown (``None``) and the reason is recorded, so the
run's support is reported as partly unavailable rather than silently zero.

``judge_run`` grades a whole run directory and appends one :class:`SupportGrade` per episode to
``RUN_DIR/support.jsonl`` (re-running resumes), saving the numbered images it sent under
``RUN_DIR/judge/<agent>/<question_id>/`` for audit.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field

from eviseek.models.base import Model, generate_recorded
from eviseek.types import (
    ChatMessage,
    GenerateConfig,
    Image,
    ImagePart,
    Question,
    Stage,
    TextPart,
    Trajectory,
    Usage,
)

MAX_WIDTH = 1365
MAX_HEIGHT = 768
FIRST_MAX_TOKENS = 4096
RETRY_MAX_TOKENS = 8192
GRADES = (0.0, 0.5, 1.0)
SUPPORT_FILE = "support.jsonl"
_USER_SPLIT = "=== user ==="
_MARK = re.compile("\x00IMG(\\d+)\x00")
V = TypeVar("V")


class JudgeReply(BaseModel):
    """The JSON object the judge is asked for (its schema goes in ``response_schema``)."""

    reason: str = Field(description="The deciding facts and where they are visible, briefly.")
    grade: float = Field(description="1, 0.5 or 0; the lower grade when in doubt.")


class SupportGrade(BaseModel):
    """The judge's verdict on one episode's answer-time images."""

    agent: str
    question_id: str
    grade: float | None
    """1, 0.5 or 0; ``None`` when the judge gave no usable grade (see ``error``)."""
    reason: str = ""
    judge_model: str = ""
    n_images: int = 0
    frame_ids: list[int] = Field(default_factory=list)
    """Frame ids of the judged images after de-duplication (-1 for task reference images)."""
    attempts: int = 0
    outputs: list[str] = Field(default_factory=list)
    """The judge's raw replies, one per attempt."""
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None


class JudgeImage(BaseModel):
    """One image prepared for the judge: its number, provenance and the numbered pixels."""

    number: int
    frame_id: int
    source: str
    """``reference`` (task-supplied) or ``observation`` (acquired by the agent)."""
    original_size: tuple[int, int]
    image: Image


# --------------------------------------------------------------------------- images


def fit_image(pil: Any, max_width: int = MAX_WIDTH, max_height: int = MAX_HEIGHT) -> Any:
    """``pil`` as RGB, shrunk with its aspect ratio kept to fit ``max_width x max_height``.

    An image that already fits is returned at its own size: upscaling would invent detail.
    """
    from PIL import Image as PILImage

    rgb = pil.convert("RGB")
    w, h = rgb.size
    scale = min(1.0, max_width / w, max_height / h)
    if scale >= 1.0:
        return rgb
    size = (max(1, min(max_width, round(w * scale))), max(1, min(max_height, round(h * scale))))
    return rgb.resize(size, PILImage.Resampling.LANCZOS)


def label_size(width: int, height: int) -> int:
    """Font size of the number label: readable at any size, small next to the content."""
    return max(12, round(min(width, height) * 0.07))


def number_image(pil: Any, number: int) -> Any:
    """A copy of ``pil`` with ``number`` drawn in white on a black box in the upper-left corner."""
    from PIL import ImageDraw, ImageFont

    out = pil.convert("RGB").copy()
    size = label_size(*out.size)
    font = ImageFont.load_default(size=size)
    draw = ImageDraw.Draw(out)
    text = str(number)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    pad = max(2, size // 4)
    draw.rectangle((0, 0, right - left + 2 * pad, bottom - top + 2 * pad), fill=(0, 0, 0))
    draw.text((pad - left, pad - top), text, fill=(255, 255, 255), font=font)
    return out


def judge_model_args(model_id: str, given: dict[str, Any] | None = None) -> dict[str, Any]:
    """Provider arguments of a support judge: for ``openai/`` models the paper's image encoding
    (app. B: JPEG at quality 90; the numbered copies saved for audit are PNG, so nothing is
    compressed twice), then ``given`` on top (e.g. ``api=responses``, ``reasoning_effort=low``)."""
    args: dict[str, Any] = {}
    if model_id.split("/", 1)[0] == "openai":
        args = {"image_format": "jpeg", "jpeg_quality": 90}
    args.update(given or {})
    return args


def prepare_images(
    images: Sequence[Image],
    frame_ids: Sequence[int] | None = None,
    base_dir: str | Path | None = None,
    max_width: int = MAX_WIDTH,
    max_height: int = MAX_HEIGHT,
) -> list[JudgeImage]:
    """Order-preserving, de-duplicated, fitted and numbered judge inputs.

    Repeats are recognised by saved path (files are named by content hash) or, for images only
    in memory, by content hash. ``frame_ids`` gives each image's provenance (-1 marks a task
    reference image); when absent or of the wrong length, images count as observations.
    """
    ids = list(frame_ids) if frame_ids is not None and len(frame_ids) == len(images) else None
    seen: set[str] = set()
    out: list[JudgeImage] = []
    for i, img in enumerate(images):
        key = img.path if img.path is not None else img.digest()
        if key in seen:
            continue
        seen.add(key)
        pil = img.to_pil(base_dir)
        fitted = fit_image(pil, max_width, max_height)
        numbered = number_image(fitted, len(out) + 1)
        frame = ids[i] if ids is not None else i
        out.append(
            JudgeImage(
                number=len(out) + 1,
                frame_id=frame,
                source="reference" if frame == -1 else "observation",
                original_size=pil.size,
                image=Image.from_pil(numbered),
            )
        )
    return out


# --------------------------------------------------------------------------- prompt


@cache
def _template() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("eviseek.eval", "templates"),
        autoescape=False,  # a plain-text prompt, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("judge.j2")


def reference_answer(question: Question) -> str:
    """The reference answer as the judge reads it (several accepted answers joined by 'or')."""
    gt = question.ground_truth
    if gt is None:
        raise ValueError(
            f"question {question.id!r} has no ground_truth; the support judge needs the reference answer"
        )
    if isinstance(gt, list):
        return " or ".join(f'"{g}"' for g in gt) if len(gt) > 1 else str(gt[0])
    return str(gt)


def build_request(
    question: Question, images: Sequence[JudgeImage]
) -> tuple[list[ChatMessage], GenerateConfig]:
    """The judge's messages and config. Nothing about the system's prediction goes in."""
    picked: list[Image] = []

    def image(img: Image) -> str:
        picked.append(img)
        return f"\x00IMG{len(picked) - 1}\x00"

    options = list(question.contract.options or [])
    reference = reference_answer(question)
    text = _template().render(
        question=question.text,
        options=options,
        reference=reference,
        format_hint=question.contract.format_hint,
        images=[j.image for j in images],
        sources=[j.source for j in images],
        image=image,
    )
    system, _, user = text.partition(_USER_SPLIT)
    parts: list[TextPart | ImagePart] = []
    pos = 0
    for m in _MARK.finditer(user):
        chunk = user[pos : m.start()].strip("\n")
        if chunk.strip():
            parts.append(TextPart(text=chunk))
        parts.append(ImagePart(image=picked[int(m.group(1))], detail="high"))
        pos = m.end()
    tail = user[pos:].strip("\n")
    if tail.strip():
        parts.append(TextPart(text=tail))
    messages = [ChatMessage(role="system", content=system.strip()), ChatMessage(role="user", content=parts)]
    config = GenerateConfig(
        stage=Stage.JUDGE,
        json_mode=True,
        max_tokens=FIRST_MAX_TOKENS,
        response_schema=JudgeReply.model_json_schema(),
        metadata={
            "question": question.text,
            "options": options,
            "reference_answer": reference,
            "n_images": len(images),
            "image_sources": [j.source for j in images],
        },
    )
    return messages, config


# --------------------------------------------------------------------------- parsing

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


def _json_object(text: str) -> dict[str, Any] | None:
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


def parse_judge_reply(text: str) -> tuple[float | None, str, str | None]:
    """(grade, reason, problem). ``problem`` says why no grade could be read, else ``None``."""
    obj = _json_object(text)
    if obj is None:
        return None, "", "no JSON object in the reply (incomplete or not JSON)"
    reason = str(obj.get("reason", obj.get("reasoning", "")))
    if "grade" not in obj:
        return None, reason, "the JSON object has no 'grade' field"
    grade = resolve_grade(obj["grade"])
    if grade is None:
        return None, reason, f"grade {obj['grade']!r} is not 1, 0.5 or 0"
    return grade, reason, None


# --------------------------------------------------------------------------- judging


class SupportJudge:
    """Grades answer-time images with any eviseek :class:`Model` (``stage=Stage.JUDGE``)."""

    def __init__(
        self,
        model: Model,
        *,
        max_width: int = MAX_WIDTH,
        max_height: int = MAX_HEIGHT,
        max_tokens: int = FIRST_MAX_TOKENS,
        retry_max_tokens: int = RETRY_MAX_TOKENS,
    ) -> None:
        if max_width < 1 or max_height < 1 or max_tokens < 1 or retry_max_tokens < 1:
            raise ValueError("max_width, max_height, max_tokens and retry_max_tokens must be positive")
        self.model = model
        self.max_width = max_width
        self.max_height = max_height
        self.max_tokens = max_tokens
        self.retry_max_tokens = retry_max_tokens

    async def grade(
        self,
        question: Question,
        images: Sequence[Image],
        frame_ids: Sequence[int] | None = None,
        *,
        base_dir: str | Path | None = None,
        agent: str = "",
        save_dir: str | Path | None = None,
    ) -> SupportGrade:
        """Grade one episode. Raises only on infrastructure failure (:class:`ModelError`)."""
        prepared = prepare_images(images, frame_ids, base_dir, self.max_width, self.max_height)
        grade = SupportGrade(
            agent=agent,
            question_id=question.id,
            grade=None,
            judge_model=self.model.name,
            n_images=len(prepared),
            frame_ids=[j.frame_id for j in prepared],
        )
        if save_dir is not None:
            folder = Path(save_dir)
            folder.mkdir(parents=True, exist_ok=True)
            for j in prepared:
                j.image.to_pil().save(folder / f"image_{j.number}.png")
        if not prepared:
            # Nothing was in front of the answerer: the deciding evidence is absent by definition.
            grade.grade, grade.reason = 0.0, "no images were attached to the answering call"
            return grade
        messages, config = build_request(question, prepared)
        asked = await ask_judge(
            self.model, messages, config, [self.max_tokens, self.retry_max_tokens], parse_judge_reply
        )
        grade.attempts, grade.outputs, grade.usage = asked.attempts, asked.outputs, asked.usage
        if asked.value is not None:
            grade.grade, grade.reason = asked.value, asked.reason
        else:
            grade.error = asked.error
        return grade


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
    still parses is kept unless a longer retry does better. Shared by every judge protocol
    (appendix B's support grade, EXPRESS-Bench's answer grade). Raises only on infrastructure
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


def load_questions(run_dir: str | Path) -> dict[str, Question]:
    """``RUN_DIR/questions.jsonl`` as a dict keyed by question id."""
    from eviseek.types.question_file import QUESTIONS_FILE, read_questions_by_id

    return read_questions_by_id(
        Path(run_dir) / QUESTIONS_FILE,
        missing_hint="a run directory keeps the evaluated questions there (written by `eviseek eval`); "
        "without it the reference answers are unknown",
    )


G = TypeVar("G", bound=BaseModel)


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


def load_support_grades(run_dir: str | Path) -> dict[tuple[str, str], SupportGrade]:
    """Grades from ``RUN_DIR/support.jsonl`` keyed by (agent, question_id); later lines win."""
    return load_grades(Path(run_dir) / SUPPORT_FILE, SupportGrade)


def run_trajectories(
    run_dir: str | Path, agents: Sequence[str] | None = None
) -> list[tuple[Trajectory, Path]]:
    """Every saved trajectory of a run (or of ``agents``) with its episode folder.

    Folder names may be sanitised ids; the trajectory itself says which agent and question.
    """
    episodes = Path(run_dir) / "episodes"
    if not episodes.is_dir():
        raise FileNotFoundError(
            f"{episodes} not found: is {run_dir} a run directory written by `eviseek eval`?"
        )
    out = []
    for path in sorted(episodes.rglob("trajectory.json")):
        traj = Trajectory.load(path)
        if agents is None or traj.agent in agents:
            out.append((traj, path.parent))
    return out


def _append(path: Path, record: BaseModel) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(record.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())


async def judge_run(
    run_dir: str | Path,
    model: Model,
    *,
    agents: Sequence[str] | None = None,
    concurrency: int = 4,
    overwrite: bool = False,
    save_inputs: bool = True,
    judge: SupportJudge | None = None,
) -> list[SupportGrade]:
    """Grade every saved episode of a run (or of ``agents``) and append to ``support.jsonl``.

    Episodes that already have a grade are skipped unless ``overwrite``; episodes whose earlier
    attempt gave no grade are tried again.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    run = Path(run_dir)
    episodes = run_trajectories(run, agents)
    questions = load_questions(run)
    done = {} if overwrite else load_support_grades(run)
    grader = judge or SupportJudge(model)
    todo: list[tuple[Trajectory, Path]] = []
    for traj, folder in episodes:
        previous = done.get((traj.agent, traj.question_id))
        if previous is not None and previous.grade is not None:
            continue
        todo.append((traj, folder))
    missing = sorted({t.question_id for t, _ in todo if t.question_id not in questions})
    if missing:
        raise ValueError(
            f"{len(missing)} episode(s) answer questions missing from questions.jsonl, e.g. {missing[:5]}"
        )
    sem = asyncio.Semaphore(concurrency)
    out_path = run / SUPPORT_FILE

    async def one(traj: Trajectory, ep: Path) -> SupportGrade:
        async with sem:
            grade = await grader.grade(
                questions[traj.question_id],
                traj.answer_images,
                traj.answer_frame_ids,
                base_dir=ep,
                agent=traj.agent,
                save_dir=run / "judge" / ep.parent.name / ep.name if save_inputs else None,
            )
            _append(out_path, grade)
            return grade

    return list(await asyncio.gather(*(one(t, ep) for t, ep in todo)))
