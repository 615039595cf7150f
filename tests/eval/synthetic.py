"""Build small run directories on disk, shaped like `eviseek eval` output, for eval tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from eviseek.types import AnswerContract, EpisodeResult, Image, Question, Trajectory

FAMILIES = [
    ("Perceptual Grounding", "View Hallucination"),
    ("Perceptual Grounding", "Partial Occlusion"),
    ("Spatial Relations", "Linear Alignment"),
    ("Enumerative Perception", "Counting w Occlusion"),
]


def solid(width: int, height: int, rgb: tuple[int, int, int], corner: bool = True) -> Image:
    """A solid image with a white square in the bottom-right corner (to tell scaling from cropping)."""
    arr = np.zeros((height, width, 3), dtype=np.uint8)
    arr[:, :] = rgb
    if corner:
        s = max(2, min(width, height) // 8)
        arr[height - s :, width - s :] = 255
    return Image.from_array(arr)


def make_questions(n: int) -> list[Question]:
    """``n`` option questions spread over four subcategories in three families."""
    out = []
    for i in range(n):
        fam, sub = FAMILIES[i % len(FAMILIES)]
        out.append(
            Question(
                id=f"q{i:03d}",
                text=f"Is the red cube left of the blue box in scene {i}?",
                contract=AnswerContract(kind="option", options=["left", "right"]),
                family=fam,
                subcategory=sub,
                ground_truth="left" if i % 2 == 0 else "right",
            )
        )
    return out


def write_run(
    run_dir: Path,
    model: str,
    agents: list[str],
    questions: list[Question],
    verdict: Callable[[str, int], tuple[bool | None, float | None, str | None]],
    *,
    images_per_answer: int = 1,
    skip: set[tuple[str, str]] | None = None,
) -> Path:
    """Write run.json, questions.jsonl and one trajectory per (agent, question).

    ``verdict(agent, i)`` gives (correct, support, error) for question ``i``; ``skip`` leaves
    some episodes out entirely (never recorded).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.json").write_text(
        json.dumps({"agents": agents, "model": model, "dataset": "synthetic", "budget": 30, "seed": 0}),
        encoding="utf-8",
    )
    with open(run_dir / "questions.jsonl", "w", encoding="utf-8") as fh:
        for q in questions:
            fh.write(q.model_dump_json() + "\n")
    for a_idx, agent in enumerate(agents):
        for i, q in enumerate(questions):
            if skip and (agent, q.id) in skip:
                continue
            correct, support, error = verdict(agent, i)
            truth = str(q.ground_truth)
            wrong = "right" if truth == "left" else "left"
            answer = None if correct is None else (truth if correct else wrong)
            images = [
                solid(64, 48, (40 * (k + 1) % 256, 10 * i % 256, 30 * a_idx))
                for k in range(images_per_answer)
            ]
            result = EpisodeResult(
                question_id=q.id,
                agent=agent,
                model=model,
                family=q.family,
                subcategory=q.subcategory,
                answer=answer,
                raw_answer=answer,
                ground_truth=q.ground_truth,
                correct=correct,
                score=None if correct is None else float(correct),
                support=support,
                steps=3 * (a_idx + 1),
                calls=2 * (a_idx + 1),
                input_tokens=1000 * (a_idx + 1),
                output_tokens=100,
                reasoning_tokens=0,
                images_in_answer=len(images),
                wall_time_s=1.5,
                error=error,
            )
            traj = Trajectory(
                episode_id=f"{agent}-{q.id}",
                question_id=q.id,
                agent=agent,
                model=model,
                answer_images=images,
                answer_frame_ids=list(range(len(images))),
                result=result,
            )
            traj.save(run_dir / "episodes" / agent / q.id)
    return run_dir
