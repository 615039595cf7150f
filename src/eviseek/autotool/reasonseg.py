"""ReasonSeg (LISA's reasoning-segmentation benchmark): loader, the paper's box score, and masks.

ReasonSeg is released as folders of images, each ``NAME.jpg`` next to ``NAME.json``:
``{"text": [query, ...], "is_sentence": bool, "shapes": [{"label": "target" | "ignore" |
"flag", "points": [[x, y], ...], "shape_type": "polygon"}, ...]}``. One question per image (its
first query; ``all_queries=True`` gives one per query).

**The paper's score** (AutoTool, section 4.1): RefCOCO and ReasonSeg "require the model to output
the bounding-box" of the referred object, correct when the IoU of the predicted and ground-truth
regions reaches 0.5. The ground truth here is the box around the target's polygons (every shape
that is neither ``ignore`` nor ``flag``), and the answer box is compared with it
(:func:`eviseek.autotool.scoring.score_episode_answer`); the run's ``accuracy`` is that share.

**Masks (ours, optional):** :func:`question_iou` and :func:`giou_ciou` give LISA's gIoU / cIoU
with the answer box's rectangle as the predicted mask (eviseek has no SAM, so this is a lower
bound on what a segmenter fed the same box would reach; the paper reports neither number). The
ground-truth mask follows LISA's own rules (its ``get_mask_from_json``): ``flag`` shapes are
skipped, shapes are painted from the largest area to the smallest (so a small target inside an
ignore region stays target, and a small ignore region inside a target is cut out of it), target
pixels are 1 and ``ignore`` pixels are left out of both intersection and union.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from eviseek.errors import ConfigError
from eviseek.types import AnswerContract, Question

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def _role(label: Any) -> str | None:
    """LISA's reading of a shape's label: ``flag`` shapes are dropped, ``ignore`` is ignored,
    every other label marks the target."""
    text = str(label or "").lower()
    if text == "flag":
        return None
    return "ignore" if "ignore" in text else "target"


def _shapes(shapes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The usable shapes in file order, as ``{"role": "target" | "ignore", "points": [...]}``."""
    out = []
    for s in shapes:
        role = _role(s.get("label"))
        points = s.get("points") or []
        if role is not None and len(points) >= 3:
            out.append({"role": role, "points": [[float(x), float(y)] for x, y in points]})
    return out


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
        shapes = _shapes(meta.get("shapes") or [])
        target = [sh["points"] for sh in shapes if sh["role"] == "target"]
        ignore = [sh["points"] for sh in shapes if sh["role"] == "ignore"]
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
                        "shapes": shapes,
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


def lisa_label_map(size: Sequence[int], shapes: Sequence[dict[str, Any]]) -> Any:
    """LISA's ground-truth label map, ``(height, width)`` uint8: 0 background, 1 target, 255 ignore.

    Shapes (``{"role", "points"}`` as the loader stores them) are painted from the largest pixel
    area to the smallest, as LISA's ``get_mask_from_json`` does, so later (smaller) shapes win
    where they overlap.
    """
    import numpy as np

    w, h = int(size[0]), int(size[1])
    masks = [polygon_mask(size, [sh["points"]]) for sh in shapes]
    areas = [int(m.sum()) for m in masks]
    # Descending area; among equal areas the later shape first (LISA reverses an ascending argsort).
    order = sorted(range(len(masks)), key=lambda k: (areas[k], k), reverse=True)
    label = np.zeros((h, w), dtype=np.uint8)
    for k in order:
        label[masks[k]] = 255 if shapes[k]["role"] == "ignore" else 1
    return label


def _question_shapes(question: Question) -> list[dict[str, Any]]:
    shapes = question.metadata.get("shapes")
    if shapes is not None:
        return list(shapes)
    # Questions saved before the loader kept the shapes: targets first, then ignore regions.
    return [{"role": "target", "points": p} for p in question.metadata.get("target_polygons") or []] + [
        {"role": "ignore", "points": p} for p in question.metadata.get("ignore_polygons") or []
    ]


def question_iou(question: Question, box: Sequence[float] | None) -> tuple[int, int]:
    """``(intersection, union)`` of an answer box's rectangle with the question's LISA mask (ours:
    the box stands in for a segmenter's mask), leaving out the ignore pixels."""
    size = question.metadata["image_size"]
    label = lisa_label_map(size, _question_shapes(question))
    return intersection_union(box_mask(size, box), label == 1, label == 255)


def giou_ciou(pairs: Sequence[tuple[int, int]]) -> dict[str, float]:
    """LISA's gIoU (mean of per-question IoU; empty vs empty is 1) and cIoU (sum I / sum U), from
    box rectangles as masks: ours, so the keys say so (``giou_ours``, ``ciou_ours``)."""
    if not pairs:
        return {"giou_ours": 0.0, "ciou_ours": 0.0}
    ious = [i / u if u else 1.0 for i, u in pairs]
    total_u = sum(u for _, u in pairs)
    return {
        "giou_ours": sum(ious) / len(ious),
        "ciou_ours": sum(i for i, _ in pairs) / total_u if total_u else 1.0,
    }
