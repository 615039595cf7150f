"""Reading ESI-Bench question records: a checkout, its ``dataset/json_clean`` tree, or HF rows.

ESI-Bench (github.com/ESI-Bench/ESI-Bench, MIT) stores one JSON record per question under
``dataset/json_clean/<Family>/<Subcategory>/<scene>/<room>/<name>.json``; its Hugging Face export
holds the same records as rows of ``questions.jsonl``. Either way a record has the fields
``id, big_task, small_task, runner_task, scene, room, question, answer, answer_type,
options_json, image_paths_json, metadata_json`` (the ``*_json`` fields are JSON strings).

The official pipeline does not run on the row itself: it rebuilds the task *payload* (the
decoded metadata with scene, room, question and ground truth put back). :func:`payload_of`
does the same here, so every rule reads the fields the official task code reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from eviseek.errors import ConfigError
from eviseek.types.jsonl import read_jsonl

ROW_FIELDS = (
    "id",
    "big_task",
    "small_task",
    "runner_task",
    "scene",
    "room",
    "question",
    "answer",
    "answer_type",
    "options_json",
    "image_paths_json",
    "metadata_json",
)


class ESIRecord(BaseModel):
    """One ESI-Bench question record as stored, plus where it was read from."""

    model_config = ConfigDict(extra="ignore")

    id: str
    big_task: str
    small_task: str
    runner_task: str
    scene: str = ""
    room: str = ""
    question: str = ""
    answer: str | None = None
    answer_type: str = ""
    options_json: str = ""
    image_paths_json: str = ""
    metadata_json: str = ""
    source: str = ""
    """The record's file (a tree record) or ``file.jsonl:LINE`` (an HF row)."""
    folder: str = ""
    """The folder its image names resolve against."""
    stem: str = ""
    """The record file's name without ``.json`` (empty for HF rows: they have no file)."""


def decode_field(value: Any) -> Any:
    """A ``*_json`` field decoded; a string that is not JSON stays a string (as officially)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return value


def payload_of(record: ESIRecord) -> dict[str, Any]:
    """The task payload the official pipeline builds from a row (metadata plus row fields)."""
    metadata = decode_field(record.metadata_json)
    payload: dict[str, Any] = dict(metadata) if isinstance(metadata, dict) else {}
    answer = decode_field(record.answer)
    payload["scene"] = record.scene or payload.get("scene") or "unknown_scene"
    payload["room"] = record.room or payload.get("room") or "unknown_room"
    if record.question and not payload.get("_question"):
        payload["_question"] = record.question
    if record.answer not in (None, ""):
        payload.setdefault("_ground_truth", answer)
        payload.setdefault("answer", answer)
    return payload


def find_dataset_root(path: str | Path) -> Path:
    """The folder holding the family folders, or the ``.jsonl`` file, for a user-given path."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ConfigError(
            f"ESI-Bench path {path} does not exist; give a checkout of "
            "github.com/ESI-Bench/ESI-Bench, its dataset/json_clean folder or a questions.jsonl"
        )
    if path.is_file():
        if path.suffix != ".jsonl":
            raise ConfigError(f"ESI-Bench file {path} is not a .jsonl of Hugging Face rows")
        return path
    for candidate in (
        path / "dataset" / "json_clean",
        path / "json_clean",
        path,
        path / "hf_dataset" / "data" / "questions.jsonl",
        path / "data" / "questions.jsonl",
        path / "questions.jsonl",
    ):
        if candidate.is_file():
            return candidate
        if candidate.is_dir() and any(candidate.glob("*/*/*/*/*.json")):
            return candidate
    raise ConfigError(
        f"no ESI-Bench records under {path}: expected dataset/json_clean/<Family>/<Subcategory>/"
        "<scene>/<room>/*.json or a questions.jsonl of Hugging Face rows"
    )


def iter_records(path: str | Path) -> Iterator[ESIRecord]:
    """Every record under ``path`` (sorted by file path for a tree, in file order for rows)."""
    root = find_dataset_root(path)
    if root.is_file():
        yield from _rows(root)
        return
    for file in sorted(root.glob("*/*/*/*/*.json")):
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{file}: not a readable JSON record ({exc})") from exc
        yield _record(data, str(file), file.parent, file.stem)


def _rows(file: Path) -> Iterator[ESIRecord]:
    for lineno, data in read_jsonl(file):
        yield _record(data, f"{file}:{lineno}", file.parent, "")


def _record(data: Any, source: str, folder: Path, stem: str) -> ESIRecord:
    if not isinstance(data, dict) or any(
        k not in data for k in ("id", "big_task", "small_task", "runner_task")
    ):
        raise ConfigError(
            f"{source}: not an ESI-Bench question record (needs id, big_task, small_task, "
            "runner_task, metadata_json, ...)"
        )
    fields = {k: ("" if data.get(k) is None and k != "answer" else data.get(k)) for k in ROW_FIELDS}
    fields["id"] = str(data["id"])
    if fields["answer"] is not None and not isinstance(fields["answer"], str):
        fields["answer"] = json.dumps(fields["answer"])
    return ESIRecord(**fields, source=source, folder=str(folder), stem=stem)
