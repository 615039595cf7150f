"""Synthetic high-resolution zoom questions, drawn deterministically from a seed.

Each image holds one large coloured panel (evidence for a *global* question: which half is it
in?) and one small lettered tag (evidence for a *zoom* question: which letter is printed on it?),
among medium-sized distractor shapes. Both the AutoTool benchmark loader (``synthetic:N``) and the
training data (:mod:`eviseek.train.data`) draw from here, so this module sits below both of them.
"""

from __future__ import annotations

import io
import string
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from eviseek.types import AnswerContract, Image, Question
from eviseek.types.png import encode_png

_COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (210, 40, 40),
    "green": (40, 160, 60),
    "blue": (40, 80, 210),
    "yellow": (230, 200, 40),
    "purple": (140, 60, 170),
    "orange": (240, 130, 30),
}
_SHAPES = ("square", "circle", "triangle")


class SyntheticConfig(BaseModel):
    """Size and difficulty of synthetic images."""

    width: int = Field(default=2048, ge=64)
    height: int = Field(default=1536, ge=64)
    target_size: int = Field(default=32, ge=8)
    """Side in pixels of the small target (the thing only a zoom shows clearly)."""
    distractors: int = Field(default=12, ge=0)
    zoom_share: float = Field(default=0.5, ge=0.0, le=1.0)
    """Share of rows whose question needs zooming."""


class SyntheticQuestion(BaseModel):
    """One drawn question: the PNG, the question text with its options, the truth and the boxes."""

    id: str
    question: str
    """The question text followed by its lettered options."""
    image: bytes
    """The image, PNG-encoded."""
    ground_truth: str
    options: list[str]
    needs_zoom: bool
    target_boxes: list[list[float]]
    """The evidence's box ``[x1, y1, x2, y2]`` in the image's pixels."""
    extra_info: dict[str, Any] = Field(default_factory=dict)
    """The seed and the kind (``zoom`` or ``global``)."""

    def to_question(self, image: Image | None = None) -> Question:
        """The item as an eviseek :class:`Question` (``image``: the initial image, decoded from
        ``self.image`` when not given)."""
        if image is None:
            from PIL import Image as PILImage

            image = Image.from_pil(PILImage.open(io.BytesIO(self.image)))
        return Question(
            id=self.id,
            text=self.question,
            contract=AnswerContract(kind="option", options=self.options),
            family="synthetic",
            subcategory="zoom" if self.needs_zoom else "global",
            ground_truth=self.ground_truth,
            initial_image=image,
            metadata={"needs_zoom": self.needs_zoom, "target_boxes": self.target_boxes, **self.extra_info},
        )


def format_options(question: str, options: list[str]) -> str:
    """``question`` followed by its options as ``(A) ... (B) ...`` lines."""
    return question.strip() + "\n" + "\n".join(f"({chr(65 + i)}) {o}" for i, o in enumerate(options))


def _draw_shape(draw: Any, shape: str, box: tuple[int, int, int, int], fill: tuple[int, int, int]) -> None:
    x1, y1, x2, y2 = box
    if shape == "square":
        draw.rectangle(box, fill=fill)
    elif shape == "circle":
        draw.ellipse(box, fill=fill)
    else:
        draw.polygon([((x1 + x2) // 2, y1), (x2, y2), (x1, y2)], fill=fill)


def _free_box(rng: np.random.Generator, w: int, h: int, size: int, taken: list[tuple[int, ...]]) -> tuple:
    for _ in range(200):
        x = int(rng.integers(0, max(1, w - size)))
        y = int(rng.integers(0, max(1, h - size)))
        box = (x, y, x + size, y + size)
        if all(box[2] < t[0] or box[0] > t[2] or box[3] < t[1] or box[1] > t[3] for t in taken):
            return box
    return box  # crowded: accept an overlap rather than loop forever


# Long because it draws one question's scene as a fixed sequence of random draws, then writes the
# text and metadata from them. The draw order is part of what a seed means (reordering changes
# every generated question), so the steps stay in one sequence that reads top to bottom.
def synthetic_question(
    seed: int, config: SyntheticConfig | None = None, *, needs_zoom: bool | None = None
) -> SyntheticQuestion:
    """One synthetic high-resolution question, fully determined by ``seed``.

    Zoom questions ask for the letter printed on a small tag (a few pixels tall once the
    image is shown downscaled); global questions ask which half of the image holds the large
    coloured panel. Options are shuffled with the seed.
    """
    from PIL import Image as PILImage
    from PIL import ImageDraw, ImageFont

    cfg = config or SyntheticConfig()
    rng = np.random.default_rng(seed)
    if needs_zoom is None:
        needs_zoom = bool(rng.random() < cfg.zoom_share)
    w, h = cfg.width, cfg.height
    # Textured background: low-frequency noise so the image is not trivially compressible.
    base = rng.integers(150, 210, size=(h // 32 + 1, w // 32 + 1, 3), dtype=np.uint8)
    bg = PILImage.fromarray(base).resize((w, h), PILImage.Resampling.BILINEAR)
    draw = ImageDraw.Draw(bg)
    taken: list[tuple[int, ...]] = []

    # A large panel on one side: the evidence for the global question.
    panel_colour = str(rng.choice(list(_COLOURS)))
    side = "left" if rng.random() < 0.5 else "right"
    pw, ph = w // 4, h // 3
    px = (
        int(rng.integers(w // 16, w // 2 - pw - w // 16))
        if side == "left"
        else int(rng.integers(w // 2 + w // 16, w - pw - w // 16))
    )
    py = int(rng.integers(h // 8, h - ph - h // 8))
    panel = (px, py, px + pw, py + ph)
    draw.rectangle(panel, fill=_COLOURS[panel_colour])
    taken.append(panel)

    # Distractor shapes, medium-sized.
    for _ in range(cfg.distractors):
        size = int(rng.integers(cfg.target_size * 2, cfg.target_size * 4))
        box = _free_box(rng, w, h, size, taken)
        taken.append(box)
        colour = str(rng.choice([c for c in _COLOURS if c != panel_colour]))
        _draw_shape(draw, str(rng.choice(_SHAPES)), box, _COLOURS[colour])

    # The small tag with a letter: the evidence for the zoom question.
    letter = str(rng.choice(list(string.ascii_uppercase)))
    ts = cfg.target_size
    tag = _free_box(rng, w, h, ts, taken)
    draw.rectangle(tag, fill=(250, 250, 250), outline=(20, 20, 20))
    font = ImageFont.load_default(size=max(8, int(ts * 0.8)))
    draw.text(
        ((tag[0] + tag[2]) / 2, (tag[1] + tag[3]) / 2), letter, fill=(10, 10, 10), font=font, anchor="mm"
    )

    if needs_zoom:
        wrong = [c for c in string.ascii_uppercase if c != letter]
        picks = [str(x) for x in rng.choice(wrong, size=3, replace=False)]
        options = [letter, *picks]
        question_head = "Which letter is printed on the small white tag?"
        truth = letter
        boxes = [[float(v) for v in tag]]
    else:
        options = ["left", "right"]
        question_head = f"Is the large {panel_colour} rectangle in the left or the right half of the image?"
        truth = side
        boxes = [[float(v) for v in panel]]
    order = rng.permutation(len(options))
    options = [options[int(i)] for i in order]
    return SyntheticQuestion(
        id=f"synthetic-{seed}",
        question=format_options(question_head, options),
        image=encode_png(np.asarray(bg.convert("RGB"))),  # about half Pillow's time at this size
        ground_truth=truth,
        options=options,
        needs_zoom=needs_zoom,
        target_boxes=boxes,
        extra_info={"seed": seed, "kind": "zoom" if needs_zoom else "global"},
    )


def synthetic_questions(
    n: int, seed: int = 0, config: SyntheticConfig | None = None
) -> list[SyntheticQuestion]:
    """``n`` synthetic questions; question ``i`` uses seed ``seed * 100003 + i`` (stable under slicing)."""
    if n < 0:
        raise ValueError("n must be non-negative")
    return [synthetic_question(seed * 100_003 + i, config) for i in range(n)]
