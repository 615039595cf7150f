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

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eviseek.eval.judging import (
    FIRST_MAX_TOKENS,
    GRADES,
    RETRY_MAX_TOKENS,
    GradeFile,
    JudgeAnswer,
    ask_judge,
    image_mark,
    json_object,
    judge_template,
    load_grades,
    load_questions,
    prompt_messages,
    record_asking,
    reference_answer,
    resolve_grade,
    run_trajectories,
)
from eviseek.models.base import Model
from eviseek.types import ChatMessage, GenerateConfig, Image, Question, Stage, Trajectory, Usage
from eviseek.types.rundir import SUPPORT_FILE, RunDir

# The shared judge machinery stays importable from here, where it lived first.
__all__ = [
    "FIRST_MAX_TOKENS",
    "GRADES",
    "MAX_HEIGHT",
    "MAX_WIDTH",
    "RETRY_MAX_TOKENS",
    "SUPPORT_FILE",
    "JudgeAnswer",
    "JudgeImage",
    "JudgeReply",
    "SupportGrade",
    "SupportJudge",
    "ask_judge",
    "build_request",
    "fit_image",
    "judge_model_args",
    "judge_run",
    "label_size",
    "load_grades",
    "load_questions",
    "load_support_grades",
    "number_image",
    "parse_judge_reply",
    "prepare_images",
    "reference_answer",
    "resolve_grade",
    "run_trajectories",
]

MAX_WIDTH = 1365
MAX_HEIGHT = 768


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


SUPPORT_GRADES = GradeFile(SUPPORT_FILE, SupportGrade, graded=lambda g: g.grade is not None)
"""``RUN_DIR/support.jsonl``; a grade of ``None`` (no usable reply) is judged again on a re-run."""


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
    """Provider arguments of a support judge: for providers that encode images for the wire
    (those whose settings take ``image_format``, e.g. ``openai/``) the paper's image encoding
    (app. B: JPEG at quality 90; the numbered copies saved for audit are PNG, so nothing is
    compressed twice), then ``given`` on top (e.g. ``api=responses``, ``reasoning_effort=low``)."""
    from eviseek.models.registry import provider_of

    args: dict[str, Any] = {}
    if provider_of(model_id).accepts("image_format"):
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


def build_request(
    question: Question, images: Sequence[JudgeImage]
) -> tuple[list[ChatMessage], GenerateConfig]:
    """The judge's messages and config. Nothing about the system's prediction goes in."""
    picked: list[Image] = []

    def image(img: Image) -> str:
        picked.append(img)
        return image_mark(len(picked) - 1)

    options = list(question.contract.options or [])
    reference = reference_answer(question)
    text = judge_template("judge.j2").render(
        question=question.text,
        options=options,
        reference=reference,
        format_hint=question.contract.format_hint,
        images=[j.image for j in images],
        sources=[j.source for j in images],
        image=image,
    )
    messages = prompt_messages(text, picked, detail="high")
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


def parse_judge_reply(text: str) -> tuple[float | None, str, str | None]:
    """(grade, reason, problem). ``problem`` says why no grade could be read, else ``None``."""
    obj = json_object(text)
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
        record_asking(grade, asked)
        if asked.value is not None:
            grade.grade, grade.reason = asked.value, asked.reason
        return grade


def load_support_grades(run_dir: str | Path) -> dict[tuple[str, str], SupportGrade]:
    """Grades from ``RUN_DIR/support.jsonl`` keyed by (agent, question_id); later lines win."""
    return SUPPORT_GRADES.load(run_dir)


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
    grader = judge or SupportJudge(model)

    async def grade_one(question: Question, traj: Trajectory, ep: Path) -> SupportGrade:
        return await grader.grade(
            question,
            traj.answer_images,
            traj.answer_frame_ids,
            base_dir=ep,
            agent=traj.agent,
            save_dir=RunDir(run_dir).judge_dir(ep) if save_inputs else None,
        )

    return await SUPPORT_GRADES.judge_run(
        run_dir, grade_one, agents=agents, concurrency=concurrency, overwrite=overwrite
    )
