"""Training data for AutoTool: one row format, converters from public layouts, a synthetic generator.

:class:`TrainingRow` is what every trainer here consumes. Converters read the layouts the
field publishes:

* DeepEyes parquet rows (``data_source``, ``prompt`` chat list, ``images`` list of bytes,
  ``reward_model.ground_truth``, ``extra_info``) - :func:`from_deepeyes_row`;
* V* rows (question, options, target box) - :func:`from_vstar_row`;
* ArxivQA rows (question, lettered options, label) - :func:`from_arxivqa_row`;
* ThinkLite-VL rows (problem, answer) - :func:`from_thinklite_row`.

:func:`synthetic_rows` wraps :mod:`eviseek.envs.image.synthetic` (high-resolution images with one
small target, for questions where zooming is needed, and a large layout, for questions where it
is not; ground truth and the target's box drawn deterministically from a seed) as training rows:
data for tests and smoke training.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from eviseek.autotool.datasets import iter_rows
from eviseek.autotool.prompts import answer_format, system_prompt, user_prompt
from eviseek.envs.image.synthetic import SyntheticConfig, format_options, synthetic_question
from eviseek.types import AnswerContract, AnswerKind, Image, Question


class TrainingRow(BaseModel):
    """One training question with its image(s) and what the rewards need."""

    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")

    id: str
    source: str
    """Where it came from: ``vstar``, ``chart``, ``thinklite``, ``synthetic``..."""
    question: str
    """The question text, options included when it has any."""
    images: list[bytes] = Field(default_factory=list)
    """Encoded images (PNG or JPEG), in prompt order."""
    ground_truth: str
    answer_kind: AnswerKind = "text"
    options: list[str] | None = None
    """Option texts in display order (the question lists them as (A), (B)...)."""
    needs_zoom: bool | None = None
    """Whether the answer needs a closer look (known for synthetic rows; ``None`` otherwise)."""
    target_boxes: list[list[float]] = Field(default_factory=list)
    """Boxes ``[x1, y1, x2, y2]`` of the evidence in original pixels of the first image."""
    extra_info: dict[str, Any] = Field(default_factory=dict)

    def pil_images(self) -> list[Any]:
        """The images decoded as RGB PIL images."""
        from PIL import Image as PILImage

        return [PILImage.open(io.BytesIO(b)).convert("RGB") for b in self.images]

    def answer_format(self) -> str:
        """The line that tells the model how to answer."""
        return answer_format(self.answer_kind, self.options)

    def prompt_messages(self, *, tools_in_system: bool = True) -> list[dict[str, Any]]:
        """The prompt as TRL's conversational format: a system turn and a user turn with the images.

        ``tools_in_system=False`` leaves the tool list out of the system prompt, for trainers
        whose chat template renders the tools itself (TRL's ``tools=``).
        """
        content: list[dict[str, Any]] = [{"type": "image"} for _ in self.images]
        content.append(
            {"type": "text", "text": user_prompt(self.question, answer_format=self.answer_format())}
        )
        return [
            {"role": "system", "content": system_prompt(tools=tools_in_system)},
            {"role": "user", "content": content},
        ]

    def to_trl(self, *, tools_in_system: bool = True) -> dict[str, Any]:
        """A dataset row for TRL's GRPOTrainer: ``prompt``, ``images`` (PIL) and reward columns."""
        return {
            "prompt": self.prompt_messages(tools_in_system=tools_in_system),
            "images": self.pil_images(),
            "ground_truth": self.ground_truth,
            "answer_kind": self.answer_kind,
            "options": json.dumps(self.options) if self.options else "",
            "question": self.question,
            "source": self.source,
            "needs_zoom": -1 if self.needs_zoom is None else int(self.needs_zoom),
            "target_boxes": json.dumps(self.target_boxes),
        }

    def to_question(self) -> Question:
        """The row as an eviseek :class:`Question` (first image as the initial image)."""
        img = Image.from_pil(self.pil_images()[0]) if self.images else None
        return Question(
            id=self.id,
            text=self.question,
            contract=AnswerContract(kind=self.answer_kind, options=self.options),
            family=self.source,
            ground_truth=self.ground_truth,
            initial_image=img,
            metadata={"needs_zoom": self.needs_zoom, "target_boxes": self.target_boxes, **self.extra_info},
        )


# ---------------------------------------------------------------- helpers


def _image_bytes(value: Any, base_dir: Path | None = None) -> bytes:
    """Bytes of an image given as bytes, ``{"bytes": ...}``, a path, or a PIL image."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dict):
        if value.get("bytes") is not None:
            return bytes(value["bytes"])
        if value.get("path"):
            return _image_bytes(value["path"], base_dir)
    if isinstance(value, str):
        path = Path(value)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.exists():
            raise FileNotFoundError(f"image file {path} does not exist (from a row's image field)")
        return path.read_bytes()
    if hasattr(value, "save"):
        buf = io.BytesIO()
        value.convert("RGB").save(buf, format="PNG")
        return buf.getvalue()
    raise ValueError(f"cannot read an image from a value of type {type(value).__name__}")


_OPT_RE = re.compile(r"\(([A-H])\)\s*")


def split_options(text: str) -> tuple[str, list[str]]:
    """Split ``"Question? (A) red (B) blue"`` into the question and the option texts."""
    parts = _OPT_RE.split(text)
    if len(parts) < 4:
        return text.strip(), []
    head = parts[0].strip()
    opts = [parts[k + 1].strip().rstrip(",;").strip() for k in range(1, len(parts) - 1, 2)]
    return head, [o for o in opts if o]


def _kind_of(answer: str, options: list[str] | None) -> AnswerKind:
    from eviseek.autotool.scoring import infer_kind

    return infer_kind(answer, options)


def _letter_to_option(label: str, options: list[str]) -> str:
    m = re.fullmatch(r"\s*\(?([A-Ha-h])\)?\.?\s*", label or "")
    if m and ord(m.group(1).upper()) - 65 < len(options):
        return options[ord(m.group(1).upper()) - 65]
    return label


# ---------------------------------------------------------------- converters


def from_deepeyes_row(row: dict[str, Any], index: int = 0) -> TrainingRow:
    """Convert one DeepEyes parquet row (``data_source``, ``prompt``, ``images``, ``reward_model``...)."""
    for key in ("prompt", "reward_model"):
        if key not in row:
            raise ValueError(f"not a DeepEyes row: column {key!r} is missing (have {sorted(row)})")
    extra = dict(row.get("extra_info") or {})
    truth = (row.get("reward_model") or {}).get("ground_truth")
    if truth is None:
        raise ValueError("DeepEyes row has no reward_model.ground_truth")
    question = extra.get("question")
    if not question:
        prompt = row["prompt"]
        users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        text = users[-1].get("content", "") if users else ""
        question = (
            text
            if isinstance(text, str)
            else " ".join(p.get("text", "") for p in text if isinstance(p, dict))
        )
        question = question.replace("<image>", "").strip()
    images = [_image_bytes(v) for v in (row.get("images") or [])]
    head, options = split_options(str(question))
    truth_s = str(truth)
    if options:
        truth_s = _letter_to_option(truth_s, options)
    source = str(row.get("data_source") or "deepeyes")
    return TrainingRow(
        id=str(extra.get("index", index)),
        source="thinklite" if source.startswith("thinklite") else source,
        question=format_options(head, options) if options else str(question),
        images=images,
        ground_truth=truth_s,
        answer_kind=_kind_of(truth_s, options or None),
        options=options or None,
        extra_info={k: v for k, v in extra.items() if isinstance(v, (str, int, float, bool))},
    )


def from_vstar_row(row: dict[str, Any], index: int = 0, base_dir: Path | None = None) -> TrainingRow:
    """Convert a V*-style row: ``question``, ``options`` (correct first in the source), ``bbox``..."""
    options = [str(o) for o in row.get("options") or []]
    truth = str(row.get("answer") or (options[0] if options else ""))
    if options:
        truth = _letter_to_option(truth, options)
    boxes = row.get("bbox") or row.get("target_boxes") or []
    if boxes and not isinstance(boxes[0], (list, tuple)):
        boxes = [boxes]
    # V* stores [x, y, w, h]; convert when told so.
    if row.get("bbox_format", "xywh") == "xywh":
        boxes = [[b[0], b[1], b[0] + b[2], b[1] + b[3]] for b in boxes]
    return TrainingRow(
        id=str(row.get("id", row.get("question_id", index))),
        source="vstar",
        question=format_options(str(row["question"]), options) if options else str(row["question"]),
        images=[_image_bytes(row["image"], base_dir)],
        ground_truth=truth,
        answer_kind="option" if options else _kind_of(truth, None),
        options=options or None,
        needs_zoom=True,
        target_boxes=[[float(v) for v in b] for b in boxes],
        extra_info={"target_object": row.get("target_object")} if row.get("target_object") else {},
    )


def from_arxivqa_row(row: dict[str, Any], index: int = 0, base_dir: Path | None = None) -> TrainingRow:
    """Convert an ArxivQA row: ``question``, ``options`` like ``"A. text"``, ``label`` letter."""
    options = [re.sub(r"^\s*\(?[A-H][\.\)]\s*", "", str(o)) for o in row.get("options") or []]
    label = str(row.get("label", "")).strip()
    truth = _letter_to_option(label, options) if options else label
    return TrainingRow(
        id=str(row.get("id", index)),
        source="chart",
        question=format_options(str(row["question"]), options) if options else str(row["question"]),
        images=[_image_bytes(row["image"], base_dir)],
        ground_truth=truth,
        answer_kind="option" if options else _kind_of(truth, None),
        options=options or None,
        extra_info={"rationale": str(row["rationale"])[:2000]} if row.get("rationale") else {},
    )


def from_thinklite_row(row: dict[str, Any], index: int = 0, base_dir: Path | None = None) -> TrainingRow:
    """Convert a ThinkLite-VL row: ``problem`` (or ``question``), ``answer``, ``image``."""
    text = str(row.get("problem") or row.get("question") or "").replace("<image>", "").strip()
    if not text:
        raise ValueError("ThinkLite row has neither 'problem' nor 'question'")
    _, options = split_options(text)
    truth = str(row.get("answer", ""))
    if options:
        truth = _letter_to_option(truth, options)
    return TrainingRow(
        id=str(row.get("id", index)),
        source="thinklite",
        question=text,
        images=[_image_bytes(row["image"], base_dir)],
        ground_truth=truth,
        answer_kind=_kind_of(truth, options or None),
        options=options or None,
        needs_zoom=False,
    )


CONVERTERS = {
    "deepeyes": from_deepeyes_row,
    "vstar": from_vstar_row,
    "arxivqa": from_arxivqa_row,
    "thinklite": from_thinklite_row,
}


def read_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """Rows of a ``.parquet`` (extra ``train`` for pyarrow), ``.jsonl`` or ``.json`` file.

    The benchmark reader :func:`eviseek.autotool.datasets.iter_rows` does the reading; training
    data is one file, so folders and ``.tsv`` are refused here.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data file {path} does not exist")
    if path.suffix not in (".parquet", ".jsonl", ".json"):
        raise ValueError(f"unsupported data file {path.name}: use .parquet, .jsonl or .json")
    yield from iter_rows(path)


def load_training_rows(path: str | Path, layout: str, limit: int | None = None) -> list[TrainingRow]:
    """Read a file in a public ``layout`` (``deepeyes``, ``vstar``, ``arxivqa``, ``thinklite``)."""
    if layout not in CONVERTERS:
        raise ValueError(f"unknown layout {layout!r}; choose one of {', '.join(CONVERTERS)}")
    conv = CONVERTERS[layout]
    base = Path(path).parent
    out: list[TrainingRow] = []
    for i, row in enumerate(read_rows(path)):
        if limit is not None and i >= limit:
            break
        out.append(conv(row, i) if layout == "deepeyes" else conv(row, i, base))  # type: ignore[call-arg]
    return out


# ---------------------------------------------------------------- synthetic data


def synthetic_row(
    seed: int, config: SyntheticConfig | None = None, *, needs_zoom: bool | None = None
) -> TrainingRow:
    """One synthetic high-resolution question as a training row, fully determined by ``seed``
    (drawn by :func:`eviseek.envs.image.synthetic.synthetic_question`)."""
    item = synthetic_question(seed, config, needs_zoom=needs_zoom)
    return TrainingRow(
        id=item.id,
        source="synthetic",
        question=item.question,
        images=[item.image],
        ground_truth=item.ground_truth,
        answer_kind="option",
        options=item.options,
        needs_zoom=item.needs_zoom,
        target_boxes=item.target_boxes,
        extra_info=item.extra_info,
    )


def synthetic_rows(n: int, seed: int = 0, config: SyntheticConfig | None = None) -> list[TrainingRow]:
    """``n`` synthetic rows; row ``i`` uses seed ``seed * 100003 + i`` (stable under slicing)."""
    if n < 0:
        raise ValueError("n must be non-negative")
    return [synthetic_row(seed * 100_003 + i, config) for i in range(n)]


def save_rows(rows: list[TrainingRow], path: str | Path) -> Path:
    """Write rows to ``.parquet`` (pyarrow, extra ``train``) or ``.jsonl`` (images base64)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        from eviseek._lazy import require

        pa = require("pyarrow", "train", "writing parquet training data")
        pq = require("pyarrow.parquet", "train", "writing parquet training data")
        records = [r.model_dump(mode="python") for r in rows]
        for rec in records:
            rec["extra_info"] = json.dumps(rec["extra_info"])
        pq.write_table(pa.Table.from_pylist(records), path)
    elif path.suffix == ".jsonl":
        with open(path, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(r.model_dump_json() + "\n")
    else:
        raise ValueError(f"unsupported output {path.name}: use .parquet or .jsonl")
    return path


def load_saved_rows(path: str | Path) -> list[TrainingRow]:
    """Read rows written by :func:`save_rows`."""
    out = []
    for rec in read_rows(path):
        if isinstance(rec.get("extra_info"), str):
            rec["extra_info"] = json.loads(rec["extra_info"])
        out.append(TrainingRow.model_validate(rec))
    return out
