"""EXPRESS-Bench's question files as eviseek questions (``express:PATH``).

EXPRESS-Bench (github.com/HCPLab-SYSU/EXPRESS-Bench) keeps its questions in one JSON file
(``data/express-bench.json``): a list of records, each with ``question``, ``answer``, ``type``,
``scene_id`` (an HM3D folder name such as ``00800-TEEsavR23oF``), ``start_position`` and
``goal_position`` (Habitat coordinates, y up), ``start_rotation`` (four numbers; its ``main.py``
reads them as w, x, y, z) and ``geodesic_distance`` (metres from the start to the goal). Its runner
numbers the questions by their place in the list; so do the ids here (``express-0000``, ...).

Every question is free text, hosted by ``eviseek/Express-v0`` (the Habitat bridge, which runs
where Habitat and HM3D are installed); the reference answer, goal and shortest path travel in the
record so EXPRESS-Bench's judge and metrics (docs/express.md) work on the results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eviseek import env_ids
from eviseek.errors import ConfigError
from eviseek.types import AnswerContract, Question

ENV_ID = env_ids.EXPRESS
FAMILY = "EXPRESS-Bench"
REQUIRED = (
    "question",
    "answer",
    "type",
    "scene_id",
    "start_position",
    "start_rotation",
    "goal_position",
    "geodesic_distance",
)


def _vector(record: dict[str, Any], key: str, n: int, where: str) -> list[float]:
    value = record[key]
    if not isinstance(value, list) or len(value) != n or not all(isinstance(v, (int, float)) for v in value):
        raise ConfigError(f"{where}: {key!r} must be a list of {n} numbers, got {value!r}")
    return [float(v) for v in value]


def question_of(record: dict[str, Any], index: int, source: str = "") -> Question:
    """The :class:`Question` for record ``index`` of an EXPRESS-Bench file."""
    where = f"{source or 'EXPRESS-Bench file'}: record {index}"
    if not isinstance(record, dict):
        raise ConfigError(f"{where}: expected an object, got {type(record).__name__}")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise ConfigError(
            f"{where} lacks {', '.join(missing)} (an EXPRESS-Bench record has {', '.join(REQUIRED)})"
        )
    for key in ("question", "answer", "scene_id"):
        if not isinstance(record[key], str) or not record[key].strip():
            raise ConfigError(f"{where}: {key!r} must be a non-empty string, got {record[key]!r}")
    if "-" not in record["scene_id"]:
        raise ConfigError(
            f"{where}: scene_id {record['scene_id']!r} is not an HM3D folder name like 00800-TEEsavR23oF"
        )
    start = _vector(record, "start_position", 3, where)
    rotation = _vector(record, "start_rotation", 4, where)
    goal = _vector(record, "goal_position", 3, where)
    try:
        shortest = float(record["geodesic_distance"])
    except (TypeError, ValueError):
        raise ConfigError(
            f"{where}: geodesic_distance must be a number, got {record['geodesic_distance']!r}"
        ) from None
    return Question(
        id=f"express-{index:04d}",
        text=record["question"].strip(),
        contract=AnswerContract(kind="text", format_hint="Answer in a short phrase."),
        family=FAMILY,
        subcategory=str(record["type"]),
        ground_truth=record["answer"].strip(),
        env_id=ENV_ID,
        scene={
            "scene_id": record["scene_id"],
            "start_position": start,
            "start_rotation": rotation,
            "goal_position": goal,
        },
        metadata={
            "express_index": index,
            "reference_answer": record["answer"].strip(),
            "target": {"position": goal, "frame": "habitat (x, y up, z)"},
            "shortest_path_m": shortest,
        },
    )


def load_express(path: str | Path) -> list[Question]:
    """Every question of an EXPRESS-Bench JSON file, in its order."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ConfigError(
            f"no EXPRESS-Bench question file at {p}; give express:PATH with PATH its data/express-bench.json"
        )
    try:
        records = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(records, list):
        raise ConfigError(f"{p}: expected a JSON list of question records, got {type(records).__name__}")
    return [question_of(r, i, str(p)) for i, r in enumerate(records)]
