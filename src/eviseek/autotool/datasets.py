"""Local loaders for AutoTool's evaluation benchmarks, returning eviseek :class:`Question` records.

Supported layouts (files only; nothing is downloaded):

* **V* Bench**, lmms-eval layout: parquet (or JSONL) rows with ``image``, ``text`` (the question
  followed by ``(A) ... (B) ...``), ``label`` (letter or option text), ``category``
  (``direct_attributes`` / ``relative_position``) and ``question_id``. The source lists the
  correct option first, which inflates scores, so options are shuffled with a seed.
* **HR-Bench 4K/8K**: ``hr_bench_4k.tsv`` / ``hr_bench_8k.tsv`` with ``index``, ``question``,
  ``A``-``D``, ``answer`` (letter), ``category`` (``single`` / ``cross``), ``cycle_category`` and
  ``image`` (base64). Each question appears once per option cycle; the rows already rotate the
  options, so they are kept as they are and accuracy is averaged over cycles.
* **POPE**: ``question_id``, ``question``, ``answer`` (yes/no), ``image``, ``category``
  (adversarial / popular / random).
* **RefCOCO-style grounding**: ``image``, a referring expression (``expression``, ``sentence``,
  ``question`` or ``answer``) and ``bbox`` (COCO ``[x, y, w, h]`` unless ``bbox_format`` says
  ``xyxy``); correct at IoU >= 0.5.

Images are written once into ``image_dir`` and referenced by path, so a benchmark of 8K images
is never held in memory all at once; the evaluation loads one episode's image at a time.
"""

from __future__ import annotations

import base64
import binascii
import csv
import hashlib
import io
import json
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from eviseek.errors import ConfigError, SettingError
from eviseek.types import AnswerContract, Image, Question
from eviseek.types.atomic import write_atomic

DatasetKind = Literal["vstar", "hrbench", "pope", "grounding", "synthetic", "reasoning", "reasonseg"]
KINDS: dict[str, DatasetKind] = {
    "vstar": "vstar",
    "hrbench": "hrbench",
    "hrbench4k": "hrbench",
    "hrbench8k": "hrbench",
    "pope": "pope",
    "refcoco": "grounding",
    "refcoco+": "grounding",
    "refcocog": "grounding",
    "grounding": "grounding",
    **{
        name: "reasoning"
        for name in ("mathvista", "mathverse", "mathvision", "wemath", "dynamath", "logicvista")
    },
    "synthetic": "synthetic",
    "reasonseg": "reasonseg",
}


# ------------------------------------------------------------------ reading files


def iter_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """Rows of a ``.parquet``, ``.jsonl``, ``.json`` or ``.tsv`` file, or of every such file in a folder."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"dataset path {path} does not exist")
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in (".parquet", ".jsonl", ".json", ".tsv"))
        if not files:
            raise ConfigError(f"no .parquet, .jsonl, .json or .tsv files under {path}")
        for f in files:
            yield from iter_rows(f)
        return
    if path.suffix == ".parquet":
        from eviseek._lazy import require

        pq = require("pyarrow.parquet", "train", "reading parquet files")
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=16):
            yield from batch.to_pylist()
    elif path.suffix == ".jsonl":
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise ConfigError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
    elif path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        yield from (data if isinstance(data, list) else [data])
    elif path.suffix == ".tsv":
        csv.field_size_limit(sys.maxsize)  # base64 images make fields of tens of megabytes
        with open(path, encoding="utf-8", newline="") as fh:
            yield from csv.DictReader(fh, delimiter="\t")
    else:
        raise ConfigError(f"unsupported dataset file {path.name}: use .parquet, .jsonl, .json or .tsv")


class ImageStore:
    """Writes benchmark images once under a folder and returns path-backed :class:`Image` records."""

    def __init__(self, directory: str | Path, base_dir: str | Path | None = None) -> None:
        self.directory = Path(directory)
        self.base_dir = Path(base_dir) if base_dir is not None else None

    def image(self, value: Any) -> Image:
        """A lazily loaded :class:`Image` from bytes, ``{"bytes"|"path"}``, base64 text or a path."""
        from PIL import Image as PILImage

        if isinstance(value, dict):
            value = value.get("bytes") or value.get("path")
        if isinstance(value, str):
            candidate = Path(value)
            if self.base_dir is not None and not candidate.is_absolute():
                candidate = self.base_dir / candidate
            if _is_file(candidate):
                with PILImage.open(candidate) as pil:
                    w, h = pil.size
                return Image(path=str(candidate.resolve()), width=w, height=h)
            try:
                value = base64.b64decode(value, validate=False)
            except (binascii.Error, ValueError) as exc:
                raise ConfigError(
                    f"image field is neither an existing file nor base64 ({value[:40]!r}...)"
                ) from exc
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise ConfigError(f"cannot read an image from a field of type {type(value).__name__}")
        data = bytes(value)
        try:
            with PILImage.open(io.BytesIO(data)) as pil:
                w, h = pil.size
                fmt = (pil.format or "png").lower()
        except Exception as exc:
            raise ConfigError(f"an image field holds bytes that are not a readable image ({exc})") from exc
        name = hashlib.sha256(data).hexdigest()[:24] + "." + fmt
        path = self.directory / name
        if not path.exists():
            write_atomic(path, data)
        return Image(path=str(path.resolve()), width=w, height=h)


def _is_file(path: Path) -> bool:
    """Whether ``path`` names an existing file (base64 text makes names too long for the OS)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


# ------------------------------------------------------------------ options


_OPTION = re.compile(r"\(([A-H])\)\s*")
_INSTRUCTION_TAIL = re.compile(r"\s*answer with the option'?s letter.*$", re.IGNORECASE | re.DOTALL)


def split_question(text: str) -> tuple[str, list[str]]:
    """``"Q? (A) red (B) blue\\nAnswer with ..."`` -> ``("Q?", ["red", "blue"])``."""
    text = _INSTRUCTION_TAIL.sub("", text)
    parts = _OPTION.split(text)
    if len(parts) < 4:
        return text.strip(), []
    options = []
    for k in range(1, len(parts) - 1, 2):
        opt = parts[k + 1].split("\n")[0].strip().rstrip(",;").strip()
        options.append(opt)
    return parts[0].strip(), options


def shuffle_options(options: list[str], key: str, seed: int) -> list[str]:
    """A seeded permutation of ``options``, different per question ``key``, same on every run.

    Every position is equally likely for the correct option; the source order (correct first in
    V*) is not kept.
    """
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    out = list(options)
    rng.shuffle(out)
    return out


def with_options(question: str, options: list[str]) -> str:
    """The question followed by ``(A) ...`` lines."""
    return question.strip() + "\n" + "\n".join(f"({chr(65 + i)}) {o}" for i, o in enumerate(options))


def _letter(label: Any, options: list[str]) -> str | None:
    """The option text a label names (a letter or the text itself)."""
    s = str(label).strip()
    m = re.fullmatch(r"\(?([A-Ha-h])\)?\.?", s)
    if m:
        idx = ord(m.group(1).upper()) - 65
        return options[idx] if idx < len(options) else None
    for o in options:
        if o.strip().lower() == s.lower():
            return o
    return None


# ------------------------------------------------------------------ loaders


def load_vstar(
    path: str | Path, image_dir: str | Path, *, seed: int = 0, shuffle: bool = True, limit: int | None = None
) -> list[Question]:
    """V* Bench in the lmms-eval layout; options shuffled with ``seed`` unless ``shuffle=False``."""
    store = ImageStore(image_dir, Path(path).parent if Path(path).is_file() else path)
    out: list[Question] = []
    for i, row in enumerate(iter_rows(path)):
        if limit is not None and len(out) >= limit:
            break
        text = row.get("text") or row.get("question")
        if not text:
            raise ConfigError(f"V* row {i} has no 'text' (or 'question') field; fields: {sorted(row)}")
        head, options = split_question(str(text))
        if not options and row.get("options"):
            options = [str(o) for o in row["options"]]
        if len(options) < 2:
            raise ConfigError(f"V* row {i}: could not find '(A) ... (B) ...' options in {str(text)[:80]!r}")
        label = row.get("label", row.get("answer", "A"))
        truth = _letter(label, options)
        if truth is None:
            raise ConfigError(f"V* row {i}: label {label!r} names none of the options {options}")
        qid = str(row.get("question_id", row.get("id", i)))
        shown = shuffle_options(options, qid, seed) if shuffle else options
        out.append(
            Question(
                id=qid,
                text=with_options(head, shown),
                contract=AnswerContract(kind="option", options=shown),
                family="vstar",
                subcategory=str(row.get("category", "")),
                ground_truth=truth,
                initial_image=store.image(row["image"]),
                metadata={"source_options": options},
            )
        )
    return out


def load_hrbench(path: str | Path, image_dir: str | Path, *, limit: int | None = None) -> list[Question]:
    """HR-Bench TSV (4K or 8K). Question ids are ``<index>``; cycles are kept in metadata."""
    store = ImageStore(image_dir)
    name = "hrbench8k" if "8k" in Path(path).name.lower() else "hrbench4k"
    out: list[Question] = []
    images: dict[str, Image] = {}
    for i, row in enumerate(iter_rows(path)):
        if limit is not None and len(out) >= limit:
            break
        missing = [k for k in ("question", "A", "B", "answer", "image") if k not in row]
        if missing:
            raise ConfigError(f"HR-Bench row {i} lacks columns {missing}; expected the hr_bench_*.tsv layout")
        options = [str(row[k]) for k in "ABCDEFGH" if row.get(k) not in (None, "", "nan")]
        truth = _letter(row["answer"], options)
        if truth is None:
            raise ConfigError(f"HR-Bench row {i}: answer {row['answer']!r} names none of {options}")
        raw_image = str(row["image"])
        key = hashlib.sha256(raw_image.encode()).hexdigest()
        if key not in images:  # cycles repeat the same image: decode it once
            images[key] = store.image(raw_image)
        img = images[key]
        out.append(
            Question(
                id=str(row.get("index", i)),
                text=with_options(str(row["question"]), options),
                contract=AnswerContract(kind="option", options=options),
                family=name,
                subcategory=str(row.get("category", "")),
                ground_truth=truth,
                initial_image=Image(path=img.path, width=img.width, height=img.height),
                metadata={"cycle": str(row.get("cycle_category", "0"))},
            )
        )
    return out


def load_pope(path: str | Path, image_dir: str | Path, *, limit: int | None = None) -> list[Question]:
    """POPE rows: yes/no questions about object presence."""
    store = ImageStore(image_dir, Path(path).parent if Path(path).is_file() else path)
    out: list[Question] = []
    for i, row in enumerate(iter_rows(path)):
        if limit is not None and len(out) >= limit:
            break
        answer = str(row.get("answer", "")).strip().lower()
        if answer not in ("yes", "no"):
            raise ConfigError(f"POPE row {i}: answer must be yes or no, got {row.get('answer')!r}")
        out.append(
            Question(
                id=str(row.get("question_id", i)),
                text=str(row["question"]),
                contract=AnswerContract(kind="yes_no"),
                family="pope",
                subcategory=str(row.get("category", "")),
                ground_truth=answer,
                initial_image=store.image(row["image"]),
            )
        )
    return out


def _expression(row: dict[str, Any]) -> str | None:
    for key in ("expression", "sentence", "referring_expression", "question", "answer"):
        v = row.get(key)
        if isinstance(v, list) and v:
            v = v[0]
        if isinstance(v, str) and v.strip():
            return v.strip()
    return None


def load_grounding(
    path: str | Path, image_dir: str | Path, *, bbox_format: str = "xywh", limit: int | None = None
) -> list[Question]:
    """RefCOCO-style rows; ground truth is ``[x1, y1, x2, y2]`` in original pixels."""
    if bbox_format not in ("xywh", "xyxy"):
        raise ConfigError(f"bbox_format must be 'xywh' (COCO) or 'xyxy', not {bbox_format!r}")
    store = ImageStore(image_dir, Path(path).parent if Path(path).is_file() else path)
    out: list[Question] = []
    for i, row in enumerate(iter_rows(path)):
        if limit is not None and len(out) >= limit:
            break
        expr = _expression(row)
        box = row.get("bbox")
        if expr is None or not isinstance(box, (list, tuple)) or len(box) != 4:
            raise ConfigError(f"grounding row {i} needs a referring expression and a four-number 'bbox'")
        fmt = row.get("bbox_format", bbox_format)
        x1, y1, a, b = (float(v) for v in box)
        truth = [x1, y1, x1 + a, y1 + b] if fmt == "xywh" else [x1, y1, a, b]
        out.append(
            Question(
                id=str(row.get("question_id", row.get("id", i))),
                text=f'Find "{expr}" in the image and give its bounding box.',
                contract=AnswerContract(kind="bbox"),
                family="grounding",
                subcategory=str(row.get("split", row.get("category", ""))),
                ground_truth=json.dumps(truth),
                initial_image=store.image(row["image"]),
                metadata={"expression": expr, "bbox": truth},
            )
        )
    return out


def load_synthetic(n: int, image_dir: str | Path, *, seed: int = 0, size: int = 2048) -> list[Question]:
    """``n`` synthetic questions (half need a zoom) from :mod:`eviseek.envs.image.synthetic`, for
    demos and tests."""
    from eviseek.envs.image.synthetic import SyntheticConfig, synthetic_questions

    store = ImageStore(image_dir)
    cfg = SyntheticConfig(width=size, height=size * 3 // 4)
    return [item.to_question(store.image(item.image)) for item in synthetic_questions(n, seed, cfg)]


def load_benchmark(
    spec: str,
    image_dir: str | Path,
    *,
    seed: int = 0,
    limit: int | None = None,
    shuffle_vstar: bool = True,
    prompt_style: str = "official",
) -> tuple[DatasetKind, list[Question]]:
    """Load ``NAME:PATH`` or ``synthetic:N[:WIDTH]``.

    NAME is vstar, hrbench4k, hrbench8k, pope, refcoco / refcoco+ / refcocog (grounding), or one
    of the reasoning benchmarks (mathvista, mathverse, mathvision, wemath, dynamath, logicvista;
    see :mod:`eviseek.autotool.reasoning`). ``shuffle_vstar=False`` keeps V*'s options in the
    source order (the correct one first, as DeepEyes' evaluation shows them).
    """
    name, sep, arg = spec.partition(":")
    kind = KINDS.get(name.lower()) if sep else None
    if kind is None:
        raise ConfigError(
            f"dataset {spec!r} must be NAME:PATH with NAME one of {', '.join(KINDS)} "
            "(e.g. vstar:/data/vstar_bench or synthetic:20)"
        )
    if kind == "synthetic":
        count, _, width = arg.partition(":")
        try:
            n, size = int(count), int(width or 2048)
        except ValueError:
            raise SettingError(f"synthetic:N[:WIDTH] needs whole numbers, got {arg!r}") from None
        if n < 1 or size < 64:
            raise SettingError("synthetic:N[:WIDTH] needs N >= 1 and WIDTH >= 64")
        return kind, load_synthetic(n if limit is None else min(n, limit), image_dir, seed=seed, size=size)
    if kind == "vstar":
        return kind, load_vstar(arg, image_dir, seed=seed, shuffle=shuffle_vstar, limit=limit)
    if kind == "reasoning":
        from eviseek.autotool.reasoning import load_reasoning

        style: Any = prompt_style
        return kind, load_reasoning(name.lower(), arg, image_dir, limit=limit, prompt_style=style)
    if kind == "reasonseg":
        from eviseek.autotool.reasonseg import load_reasonseg

        return kind, load_reasonseg(arg, limit=limit)
    if kind == "hrbench":
        return kind, load_hrbench(arg, image_dir, limit=limit)
    if kind == "pope":
        return kind, load_pope(arg, image_dir, limit=limit)
    return kind, load_grounding(arg, image_dir, limit=limit)
