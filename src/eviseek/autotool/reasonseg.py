"""ReasonSeg (LISA's reasoning-segmentation benchmark): loader and its gIoU / cIoU.

ReasonSeg is released as folders of images, each ``NAME.jpg`` next to ``NAME.json``:
``{"text": [query, ...], "is_sentence": bool, "shapes": [{"label": "target" | "ignore",
"points": [[x, y], ...], "shape_type": "polygon"}, ...]}``. One question per image (its first
query; ``all_queries=True`` gives one per query). The ground truth mask is the union of the
``target`` polygons; pixels of ``ignore`` polygons count for neither intersection nor union.

The paper reports ReasonSeg's two numbers (Table 2):

* **gIoU** - the mean over questions of each question's IoU (a question with an empty ground
  truth and an empty prediction counts 1);
* **cIoU** - cumulative: the sum of all intersections over the sum of all unions.

The paper's models answer with a box and points that SAM turns into a mask. eviseek has no SAM:
an answer here is a box, and its mask is the box's rectangle (ours). That is a lower bound on
what a segmenter fed the same box would reach, so numbers are not comparable with the paper's.
Questions are asked like the grounding benchmarks (the Seg-Zero-style grounding prompt, with
the query as the expression).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from eviseek.errors import ConfigError
from eviseek.types import AnswerContract, Question

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def _polygons(shapes: Iterable[dict[str, Any]], label: str) -> list[list[list[float]]]:
    return [
        [[float(x), float(y)] for x, y in s.get("points", [])]
        for s in shapes
        if s.get("label") == label and len(s.get("points", [])) >= 3
    ]


def load_reasonseg(
    path: str | Path, *, limit: int | None = None, all_queries: bool = False
) -> list[Question]:
    """ReasonSeg questions from a split folder (``val``, ``test``...) of image + JSON pairs."""
    from eviseek.types import Image

    root = Path(path)
    if not root.is_dir():
        raise ConfigError(f"reasonseg: {root} is not a folder of NAME.jpg + NAME.json pairs")
    out: list[Question] = []
    for meta_path in sorted(root.glob("*.json")):
        if limit is not None and len(out) >= limit:
            break
        image_path = next(
            (meta_path.with_suffix(s) for s in IMAGE_SUFFIXES if meta_path.with_suffix(s).is_file()), None
        )
        if image_path is None:
            raise ConfigError(f"reasonseg: {meta_path.name} has no image next to it (.jpg, .jpeg or .png)")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ConfigError(f"reasonseg: cannot read {meta_path}: {exc}") from exc
        queries = [str(t) for t in meta.get("text") or [] if str(t).strip()]
        if not queries:
            raise ConfigError(f"reasonseg: {meta_path.name} has no query in 'text'")
        target = _polygons(meta.get("shapes") or [], "target")
        ignore = _polygons(meta.get("shapes") or [], "ignore")
        image = Image.open(image_path)
        xs = [p[0] for poly in target for p in poly]
        ys = [p[1] for poly in target for p in poly]
        box = [min(xs), min(ys), max(xs), max(ys)] if xs else [0.0, 0.0, 0.0, 0.0]
        for k, query in enumerate(queries if all_queries else queries[:1]):
            out.append(
                Question(
                    id=f"reasonseg-{meta_path.stem}" + (f"-{k}" if all_queries else ""),
                    text=query,
                    contract=AnswerContract(kind="bbox"),
                    family="reasonseg",
                    subcategory="sentence" if meta.get("is_sentence") else "phrase",
                    ground_truth=json.dumps([round(v, 1) for v in box]),
                    initial_image=image,
                    metadata={
                        "benchmark": "reasonseg",
                        "expression": query,
                        "target_polygons": target,
                        "ignore_polygons": ignore,
                        "image_size": [image.width, image.height],
                    },
                )
            )
    if not out:
        raise ConfigError(f"reasonseg: no NAME.json files in {root}")
    return out


def polygon_mask(size: Sequence[int], polygons: Sequence[Sequence[Sequence[float]]]) -> Any:
    """A boolean ``(height, width)`` mask: the union of the filled polygons."""
    import numpy as np
    from PIL import Image as PILImage
    from PIL import ImageDraw

    w, h = int(size[0]), int(size[1])
    canvas = PILImage.new("1", (w, h), 0)
    draw = ImageDraw.Draw(canvas)
    for poly in polygons:
        draw.polygon([(float(x), float(y)) for x, y in poly], fill=1, outline=1)
    return np.asarray(canvas, dtype=bool)


def box_mask(size: Sequence[int], box: Sequence[float] | None) -> Any:
    """The mask of a box ``[x1, y1, x2, y2]`` in pixels (empty for ``None``): ours, standing in for SAM."""
    import numpy as np

    w, h = int(size[0]), int(size[1])
    mask = np.zeros((h, w), dtype=bool)
    if box is not None:
        x1, y1, x2, y2 = (round(v) for v in box)
        x1, x2 = sorted((max(0, min(w, x1)), max(0, min(w, x2))))
        y1, y2 = sorted((max(0, min(h, y1)), max(0, min(h, y2))))
        mask[y1:y2, x1:x2] = True
    return mask


def intersection_union(pred: Any, truth: Any, ignore: Any | None = None) -> tuple[int, int]:
    """Pixel counts of intersection and union, leaving out ``ignore`` pixels."""
    keep = ~ignore if ignore is not None else True
    inter = int((pred & truth & keep).sum())
    union = int(((pred | truth) & keep).sum())
    return inter, union


def question_iou(question: Question, box: Sequence[float] | None) -> tuple[int, int]:
    """``(intersection, union)`` of an answer box's mask with a ReasonSeg question's ground truth."""
    size = question.metadata["image_size"]
    truth = polygon_mask(size, question.metadata.get("target_polygons") or [])
    ignored = question.metadata.get("ignore_polygons") or []
    ignore = polygon_mask(size, ignored) if ignored else None
    return intersection_union(box_mask(size, box), truth, ignore)


def giou_ciou(pairs: Sequence[tuple[int, int]]) -> dict[str, float]:
    """ReasonSeg's gIoU (mean of per-question IoU; empty vs empty is 1) and cIoU (sum I / sum U)."""
    if not pairs:
        return {"giou": 0.0, "ciou": 0.0}
    ious = [i / u if u else 1.0 for i, u in pairs]
    total_u = sum(u for _, u in pairs)
    return {"giou": sum(ious) / len(ious), "ciou": sum(i for i, _ in pairs) / total_u if total_u else 1.0}
