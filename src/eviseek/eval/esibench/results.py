"""Import ESI-Bench's official answer files into an eviseek run directory.

The official pipeline writes one ``<results>/<TASK_NAME>/<scene>/<room>/<qid>_answer.json`` per
question, holding ``source_json`` (the question record it ran), ``final_answer`` (answer,
answer_step, confidence, reasoning, steps, stopped_by), ``history`` (one entry per model step:
action, answer, confidence, reasoning, image, camera, action_result, raw_output, ...), the
``step_image_dir`` of its step images and the task's score fields (``correct`` among them). A
question the task skipped has ``skipped: true`` and no answer.

:func:`import_results` turns each file into an eviseek trajectory and result, so ``eviseek
score``, ``report``, ``judge`` and ``view`` work on runs of ESI-Bench's own agent.

One bad file never costs the rest: a file that is malformed, partial, too large, not a regular
file, matches no question, or whose step images are broken or lie outside the folders the import
may read, is reported by path with a one-line reason and skipped, whatever goes wrong with it.
The run is written into a temporary folder next to ``out`` and renamed to ``out`` only when
every file has been seen, so an interrupted import leaves no half run (the next import clears
the temporary folder and starts again).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eviseek.errors import ConfigError
from eviseek.eval.esibench.rules import as_dict
from eviseek.types import Action, Feedback, Image, ModelCall, Question, StepRecord, Trajectory
from eviseek.types.plans import ESIBenchOfficialOutcome, ESIBenchOfficialPlan

ANSWER_SUFFIX = "_answer.json"
MiB = 2**20


class ImportLimits(BaseModel):
    """What one answer file may weigh; a file over any limit is skipped with the limit named."""

    answer_bytes: int = 16 * MiB
    """An answer file (an official one with 30 steps is tens of KiB)."""
    image_bytes: int = 32 * MiB
    """One step image file."""
    image_pixels: int = 64 * MiB
    """One step image's width x height, read from its header before it is decoded."""


_TEMP_SUFFIX = ".importing"
_TEMP_MARK = ".eviseek-import"


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


def _read_regular(path: Path, limit: int, what: str, flag: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; never blocks on a FIFO or device."""
    if not stat.S_ISREG(path.stat().st_mode):
        raise ValueError(f"{what} {path} is not a regular file (a FIFO, socket or device); not read")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):  # replaced between the two looks
            raise ValueError(f"{what} {path} is not a regular file; not read")
        if info.st_size > limit:
            raise ValueError(
                f"{what} is {info.st_size / MiB:.1f} MiB, over the import's limit of {limit / MiB:g} MiB "
                f"({flag} raises it)"
            )
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{what} grew past the import's limit of {limit / MiB:g} MiB while being read")
    return data


def _load(file: Path, limits: ImportLimits) -> dict[str, Any]:
    data = _read_regular(file, limits.answer_bytes, "the answer file", "--max-answer-mb")
    try:
        text = data.decode("utf-8")
        loaded = json.loads(text)
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno}); a partial write?") from None
    except RecursionError:
        raise ValueError("its JSON nests too deeply to be an answer file") from None
    if not isinstance(loaded, dict):
        raise ValueError("not a JSON object")
    try:
        # JSON's \ud800 escapes can carry lone surrogates, which no UTF-8 file (the run) can hold.
        json.dumps(loaded, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("it holds text that is not valid Unicode (a lone surrogate)") from None
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"its values cannot be stored ({exc})") from None
    return loaded


def _why(exc: BaseException) -> str:
    """One line for a skipped file: the reason the import gives, or the exception's own words."""
    if isinstance(exc, RecursionError):
        return "it nests too deeply"
    text = " ".join(str(exc).split())[:400]
    if isinstance(exc, ValueError) and type(exc) is ValueError:
        return text or "invalid"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _shown(path: Path) -> str:
    """A path on one line (a name holding a newline would split the report)."""
    text = str(path)
    return text if text.isprintable() else ascii(text)


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


def _step_image(
    data: dict[str, Any], name: str, file: Path, step_roots: list[Path], allowed: list[Path]
) -> Path | None:
    """Where step image ``name`` is: the recorded folder, next to the answer file, or under a
    ``--step-images`` root; only inside ``allowed`` (resolved), else the file is refused."""
    recorded = Path(str(data.get("step_image_dir") or ""))
    candidates = [recorded / name, file.parent / name]
    tail = Path(*recorded.parts[-4:]) if len(recorded.parts) >= 4 else None
    for root in step_roots:
        if tail is not None:
            candidates.append(root / tail / name)
    outside: Path | None = None
    for candidate in candidates:
        if not candidate.exists():
            continue
        real = candidate.resolve()
        if _inside(real, allowed):
            return real
        outside = outside or real
    if outside is not None:
        raise ValueError(
            f"step image {name!r} is at {_shown(outside)}, outside the results root and every --step-images "
            "folder; the import copies images only from those (pass --step-images DIR to allow its folder)"
        )
    return None


def _open_image(path: Path, limits: ImportLimits) -> Image:
    """A step image checked before it is decoded: a regular file, its size, its pixel count."""
    from PIL import Image as PILImage

    data = _read_regular(path, limits.image_bytes, "step image", "--max-image-mb")

    def check(width: int, height: int) -> None:
        if width * height > limits.image_pixels:
            raise ValueError(
                f"step image {path.name} is {width}x{height} pixels, over the import's limit of "
                f"{limits.image_pixels / MiB:g} Mpx (--max-image-mpx raises it)"
            )

    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        # From the PNG header itself, before any decoder (or its own bomb check) sees the file.
        check(int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big"))
    try:
        with PILImage.open(io.BytesIO(data)) as pil:
            check(pil.width, pil.height)
            pil.load()  # a truncated file fails here, not later while the run is written
            image = Image.from_pil(pil)
    except ValueError:
        raise
    except Exception as exc:  # not an image, truncated, a decompression bomb ...
        raise ValueError(f"step image {path.name} cannot be read as an image ({_why(exc)})") from None
    image.path = str(path)
    return image


def trajectory_of(
    data: dict[str, Any],
    question: Question,
    agent: str,
    file: Path,
    step_roots: list[Path],
    *,
    allowed: list[Path] | None = None,
    limits: ImportLimits | None = None,
) -> Trajectory:
    """The eviseek trajectory of one official answer file (validated by the caller).

    Step images are read only from inside ``allowed`` (default: the answer file's folder and
    ``step_roots``), within ``limits``."""
    limits = limits or ImportLimits()
    allowed = allowed if allowed is not None else [p.resolve() for p in [file.parent, *step_roots]]
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
            _step_image(data, str(item.get("image")), file, step_roots, allowed)
            if item.get("image")
            else None
        )
        # Loaded: the run keeps its own copy.
        image = _open_image(image_path, limits) if image_path else None
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


# Long because it is one transaction: refuse an output folder it must not touch (each case with
# its own message), build the run in a temporary folder, convert every answer file (one bad file
# never costs the rest), then publish by rename; the parts share the temporary folder, the store
# and the report.
def import_results(
    results_root: str | Path,
    questions: list[Question],
    out: str | Path,
    *,
    agent: str = "esibench-official",
    step_roots: list[Path] | None = None,
    excluded: list[Question] | None = None,
    limits: ImportLimits | None = None,
) -> ImportReport:
    """Write ``out`` as an eviseek run directory holding every importable answer file.

    The run is built in ``<out>.importing`` and renamed to ``out`` at the end. ``out`` must not
    exist, or be an empty folder. Step images are copied only from inside ``results_root`` and
    ``step_roots``.
    """
    from eviseek.eval.config import RunConfig, save_config
    from eviseek.eval.store import ResultsStore
    from eviseek.types.question_file import write_questions
    from eviseek.types.rundir import RunDir

    limits = limits or ImportLimits()
    root = Path(results_root)
    if not root.is_dir():
        raise ConfigError(f"results folder {root} does not exist (give the official --results-root)")
    questions = [
        q if q.benchmark else q.model_copy(update={"benchmark": "esibench"}) for q in questions
    ]  # recorded, as the run is
    by_path = {q.metadata.get("esibench", {}).get("relpath"): q for q in questions}
    by_path.pop("", None)
    by_path.pop(None, None)
    if not by_path:
        raise ConfigError("--questions holds no ESI-Bench tree records (load them with esibench:PATH)")
    out = Path(out)
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise ConfigError(f"--out {out} is a file; give a new folder")
        if RunDir(out).exists():
            raise ConfigError(f"{out} already holds a run; import into a new folder")
        if any(out.iterdir()):
            raise ConfigError(
                f"{out} is not empty and holds no run (an interrupted import of an older eviseek?); "
                "remove it or import into a new folder"
            )
    temp = out.with_name(out.name + _TEMP_SUFFIX)
    if temp.exists():
        if not (temp / _TEMP_MARK).exists():
            raise ConfigError(f"{temp} exists and was not made by an import; move it away first")
        shutil.rmtree(temp)  # what an interrupted import left behind
    temp.mkdir(parents=True)
    (temp / _TEMP_MARK).write_text("an eviseek esibench import in progress; removed when it ends\n")
    allowed = [p.resolve() for p in [root, *(step_roots or [])]]
    left_out = {
        q.metadata["esibench"].get("relpath"): q.metadata["esibench"].get("excluded") for q in excluded or []
    }
    report = ImportReport(questions=len(questions))
    seen: dict[str, Path] = {}
    models: set[str] = set()
    digest = write_questions(temp, questions)
    with ResultsStore(temp) as store:
        for file in sorted(root.rglob(f"*{ANSWER_SUFFIX}")):
            try:
                found = _convert(file, by_path, left_out, seen, agent, step_roots or [], allowed, limits)
            except Exception as exc:  # one bad file, whatever is wrong with it, never costs the rest
                report.problems.append(f"{_shown(file)}: {_why(exc)}")
                continue
            if found is None:
                report.official_skips.append(f"{_shown(file)}: {_skip_reason(file, limits)}")
                continue
            question, traj = found
            seen[question.id] = file
            models.add(traj.model)
            assert traj.result is not None  # scored by _convert
            _save(traj, temp, agent, question.id)
            store.add(traj.result)
            report.imported += 1
            # The file's own verdict came from the official code, so it is checked against the
            # official rules, whichever rule set the run is scored by.
            official_record = _official(traj)
            official = official_record.correct
            answer = official_record.final_answer.get("answer")
            if official is not None and bool(official) != bool(_official_verdict(question, answer)):
                report.disagreements.append(question.id)
    save_config(
        RunConfig(
            agents=[agent],
            model=",".join(sorted(models)) or "unknown",
            dataset=f"esibench-results:{root}",
            questions_sha256=digest,
            benchmark="esibench",
        ),
        temp,
    )
    (temp / _TEMP_MARK).unlink()
    if out.is_dir():
        out.rmdir()  # empty (checked above); the finished run takes its place
    temp.rename(out)
    return report


def _official_verdict(question: Question, answer: Any) -> bool:
    """Whether ``answer`` is correct under ``esibench:official`` (the rules the file was scored by)."""
    from eviseek.answers import score_answer
    from eviseek.answers.esibench import OFFICIAL_RULES

    return score_answer(question, None if answer is None else str(answer), rules=OFFICIAL_RULES).correct


def _skip_reason(file: Path, limits: ImportLimits) -> str:
    try:
        return str(_load(file, limits).get("skip_reason"))
    except Exception:
        return "unknown"


def _convert(
    file: Path,
    by_path: dict[Any, Question],
    left_out: dict[Any, Any],
    seen: dict[str, Path],
    agent: str,
    step_roots: list[Path],
    allowed: list[Path],
    limits: ImportLimits,
) -> tuple[Question, Trajectory] | None:
    """One answer file as its question and scored trajectory (``None``: the official task
    skipped it). Raises for any problem; nothing is written."""
    from eviseek.eval.scoring import score_trajectory

    data = _load(file, limits)
    if data.get("skipped"):
        return None
    _validate(data)
    tail = _tail(str(data["source_json"]))
    question = by_path.get(tail)
    if question is None:
        if tail in left_out:
            raise ValueError(
                f"answers {tail}, which the evaluation set excludes ({left_out[tail]}); "
                "add ?all=1 to --questions to import it"
            )
        raise ValueError(f"answers {tail}, which is not in --questions")
    if question.id in seen:
        raise ValueError(f"answers {question.id} again (also {_shown(seen[question.id])})")
    traj = trajectory_of(data, question, agent, file, step_roots, allowed=allowed, limits=limits)
    answer = _official(traj).final_answer.get("answer")
    traj.result = traj.make_result(question, raw_answer=None if answer is None else str(answer))
    traj.result = score_trajectory(traj, question)
    # Serialised once here, so a value the run cannot hold skips the file instead of failing
    # while the run is written.
    traj.model_dump_json().encode("utf-8")
    return question, traj


def _save(traj: Trajectory, run: Path, agent: str, question_id: str) -> None:
    """Write a converted trajectory (its images, then its JSON, atomically)."""
    from eviseek.types.rundir import RunDir

    traj.save(RunDir(run).episode_dir(agent, question_id))
