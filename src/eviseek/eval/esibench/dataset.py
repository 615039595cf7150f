"""ESI-Bench's questions as eviseek :class:`~eviseek.types.Question` records, and their counts.

The paper evaluates 3,436 of the 3,502 public records. :func:`exclusion_of` says why a record is
left out, with the evidence it rests on:

* ``official:storage_variant``: the official Rigid Containment ``preprocess`` hook skips every
  record whose file name has ``__`` in it (60 records);
* ``official:missing_phase_reference``: the official Unobserved Change hook skips a record whose
  before/after ground-truth view list is empty (3 records; their renders report ``success: false``);
* ``ours:incomplete_reference_render``: an Unobserved Change record whose ground-truth render holds
  fewer box views than the record has boxes (1 record; our reading of "reference images that
  fail to render", from the record alone);
* ``ours:unrenderable_reference_image``: with image files present, a reference image that cannot
  be decoded or is one flat colour.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from eviseek import env_ids
from eviseek.answers.esibench import PAPER_RULES, RULE_SETS
from eviseek.errors import ConfigError
from eviseek.eval.esibench.records import ROW_FIELDS, ESIRecord, decode_field, iter_records, payload_of
from eviseek.eval.esibench.rules import contract_for, keyed, rule_for
from eviseek.types import Image, Question
from eviseek.types.taxonomy import SUBCATEGORIES, subcategory_rank

ENV_ID = env_ids.ESIBENCH


class LoadOptions(BaseModel):
    """How to load: ``images`` ``"require"`` (a missing file is an error) or ``"skip"`` (load
    without images and mark the questions); ``all`` keeps the excluded records; ``rules`` is the
    rule set the questions are scored by (``paper``, the default, or ``official``; see
    :mod:`eviseek.answers.esibench`)."""

    images: str = "require"
    all: bool = False
    rules: str = PAPER_RULES
    tasktext: str = "auto"
    """``auto``: attach each question's task text (:mod:`eviseek.envs.esibench.task_text`) when an
    ESI-Bench checkout is at hand (the loaded path is one, or ``$ESI_BENCH_ROOT`` names one);
    ``require``: a missing checkout is an error; ``off``: never."""


def parse_spec(spec: str) -> tuple[str, LoadOptions]:
    """``PATH[?images=skip&all=1&rules=paper|official&tasktext=auto|require|off]`` into the path
    and the options."""
    path, _, query = spec.partition("?")
    opts: dict[str, Any] = {}
    for part in filter(None, query.split("&")):
        key, _, value = part.partition("=")
        if key == "images" and value in ("require", "skip"):
            opts["images"] = value
        elif key == "all" and value in ("0", "1", "true", "false", ""):
            opts["all"] = value in ("1", "true", "")
        elif key == "tasktext" and value in ("auto", "require", "off"):
            opts["tasktext"] = value
        elif key == "rules" and f"esibench:{value.removeprefix('esibench:')}" in RULE_SETS:
            opts["rules"] = f"esibench:{value.removeprefix('esibench:')}"
        else:
            raise ConfigError(
                f"esibench option {part!r} not understood; use images=require|skip, all=0|1, "
                "rules=paper|official and tasktext=auto|require|off, "
                "e.g. esibench:PATH?images=skip&all=1&rules=official"
            )
    return path, LoadOptions(**opts)


def _gt_images(payload: dict[str, Any], phase: str) -> list[dict[str, Any]]:
    gt_view = ((payload.get("question_data") or {}).get("render") or {}).get("gt_view") or {}
    entry = (
        gt_view.get(phase) if isinstance(gt_view.get(phase), dict) else keyed(gt_view.get("image")).get(phase)
    )
    return [i for i in (entry or {}).get("images") or [] if isinstance(i, dict) and i.get("image_path")]


def reference_names(task: str, payload: dict[str, Any]) -> list[str]:
    """The file names of the images the task's reference hooks hand to the model."""
    if task == "deformable":
        name = ((payload.get("render") or {}).get("main_view") or {}).get("image_path")
        return [str(name)] if name else []
    if task == "unobserved_changes":
        firsts = [_gt_images(payload, p)[:1] for p in ("image1", "image2")]
        return [str(f[0]["image_path"]) for f in firsts if f]
    return []


def exclusion_of(record: ESIRecord, payload: dict[str, Any]) -> str | None:
    """Why the paper's evaluation set leaves this record out (see the module docstring)."""
    task = record.runner_task
    if task == "storage" and "__" in record.stem:
        return "official:storage_variant"
    if task == "unobserved_changes":
        first, second = _gt_images(payload, "image1"), _gt_images(payload, "image2")
        if not first or not second:
            return "official:missing_phase_reference"
        pose = second[0].get("camera_pose") or {}
        if not pose.get("position") or not pose.get("quaternion_xyzw"):
            return "official:missing_phase2_camera_pose"
        boxes = int((payload.get("question_data") or {}).get("box_count") or 0)
        if boxes and (len(first) < boxes or len(second) < boxes):
            return "ours:incomplete_reference_render"
    return None


def _resolve(name: str, record: ESIRecord, root: Path) -> Path | None:
    for base in (Path(record.folder), root):
        candidate = base / name
        if candidate.is_file():
            return candidate
    return None


def _open_render(path: Path) -> Image | None:
    """The image at ``path``, or None when it cannot be decoded or is one flat colour."""
    try:
        image = Image.open(path)
    except Exception:
        return None
    pixels = image.array().reshape(-1, 3)
    return None if (pixels.min(axis=0) == pixels.max(axis=0)).all() else image


def relpath_of(record: ESIRecord) -> str:
    """``Family/Subcategory/scene/room/file.json`` for tree records (matches answer files)."""
    if not record.stem:
        return ""
    parts = Path(record.source).parts
    return "/".join(parts[-5:])


def to_question(record: ESIRecord, root: Path, options: LoadOptions) -> tuple[Question, str | None]:
    """One record as a :class:`Question`, and the reason it is excluded (or None)."""
    payload = payload_of(record)
    task = record.runner_task
    rule = rule_for(task, payload, record.stem)
    raw_options = decode_field(record.options_json)
    contract, truth = contract_for(task, record.answer_type, raw_options, rule)
    reason = exclusion_of(record, payload)
    refs: list[Image] = []
    missing: list[str] = []
    for name in reference_names(task, payload):
        path = _resolve(name, record, root)
        if path is None:
            if options.images == "require" and reason is None:
                raise ConfigError(
                    f"{record.source}: reference image {name} not found next to the record or under {root}; "
                    "use a checkout with the images (the Hugging Face dataset) or load with "
                    "esibench:PATH?images=skip"
                )
            missing.append(name)
            continue
        image = _open_render(path)
        if image is None:
            reason = reason or "ours:unrenderable_reference_image"
            continue
        refs.append(image)
    text = record.question
    if task == "action":
        from eviseek.eval.esibench.rules import best_view

        text = str(best_view(payload).get("question") or text)
    question = Question(
        id=f"esibench-{record.id}",
        text=text,
        contract=contract,
        family=record.big_task,
        subcategory=record.small_task,
        ground_truth=truth,
        reference_images=refs,
        env_id=ENV_ID,
        scene={"scene": record.scene, "room": record.room},
        metadata={
            "rules": options.rules,
            "esibench": {
                "id": record.id,
                "task": task,
                "rule": rule.model_dump(mode="json"),
                "source": record.source,
                "relpath": relpath_of(record),
                "stem": record.stem,
                "answer_type": record.answer_type,
                "image_files": decode_field(record.image_paths_json) or [],
                "images_missing": missing,
                "excluded": reason,
            },
        },
    )
    return question, reason


def load_esibench(spec: str) -> list[Question]:
    """The dataset loader behind ``esibench:PATH[?images=skip&all=1]``."""
    path, options = parse_spec(spec)
    questions, _ = load_with_exclusions(path, options)
    return questions


def load_with_exclusions(path: str | Path, options: LoadOptions) -> tuple[list[Question], list[Question]]:
    """The evaluation questions and the excluded ones (with ``all`` every record is kept)."""
    from eviseek.eval.esibench.records import find_dataset_root

    root = find_dataset_root(path)
    base = root.parent if root.is_file() else root
    checkout = task_checkout(path, options.tasktext)
    kept: list[Question] = []
    dropped: list[Question] = []
    for record in iter_records(root):
        question, reason = to_question(record, base, options)
        if checkout is not None:
            attach_task_text(
                question, record, checkout, strict=options.tasktext == "require" and reason is None
            )
        (kept if reason is None or options.all else dropped).append(question)
    return kept, dropped


def task_checkout(path: str | Path, mode: str = "auto") -> Path | None:
    """The ESI-Bench checkout whose task modules supply the task text, or None (see
    :attr:`LoadOptions.tasktext`)."""
    import os

    if mode == "off":
        return None
    start = Path(path).expanduser().resolve()
    candidates = [start, *start.parents][:4]
    env = os.environ.get("ESI_BENCH_ROOT")
    if env:
        candidates.append(Path(env).expanduser().resolve())
    for c in candidates:
        if (c / "src" / "active_explore" / "pipeline.py").is_file() and (
            c / "src" / "active_explore" / "tasks"
        ).is_dir():
            return c
    if mode == "require":
        raise ConfigError(
            f"no ESI-Bench checkout found at {path} or in $ESI_BENCH_ROOT; the task text comes from its "
            "task modules (src/active_explore/tasks), so load a checkout of github.com/ESI-Bench/ESI-Bench "
            "or use tasktext=auto|off"
        )
    return None


def attach_task_text(
    question: Question, record: ESIRecord, checkout: Path, *, strict: bool = False, cache: bool = False
) -> None:
    """Render the record's task text from ``checkout`` into the question: ``guidance`` (what every
    agent gets as task advice) and ``metadata["esibench"]["task_text"]`` (the full texts, actions
    and which hooks supplied them). A record the task cannot render keeps its error instead
    (``strict``: raises it). ``cache``: reuse the rendering kept for this checkout state and
    record (:mod:`eviseek.envs.esibench.text_cache`)."""
    from eviseek.envs.esibench.offline import load_offline
    from eviseek.envs.esibench.task_text import TaskText, task_text

    meta = question.metadata["esibench"]
    row = {k: getattr(record, k) for k in ROW_FIELDS}

    def render() -> TaskText:
        pipeline, tasks = load_offline(checkout)
        if record.runner_task not in tasks:
            raise ConfigError(f"the checkout has no task module {record.runner_task!r}")
        return task_text(pipeline, tasks, row, record.runner_task, record.source, checkout=str(checkout))

    try:
        if cache:
            from eviseek.envs.esibench.text_cache import cached_task_text

            text = cached_task_text(checkout, row, {"task": record.runner_task}, render)
        else:
            text = render()
    except Exception as exc:
        if strict:
            raise ConfigError(f"{record.source}: no task text from {checkout}: {exc}") from exc
        meta["task_text_error"] = f"{type(exc).__name__}: {exc}"[:500]
        return
    question.guidance = text.guidance
    question.contract.task_format = text.answer_format
    meta["task_text"] = text.model_dump(mode="json")


class SubcategoryCount(BaseModel):
    """One row of ``eviseek esibench stats``."""

    family: str
    subcategory: str
    records: int
    questions: int
    paper: int | None
    excluded: dict[str, int]


PAPER_COUNTS: dict[str, int] = {s.key: s.paper_questions for s in SUBCATEGORIES}
"""The #Q column of the paper's Table 5, keyed ``Family/Subcategory`` (from the taxonomy table)."""


def count_subcategories(path: str | Path) -> list[SubcategoryCount]:
    """Records, evaluation questions and exclusions per subcategory, beside the paper's #Q."""
    kept, dropped = load_with_exclusions(path, LoadOptions(images="skip"))
    records: Counter[tuple[str, str]] = Counter()
    questions: Counter[tuple[str, str]] = Counter()
    reasons: dict[tuple[str, str], Counter[str]] = {}
    for q in kept + dropped:
        records[(q.family, q.subcategory)] += 1
    for q in kept:
        questions[(q.family, q.subcategory)] += 1
    for q in dropped:
        reasons.setdefault((q.family, q.subcategory), Counter())[str(q.metadata["esibench"]["excluded"])] += 1
    return [
        SubcategoryCount(
            family=f,
            subcategory=s,
            records=records[(f, s)],
            questions=questions[(f, s)],
            paper=PAPER_COUNTS.get(f"{f}/{s}"),
            excluded=dict(reasons.get((f, s), {})),
        )
        for f, s in sorted(records, key=lambda fs: (subcategory_rank(*fs), fs))
    ]
