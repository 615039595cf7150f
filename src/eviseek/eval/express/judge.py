"""EXPRESS-Bench's answer judge (its "Exploration-Answer Consistency"), through any eviseek model.

For each episode the judge sees the question, the reference answer, the agent's answer and the
last image the agent's camera took, and gives a grounding grade g in {0, 0.5, 1} and an answer
score s in 1..5 (EXPRESS-Bench's protocol). The prompt is EXPRESS-Bench's own when the user's
checkout is given (:mod:`eviseek.eval.express.prompt`), else ours; each grade names it. The
request goes out with ``stage="express_judge"``, so the ``reference/`` policy can play the judge
without a key. It
shares the appendix-B judge's image fitting and its retry on a cut-off or unreadable reply
(:mod:`eviseek.eval.judging`). Replies are JSON; EXPRESS-Bench's own plain form
``"<g>, <s>"`` is read too.

:func:`judge_run_express` grades a run directory and appends one :class:`ExpressGrade` per
episode to ``RUN_DIR/express.jsonl`` (re-running resumes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from eviseek.eval.express.prompt import JudgePrompt
from eviseek.eval.judge import MAX_HEIGHT, MAX_WIDTH, fit_image
from eviseek.eval.judging import (
    FIRST_MAX_TOKENS,
    RETRY_MAX_TOKENS,
    GradeFile,
    ask_judge,
    image_mark,
    json_object,
    judge_template,
    prompt_messages,
    record_asking,
    reference_answer,
    resolve_grade,
)
from eviseek.models.base import Model
from eviseek.types import ChatMessage, GenerateConfig, Image, Question, Stage, Trajectory, Usage
from eviseek.types.rundir import EXPRESS_FILE

STAGE = Stage.EXPRESS_JUDGE
_PLAIN = re.compile(r"^\s*(?:your mark:)?\s*([0-9.]+)\s*,\s*([0-9.]+)", re.IGNORECASE)


class ExpressReply(BaseModel):
    """The JSON object the judge is asked for."""

    reason: str = Field(description="One short sentence.")
    grounding: float = Field(description="1, 0.5 or 0.")
    score: int = Field(description="1 to 5.")


class ExpressGrade(BaseModel):
    """The judge's verdict on one episode."""

    agent: str
    question_id: str
    grounding: float | None = None
    """g in {0, 0.5, 1}; ``None`` when the judge gave no usable reply (see ``error``)."""
    score: int | None = None
    """s in 1..5."""
    reason: str = ""
    response: str = ""
    """The agent's answer as the judge read it."""
    judge_model: str = ""
    prompt: str = "eviseek"
    """The judge prompt used (:attr:`JudgePrompt.label`): EXPRESS-Bench's, with its file's hash,
    or ``eviseek``."""
    had_image: bool = False
    attempts: int = 0
    outputs: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None


EXPRESS_GRADES = GradeFile(EXPRESS_FILE, ExpressGrade, graded=lambda g: g.score is not None)
"""``RUN_DIR/express.jsonl``; a grade without a score is judged again on a re-run."""


def response_text(traj: Trajectory) -> str:
    """The agent's answer in words (its raw reply when saved, else the parsed answer)."""
    res = traj.result
    if res is None:
        return ""
    return (res.raw_answer or res.answer or "").strip()


def last_image(traj: Trajectory) -> Image | None:
    """The last image the agent's camera took (EXPRESS-Bench shows the judge this one).

    An agent that never moved shows the judge what it answered from (a Blind agent: nothing).
    """
    for step in reversed(traj.steps):
        if step.image is not None:
            return step.image
    return traj.answer_images[-1] if traj.answer_images else None


def build_express_request(
    question: Question, response: str, image: Image | None, prompt: JudgePrompt | None = None
) -> tuple[list[ChatMessage], GenerateConfig]:
    """The judge's messages and config (the image fitted as the appendix-B judge fits its own).

    With EXPRESS-Bench's ``prompt`` the messages are laid out as its code sends them (system
    text; user text with the episode appended, then the image) and the reply is its plain
    ``"g, s"``; otherwise eviseek's prompt asks for JSON."""
    reference = reference_answer(question)
    fitted = [] if image is None else [Image.from_pil(fit_image(image.to_pil(), MAX_WIDTH, MAX_HEIGHT))]
    express = prompt is not None and prompt.source == "express-bench"
    if prompt is not None and express:
        user = prompt.user_text(question.text, reference, response or "(no answer)")
        messages = [ChatMessage.system(prompt.system), ChatMessage.user(user, *fitted)]
    else:
        text = judge_template("express_judge.j2").render(
            question=question.text,
            reference=reference,
            response=response or "(no answer)",
            image=image_mark(0) if image is not None else None,
        )
        messages = prompt_messages(text, fitted)
    config = GenerateConfig(
        stage=STAGE,
        json_mode=not express,
        max_tokens=FIRST_MAX_TOKENS,
        response_schema=None if express else ExpressReply.model_json_schema(),
        metadata={"question": question.text, "reference_answer": reference, "response": response},
    )
    return messages, config


def parse_express_reply(text: str) -> tuple[tuple[float, int] | None, str, str | None]:
    """((grounding, score), reason, problem); reads the JSON reply or the plain ``"g, s"`` form."""
    obj = json_object(text)
    if obj is None:
        m = _PLAIN.match(text.strip())
        if m is None:
            return None, "", "no JSON object and no 'grounding, score' pair in the reply"
        raw_g, raw_s = m.group(1), m.group(2)
        reason = ""
    else:
        if "grounding" not in obj or "score" not in obj:
            return None, "", "the JSON object lacks 'grounding' or 'score'"
        raw_g, raw_s = obj["grounding"], obj["score"]
        reason = str(obj.get("reason", ""))
    g = resolve_grade(raw_g if not isinstance(raw_g, str) else raw_g.strip())
    if g is None:
        return None, reason, f"grounding {raw_g!r} is not 1, 0.5 or 0"
    try:
        s_float = float(raw_s)
    except (TypeError, ValueError):
        return None, reason, f"score {raw_s!r} is not a number from 1 to 5"
    if s_float != int(s_float) or not 1 <= s_float <= 5:
        return None, reason, f"score {raw_s!r} is not an integer from 1 to 5"
    return (g, int(s_float)), reason, None


class ExpressJudge:
    """Grades episodes EXPRESS-Bench's way with any eviseek :class:`Model`."""

    def __init__(
        self,
        model: Model,
        *,
        max_tokens: int = FIRST_MAX_TOKENS,
        retry_max_tokens: int = RETRY_MAX_TOKENS,
        prompt: JudgePrompt | None = None,
    ) -> None:
        """``prompt``: EXPRESS-Bench's (:func:`~eviseek.eval.express.prompt.load_express_prompt`);
        ``None``: eviseek's."""
        if max_tokens < 1 or retry_max_tokens < 1:
            raise ValueError("max_tokens and retry_max_tokens must be positive")
        self.model = model
        self.budgets = [max_tokens, retry_max_tokens]
        self.prompt = prompt or JudgePrompt()

    async def grade(
        self, question: Question, traj: Trajectory, *, base_dir: str | Path | None = None
    ) -> ExpressGrade:
        """Grade one episode. Raises only on infrastructure failure (:class:`ModelError`)."""
        image = last_image(traj)
        if image is not None and base_dir is not None and not image.loaded and image.path is not None:
            image = Image.from_pil(image.to_pil(base_dir))
        response = response_text(traj)
        grade = ExpressGrade(
            agent=traj.agent,
            question_id=question.id,
            response=response,
            judge_model=self.model.name,
            prompt=self.prompt.label,
            had_image=image is not None,
        )
        messages, config = build_express_request(question, response, image, self.prompt)
        asked = await ask_judge(self.model, messages, config, self.budgets, parse_express_reply)
        record_asking(grade, asked)
        if asked.value is None:
            return grade
        g, s = asked.value
        # Without an image nothing can be grounded, whatever the judge says.
        grade.grounding, grade.score, grade.reason = (g if image is not None else 0.0), s, asked.reason
        return grade


def load_express_grades(run_dir: str | Path) -> dict[tuple[str, str], ExpressGrade]:
    """Grades from ``RUN_DIR/express.jsonl`` keyed by (agent, question_id); later lines win."""
    return EXPRESS_GRADES.load(run_dir)


async def judge_run_express(
    run_dir: str | Path,
    model: Model,
    *,
    agents: Sequence[str] | None = None,
    concurrency: int = 4,
    overwrite: bool = False,
    judge: ExpressJudge | None = None,
    prompt: JudgePrompt | None = None,
) -> list[ExpressGrade]:
    """Grade every saved episode of a run (or of ``agents``) and append to ``express.jsonl``.

    Episodes that already have a grade are skipped unless ``overwrite``; those whose earlier
    attempt gave none are tried again. ``prompt``: EXPRESS-Bench's judge prompt (``None``:
    eviseek's).
    """
    grader = judge or ExpressJudge(model, prompt=prompt)

    async def grade_one(question: Question, traj: Trajectory, ep: Path) -> ExpressGrade:
        return await grader.grade(question, traj, base_dir=ep)

    return await EXPRESS_GRADES.judge_run(
        run_dir, grade_one, agents=agents, concurrency=concurrency, overwrite=overwrite
    )
