"""Import ESI-Bench's official answer files into an eviseek run directory.

The official pipeline writes one ``<results>/<TASK_NAME>/<scene>/<room>/<qid>_answer.json`` per
question, holding ``source_json`` (the question record it ran), ``final_answer`` (answer,
answer_step, confidence, reasoning, steps, stopped_by), ``history`` (one entry per model step:
action, answer, confidence, reasoning, image, camera, action_result, raw_output, ...), the
``step_image_dir`` of its step images and the task's score fields (``correct`` among them). A
question the task skipped has ``skipped: true`` and no answer.

:func:`import_results` turns each file into an eviseek trajectory and result, so ``eviseek
score``, ``report``, ``judge`` and ``view`` work on runs of ESI-Bench's own agent. A file that is
malformed, partial or matches no question is reported by path and skipped; the rest go on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eviseek.errors import ConfigError
from eviseek.eval.esibench.rules import as_dict
from eviseek.types import Action, Feedback, Image, ModelCall, Question, StepRecord, Trajectory
from eviseek.types.plans import ESIBenchOfficialOutcome, ESIBenchOfficialPlan

ANSWER_SUFFIX = "_answer.json"


class ImportReport(BaseModel):
    """What an import did, file by file."""

    imported: int = 0
    questions: int = 0
    problems: list[str] = Field(default_factory=list)
    """``PATH: why`` for every answer file that was skipped."""
    official_skips: list[str] = Field(default_factory=list)
    """Answer files recording that the official task skipped the question."""
    disagreements: list[str] = Field(default_factory=list)
    """Question ids whose official ``correct`` differs from eviseek's ``esibench:official`` rules."""


def _tail(path: str, n: int = 5) -> str:
    return "/".join(Path(str(path).replace("\\", "/")).parts[-n:])


def _load(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read it ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno}); a partial write?") from exc
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _step_image(data: dict[str, Any], name: str, file: Path, step_roots: list[Path]) -> Path | None:
    recorded = Path(str(data.get("step_image_dir") or ""))
    candidates = [recorded / name, file.parent / name]
    tail = Path(*recorded.parts[-4:]) if len(recorded.parts) >= 4 else None
    for root in step_roots:
        if tail is not None:
            candidates.append(root / tail / name)
    return next((c for c in candidates if c.is_file()), None)


def trajectory_of(
    data: dict[str, Any], question: Question, agent: str, file: Path, step_roots: list[Path]
) -> Trajectory:
    """The eviseek trajectory of one official answer file (validated by the caller)."""
    final = data["final_answer"]
    model = str(data.get("model") or "")
    traj = Trajectory(
        episode_id=f"{agent}-{question.id}",
        question_id=question.id,
        agent=agent,
        model=model,
        config={"source": "esibench", "answer_file": str(file), "provider": data.get("provider")},
    )
    frame = 0
    last_image: Image | None = None
    for item in data.get("history") or []:
        if not isinstance(item, dict):
            raise ValueError("a history entry is not an object")
        step = int(item.get("step", len(traj.steps) + 1))
        traj.calls.append(
            ModelCall(
                stage="force_final_choice" if item.get("action") == "force_final_choice" else "act",
                model=model,
                output=str(item.get("raw_output") or ""),
                notes=[f"answer={item.get('answer')!r} confidence={item.get('confidence')}"],
            )
        )
        if item.get("action") == "force_final_choice":
            continue
        result = as_dict(item.get("action_result"))
        image_path = (
            _step_image(data, str(item.get("image") or ""), file, step_roots) if item.get("image") else None
        )
        image = Image.open(image_path) if image_path else None  # loaded: the run keeps its own copy
        if image is not None:
            last_image = image
        frame += 1
        traj.steps.append(
            StepRecord(
                index=step,
                frame_id=frame,
                image=image,
                action=Action(name=str(item.get("action") or "noop")),
                feedback=Feedback(
                    operation=str(result.get("operation") or ("stop" if not result else "noop")),
                    success=bool(result.get("success", result.get("handled", True))),
                    reason=str(result.get("error") or result.get("reason") or ""),
                    state={k: v for k, v in result.items() if k not in ("operation", "success")},
                ),
            )
        )
    if last_image is not None:
        traj.answer_images = [last_image]
        traj.answer_frame_ids = [frame]
    traj.plan = ESIBenchOfficialPlan(
        ended_by=final.get("stopped_by"),
        mode="active",
        official=ESIBenchOfficialOutcome.model_validate(
            {k: data.get(k) for k in ("correct", "soft_score", "stopped_by") if k in data}
            | {"final_answer": final}
        ),
    )
    return traj


def _official(traj: Trajectory) -> ESIBenchOfficialOutcome:
    """The official outcome :func:`trajectory_of` recorded in the plan."""
    if not isinstance(traj.plan, ESIBenchOfficialPlan):
        raise TypeError(f"{traj.episode_id} was not imported from ESI-Bench's answer files")
    return traj.plan.official


def _validate(data: dict[str, Any]) -> None:
    final = data.get("final_answer")
    if not isinstance(final, dict) or "answer" not in final:
        raise ValueError("no final_answer.answer (a partial or foreign file)")
    if not data.get("source_json"):
        raise ValueError("no source_json: cannot tell which question it answers")
    if not isinstance(data.get("history", []), list):
        raise ValueError("history is not a list")


def import_results(
    results_root: str | Path,
    questions: list[Question],
    out: str | Path,
    *,
    agent: str = "esibench-official",
    step_roots: list[Path] | None = None,
    excluded: list[Question] | None = None,
) -> ImportReport:
    """Write ``out`` as an eviseek run directory holding every importable answer file."""
    from eviseek.eval.datasets import write_questions
    from eviseek.eval.scoring import score_trajectory
    from eviseek.eval.store import ResultsStore
    from eviseek.types.rundir import RunDir

    root = Path(results_root)
    if not root.is_dir():
        raise ConfigError(f"results folder {root} does not exist (give the official --results-root)")
    by_path = {q.metadata.get("esibench", {}).get("relpath"): q for q in questions}
    by_path.pop("", None)
    by_path.pop(None, None)
    if not by_path:
        raise ConfigError("--questions holds no ESI-Bench tree records (load them with esibench:PATH)")
    out = Path(out)
    if RunDir(out).exists():
        raise ConfigError(f"{out} already holds a run; import into a new folder")
    left_out = {
        q.metadata["esibench"].get("relpath"): q.metadata["esibench"].get("excluded") for q in excluded or []
    }
    report = ImportReport(questions=len(questions))
    seen: dict[str, Path] = {}
    models: set[str] = set()
    digest = write_questions(out, questions)
    with ResultsStore(out) as store:
        for file in sorted(root.rglob(f"*{ANSWER_SUFFIX}")):
            try:
                data = _load(file)
                if data.get("skipped"):
                    report.official_skips.append(f"{file}: {data.get('skip_reason')}")
                    continue
                _validate(data)
                question = by_path.get(_tail(str(data["source_json"])))
                if question is None:
                    tail = _tail(str(data["source_json"]))
                    if tail in left_out:
                        raise ValueError(
                            f"answers {tail}, which the evaluation set excludes ({left_out[tail]}); "
                            "add ?all=1 to --questions to import it"
                        )
                    raise ValueError(f"answers {tail}, which is not in --questions")
                if question.id in seen:
                    raise ValueError(f"answers {question.id} again (also {seen[question.id]})")
                traj = trajectory_of(data, question, agent, file, step_roots or [])
            except (ValueError, TypeError, KeyError) as exc:
                report.problems.append(f"{file}: {exc}")
                continue
            seen[question.id] = file
            models.add(traj.model)
            official_record = _official(traj)
            answer = official_record.final_answer.get("answer")
            traj.result = traj.make_result(question, raw_answer=None if answer is None else str(answer))
            traj.result = score_trajectory(traj, question)
            traj.save(RunDir(out).episode_dir(agent, question.id))
            store.add(traj.result)
            report.imported += 1
            # The file's own verdict came from the official code, so it is checked against the
            # official rules, whichever rule set the run is scored by.
            official = official_record.correct
            if official is not None and bool(official) != bool(_official_verdict(question, answer)):
                report.disagreements.append(question.id)
    from eviseek.eval.config import RunConfig, save_config

    save_config(
        RunConfig(
            agents=[agent],
            model=",".join(sorted(models)) or "unknown",
            dataset=f"esibench-results:{root}",
            questions_sha256=digest,
        ),
        out,
    )
    return report


def _official_verdict(question: Question, answer: Any) -> bool:
    """Whether ``answer`` is correct under ``esibench:official`` (the rules the file was scored by)."""
    from eviseek.answers import score_answer
    from eviseek.answers.esibench import OFFICIAL_RULES

    as_official = question.model_copy(update={"metadata": {**question.metadata, "rules": OFFICIAL_RULES}})
    return score_answer(as_official, None if answer is None else str(answer)).correct
